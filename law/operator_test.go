package law

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// operatorCase is a law and a set of feature pairs for the operator.
type operatorCase struct {
	d     int
	icl   float64
	k     int
	noise float64
	l     Lengths
	pairs string // "full", "reduced" or "subset"
}

func (c operatorCase) String() string {
	return fmt.Sprintf("D%d c=%g K=%d σ²=%g %+v %s", c.d, c.icl, c.k, c.noise, c.l, c.pairs)
}

func operatorPairs(kind string, d int, seed uint64) [][2]int {
	var out [][2]int
	rng := rand.New(rand.NewPCG(seed, 5))
	for a := 0; a <= d; a++ {
		for b := a; b <= d; b++ {
			switch {
			case kind == "reduced" && b != d:
			case kind == "subset" && rng.IntN(3) == 0:
			case kind == "subset" && rng.IntN(2) == 0:
				out = append(out, [2]int{b, a}) // either order of a pair
			default:
				out = append(out, [2]int{a, b})
			}
		}
	}
	return out
}

func operatorCases() []operatorCase {
	var out []operatorCase
	// Every combination at D = 3, 4; then one per dimension up to 12, the
	// task law cycling through c ∈ {0, 0.5, 1} and K ∈ {1, 4}.
	for _, d := range []int{3, 4} {
		for _, icl := range []float64{0, 0.5, 1} {
			for _, k := range []int{1, 4} {
				for _, pk := range []string{"full", "reduced", "subset"} {
					out = append(out, operatorCase{d, icl, k, 0.3, Lengths{NTPMax: 6}, pk})
				}
			}
		}
	}
	for d := 5; d <= 12; d++ {
		icl := []float64{0, 0.5, 1}[d%3]
		k := []int{1, 4}[d%2]
		out = append(out, operatorCase{d, icl, k, 0.1 * float64(d%4), Lengths{N: d + 2}, []string{"full", "subset"}[d%2]})
	}
	// Known only through ν: the reduced features alone.
	out = append(out, operatorCase{6, 0.5, 4, 0.2, Lengths{Nu: 0.3}, "reduced"})
	return out
}

func operatorData(t testing.TB, c operatorCase, seed uint64) *Data {
	t.Helper()
	data, err := NewData(PowerLaw(c.d, 1, 1), RandomRotation(c.d, seed), c.l)
	if err != nil {
		t.Fatal(err)
	}
	data, err = data.WithTasks(Tasks{ICL: c.icl, Fixed: FixedTasks(c.d, c.k, seed), Cov: testCov(c.d, seed),
		TestCov: testCov(c.d, seed+1), Noise: c.noise})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestOperatorMatchesMoments checks the matrix-free operator against the
// dense moments (Data.Moments, the oracle) on every population: ZZ·c for
// random c, YZ, YY, the loss, the residual and ZZ's diagonal, to 1e-12
// relative.
func TestOperatorMatchesMoments(t *testing.T) {
	const tol = 1e-12
	worst := 0.0
	for i, c := range operatorCases() {
		seed := uint64(100 + i)
		data := operatorData(t, c, seed)
		pairs := operatorPairs(c.pairs, c.d, seed)
		for _, set := range []Sequences{Training, InContextTest, InWeightTest, InDistributionTest} {
			name := fmt.Sprintf("%v %v", c, set)
			dense, err := data.Moments(pairs, set, true)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			op, err := data.Operator(pairs, set)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			f := dense.F
			if op.Features() != f {
				t.Fatalf("%s: F = %d, want %d", name, op.Features(), f)
			}
			rng := rand.New(rand.NewPCG(seed, uint64(set)))
			cf := make([]float64, f)
			for i := range cf {
				cf[i] = rng.NormFloat64()
			}
			got, want := make([]float64, f), make([]float64, f)
			op.MulVec(got, cf)
			dense.MulVec(want, cf)
			diag := make([]float64, f)
			for k := range diag {
				diag[k] = dense.ZZ[k*f+k]
			}
			rg, rw := make([]float64, f), make([]float64, f)
			lg, lw := op.Residual(rg, cf), dense.Residual(rw, cf)
			for what, e := range map[string]float64{
				"ZZ·c":     relErr(got, want),
				"YZ":       relErr(op.YZ(), dense.YZ),
				"YY":       math.Abs(op.YY()-dense.YY) / dense.YY,
				"diagonal": relErr(op.Diagonal(), diag),
				"loss":     math.Abs(lg-lw) / math.Abs(lw),
				"residual": relErr(rg, rw),
			} {
				worst = max(worst, e)
				if !(e <= tol) {
					t.Errorf("%s: %s differs from the dense moments by %.3g relative", name, what, e)
				}
			}
		}
	}
	t.Logf("largest relative difference from the dense moments: %.3g", worst)
}

// TestOperatorMinimum checks the least loss by conjugate gradients
// against the dense one (Cholesky, or the pseudo-inverse for the singular
// c = 0, K = 1).
func TestOperatorMinimum(t *testing.T) {
	for i, c := range []operatorCase{
		{5, 0.5, 4, 0.1, Lengths{N: 7}, "full"},
		{6, 0, 1, 0, Lengths{NTPMax: 9}, "full"},
		{8, 0.5, 4, 0, Lengths{N: 10}, "full"},
		{7, 1, 4, 0.3, Lengths{N: 9}, "reduced"},
	} {
		data := operatorData(t, c, uint64(7+i))
		pairs := operatorPairs(c.pairs, c.d, 1)
		dense, err := data.Moments(pairs, Training, true)
		if err != nil {
			t.Fatal(err)
		}
		op, err := data.Operator(pairs, Training)
		if err != nil {
			t.Fatal(err)
		}
		lw, _, err := dense.Minimum()
		if err != nil {
			t.Fatal(err)
		}
		lg, _, st, err := op.MinimumCG(CGSettings{})
		if err != nil {
			t.Fatal(err)
		}
		// The loss's error is quadratic in the minimizer's: 1e-12
		// relative to the loss removed, YY − L*.
		if e := math.Abs(lg-lw) / (dense.YY - lw); !(e <= 1e-12) {
			t.Errorf("%v: least loss %.17g by CG (%d iterations, residual %.2g), %.17g dense: %.3g relative", c, lg, st.Iter, st.Residual, lw, e)
		}
	}
}

// TestOperatorShared checks that MulVec shared by several goroutines
// gives the bits of one, on the law and pair sets of operatorCases (and
// at D = 33, where the processors share it by default).
func TestOperatorShared(t *testing.T) {
	cases := append(operatorCases(), operatorCase{33, 0.5, 4, 0.1, Lengths{N: 40}, "full"})
	for i, c := range cases {
		seed := uint64(300 + i)
		data := operatorData(t, c, seed)
		op, err := data.Operator(operatorPairs(c.pairs, c.d, seed), Training)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 9))
		cf := make([]float64, op.Features())
		for k := range cf {
			cf[k] = rng.NormFloat64()
		}
		op.share(1)
		want := make([]float64, len(cf))
		op.MulVec(want, cf)
		for _, w := range []int{2, 3, 5} {
			op.share(w)
			got := make([]float64, len(cf))
			op.MulVec(got, cf)
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("%v, %d goroutines: entry %d is %v, want %v (one goroutine)", c, w, k, got[k], want[k])
				}
			}
		}
	}
}
