package ode_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/ode/odetest"
)

// wpPoint is one run of a work–precision diagram: its cost (right-hand side
// plus Jacobian evaluations) and its error.
type wpPoint struct {
	cost int
	err  float64
}

// costToReach returns the smallest cost of a run with error ≤ e, or −1.
func costToReach(pts []wpPoint, e float64) int {
	best := -1
	for _, p := range pts {
		if p.err <= e && (best < 0 || p.cost < best) {
			best = p.cost
		}
	}
	return best
}

// scipyStiff runs testdata/scipy_stiff.py and returns its points by problem
// and method.
func scipyStiff(t testing.TB) map[string]map[string][]wpPoint {
	py := "/usr/bin/python3" // Debian's, with python3-scipy
	if err := exec.Command(py, "-c", "import scipy.integrate").Run(); err != nil {
		t.Skipf("skipped: Debian's python3-scipy is not installed (apt-get install python3-scipy): %v", err)
	}
	out, err := exec.Command(py, "testdata/scipy_stiff.py").Output()
	if err != nil {
		t.Fatalf("scipy_stiff.py: %v", err)
	}
	pts := map[string]map[string][]wpPoint{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 6 {
			continue // a failed run
		}
		nfev, _ := strconv.Atoi(f[3])
		njev, _ := strconv.Atoi(f[4])
		e, _ := strconv.ParseFloat(f[5], 64)
		if pts[f[0]] == nil {
			pts[f[0]] = map[string][]wpPoint{}
		}
		pts[f[0]][f[1]] = append(pts[f[0]][f[1]], wpPoint{nfev + njev, e})
	}
	return pts
}

// wpRTols are the relative tolerances of a work–precision run:
// 10^−3, 10^−3.5, …, 10^−10, as in testdata/scipy_stiff.py.
func wpRTols() []float64 {
	var r []float64
	for k := 6; k <= 20; k++ {
		r = append(r, math.Pow(10, -float64(k)/2))
	}
	return r
}

// BenchmarkWorkPrecisionStiff compares Rodas5P and Radau5 with scipy's
// Radau, BDF and LSODA (analytic Jacobians) on Robertson and Van der Pol
// (ε = 10⁻⁶), at the same tolerances (rtol = 10^−3 … 10^−10 in half
// decades, atol = rtol·scale) and with the same error measure as
// testdata/scipy_stiff.py, which it runs. For each error level it logs the
// right-hand-side plus Jacobian evaluations that each of our methods and the
// cheapest scipy method need to reach it, and reports their ratio at 10⁻⁶
// (cost-ratio-1e-6: ours / best scipy).
//
//	go test ./ode -run XXX -bench WorkPrecisionStiff -benchtime 1x -v
func BenchmarkWorkPrecisionStiff(b *testing.B) {
	ref := scipyStiff(b)
	scales := map[string][]float64{"Robertson": {1e-6, 1e-12, 1e-6}, "VanDerPol": {1, 1}}
	for _, p := range []odetest.Problem{odetest.Robertson(), odetest.VanDerPol()} {
		for _, m := range []ode.Method{ode.Radau5, ode.Rodas5P} {
			b.Run(p.Name+"/"+m.Name(), func(b *testing.B) {
				b.ReportAllocs()
				var ours []wpPoint
				for i := 0; i < b.N; i++ {
					ours = ours[:0]
					for _, rtol := range wpRTols() {
						atol := make([]float64, len(p.Y0))
						for i, s := range scales[p.Name] {
							atol[i] = rtol * s
						}
						res := solve(b, p.Problem, ode.Settings{Method: m, RTol: rtol, ATolVec: atol, MaxSteps: 1e6})
						ours = append(ours, wpPoint{res.Stats.FuncEvals + res.Stats.JacEvals, relErr(res.Y, p.Want, atol)})
					}
				}
				b.Logf("%s, %s (f + J evaluations to reach each error):\n%s", p.Name, m.Name(), wpTable(b, m.Name(), ours, ref[p.Name]))
			})
		}
	}
}

// wpTable compares our points with the cheapest scipy method's at each
// error level and reports the cost ratio at 10⁻⁶.
func wpTable(b *testing.B, name string, ours []wpPoint, ref map[string][]wpPoint) string {
	var table strings.Builder
	for _, e := range []float64{1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9} {
		best, bestName := -1, ""
		for method, pts := range ref {
			if c := costToReach(pts, e); c >= 0 && (best < 0 || c < best) {
				best, bestName = c, method
			}
		}
		mine := costToReach(ours, e)
		fmt.Fprintf(&table, "  error ≤ %g: %s %d, best scipy %s %d\n", e, name, mine, bestName, best)
		if e == 1e-6 && best > 0 && mine > 0 {
			b.ReportMetric(float64(mine)/float64(best), "cost-ratio-1e-6")
		}
	}
	return table.String()
}
