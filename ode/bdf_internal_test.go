package ode

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGMRES: on a nonsymmetric system of size 5 with a known solution,
// GMRES with maxl = 5 is exact (the Krylov space is the whole space), with
// weights, with and without a preconditioner; with the exact inverse as
// preconditioner it converges in one iteration; with maxl = 2 on a
// system whose residual it cannot reduce to the tolerance it reports so.
func TestGMRES(t *testing.T) {
	const n = 5
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]float64, n*n)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for i := 0; i < n; i++ {
		a[i*n+i] += 4
	}
	want := []float64{1, -2, 3, 0.5, -1}
	b := make([]float64, n)
	matVec(b, a, want)
	apply := func(dst, v []float64) { matVec(dst, a, v) }
	w := []float64{1, 10, 0.1, 2, 5}
	// The exact inverse by Gauss–Jordan on the columns, for P = A.
	inv := inverse(a, n)
	exact := func(z, r []float64) { matVec(z, inv, r) }
	diag := func(z, r []float64) {
		for i := range z {
			z[i] = r[i] / a[i*n+i]
		}
	}
	for _, tc := range []struct {
		name   string
		psolve func(z, r []float64)
		iters  int // the most iterations allowed
	}{{"none", nil, 5}, {"diagonal", diag, 5}, {"exact", exact, 1}} {
		x := make([]float64, n)
		iters, out := newGMRES(n, 5).solve(x, b, wnorm(b, w), w, 1e-12, apply, tc.psolve)
		if out != gmresConverged || iters > tc.iters || maxDiff(x, want) > 1e-10 {
			t.Errorf("%s: %d iterations, outcome %d, x = %v, want %v", tc.name, iters, out, x, want)
		}
	}
	x := make([]float64, n)
	if _, out := newGMRES(n, 2).solve(x, b, wnorm(b, w), w, 1e-12, apply, nil); out == gmresConverged {
		t.Errorf("maxl = 2: converged on a 5 × 5 system to 1e-12")
	}
}

func matVec(dst, a, v []float64) {
	n := len(v)
	for i := range dst {
		var s float64
		for j := 0; j < n; j++ {
			s += a[i*n+j] * v[j]
		}
		dst[i] = s
	}
}

func inverse(a []float64, n int) []float64 {
	m := append([]float64(nil), a...)
	inv := make([]float64, n*n)
	for i := 0; i < n; i++ {
		inv[i*n+i] = 1
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r*n+c]) > math.Abs(m[p*n+c]) {
				p = r
			}
		}
		for j := 0; j < n; j++ {
			m[c*n+j], m[p*n+j] = m[p*n+j], m[c*n+j]
			inv[c*n+j], inv[p*n+j] = inv[p*n+j], inv[c*n+j]
		}
		d := m[c*n+c]
		for j := 0; j < n; j++ {
			m[c*n+j] /= d
			inv[c*n+j] /= d
		}
		for r := 0; r < n; r++ {
			if r != c {
				f := m[r*n+c]
				for j := 0; j < n; j++ {
					m[r*n+j] -= f * m[c*n+j]
					inv[r*n+j] -= f * inv[c*n+j]
				}
			}
		}
	}
	return inv
}

func maxDiff(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// scalarPrecond is the exact Newton matrix 1 + 2γy of y' = −y²: BDF then
// runs Newton's method proper (GMRES with the exact Jacobian–vector
// product), which converges to the tight tolerances of the order test.
type scalarPrecond struct{ gamma, y float64 }

func (p *scalarPrecond) Setup(_ float64, y []float64, gamma float64, _ bool) (bool, error) {
	p.gamma, p.y = gamma, y[0]
	return true, nil
}

func (p *scalarPrecond) Solve(z, r []float64) { z[0] = r[0] / (1 + 2*p.gamma*p.y) }

// TestBDFOrder measures the order of BDF1–BDF5 with fixed steps and fixed
// order on y' = −y², y(0) = 1 over [0, 2] (y = 1/(1+t)), started from
// the exact history z_j = (−h)^j/(1+t)^{j+1}: the error at t = 2 must fall
// by 2^q when the step halves (the fixed-leading-coefficient form with
// constant steps is the classical BDF of order q).
func TestBDFOrder(t *testing.T) {
	p := Problem{Func: func(_ float64, y, dy []float64) { dy[0] = -y[0] * y[0] }, T0: 0, T1: 2, Y0: []float64{1},
		Precond: &scalarPrecond{}}
	want := 1.0 / 3
	for q := 1; q <= bdfMaxOrder; q++ {
		var errs []float64
		for _, h := range []float64{0.02, 0.01, 0.005} {
			in := NewIntegrator(BDF, 1)
			in.st.(*bdfStepper).startHistory = func(z [bdfMaxOrder + 1][]float64, h float64) int {
				for j := 0; j <= q; j++ {
					z[j][0] = math.Pow(-h, float64(j))
				}
				return q
			}
			res, err := in.Solve(context.Background(), p, Settings{Method: BDF, FixedStep: h, RTol: 1e-13, ATol: 1e-15})
			if err != nil {
				t.Fatal(err)
			}
			errs = append(errs, math.Abs(res.Y[0]-want))
		}
		p1, p2 := math.Log2(errs[0]/errs[1]), math.Log2(errs[1]/errs[2])
		if math.Abs(p2-float64(q)) > 0.15 {
			t.Errorf("BDF%d: observed orders %.2f, %.2f (errors %.3g)", q, p1, p2, errs)
		}
		t.Logf("BDF%d: observed orders %.2f, %.2f (errors %.3g)", q, p1, p2, errs)
	}
}
