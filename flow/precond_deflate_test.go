package flow

import (
	"context"
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/ode"
)

// TestDeflatePrecond: on the merged full layer under a task law, the
// Ritz values the deflation keeps are the largest eigenvalues of −J (the
// dense Jacobian, Linearization.Dense) and its Ritz vectors orthonormal,
// and it has the structured deflation of the key–query block (Solve's
// algebra is deflation.TestPrecond's).
func TestDeflatePrecond(t *testing.T) {
	s := newSys(t, taskLawData(t, 4, 0.5, 2, 5), Model{Kind: Merged, H: 3, Tau: 1.5, Layer: FullLayer})
	y := randomState(s, 0.5, 4)
	n := s.Len()
	jac := make([]float64, n*n)
	l := s.NewLinearization()
	l.At(y)
	l.Dense(jac)
	for i := range jac {
		jac[i] = -jac[i]
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(n, jac), false) {
		t.Fatal("eigendecomposition failed")
	}
	want := eig.Values(nil)
	sort.Sort(sort.Reverse(sort.Float64Slice(want)))

	p := newDeflation(s)
	if _, err := p.Setup(0, y, 0.7, false); err != nil {
		t.Fatal(err)
	}
	theta, vecs := p.Ritz()
	if len(theta) < 5 {
		t.Fatalf("kept %d Ritz pairs, want at least 5 of n = %d", len(theta), n)
	}
	for i := 0; i < 5; i++ {
		if math.Abs(theta[i]-want[i]) > 1e-9*want[0] {
			t.Errorf("Ritz value %d: %.15g, eigenvalue of −J %.15g", i, theta[i], want[i])
		}
	}
	for i := range vecs {
		for j := 0; j <= i; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if g := impl.Ddot(n, vecs[i], 1, vecs[j], 1); math.Abs(g-want) > 1e-10 {
				t.Fatalf("Ritz vectors %d, %d: inner product %g, want %g", i, j, g, want)
			}
		}
	}
	if p.Kron() == nil {
		t.Error("the merged full layer's deflation has no structured deflation")
	}
}

// TestBDFNewtonKrylovFullLayer: BDF with GMRES preconditioned by
// the deflation (the full layer's path above ode.MaxDenseDim) follows the
// same flow as BDF with the dense factorization, here at D = 5 where both
// run: the final states agree to the tolerances' order.
func TestBDFNewtonKrylovFullLayer(t *testing.T) {
	for _, m := range []Model{
		{Kind: Merged, H: 3, Tau: 1, Layer: FullLayer},
		{Kind: Separate, H: 3, R: 2, Tau: 1, Layer: FullLayer},
	} {
		s := newSys(t, taskLawData(t, 5, 0.5, 2, 3), m)
		y0, _ := s.Init(0.1, 3)
		solve := func(p ode.Preconditioner) []float64 {
			prob := ode.Problem{Func: s.Func(), Jac: s.Jac(), Precond: p, T0: 0, T1: 2000, Y0: s.ToEigen(nil, y0),
				Autonomous: true, SymmetricJac: true}
			res, err := ode.Solve(context.Background(), prob, ode.Settings{Method: ode.BDF, RTol: 1e-10, ATol: 1e-14, MaxSteps: 1e6})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v: steps %d, evaluations %d, Krylov iterations %d, setups %d", m.Kind, res.Stats.Steps, res.Stats.FuncEvals, res.Stats.KrylovIters, res.Stats.Decompositions)
			return res.Y
		}
		dense, nk := solve(nil), solve(newDeflation(s))
		if e := relErr(nk, dense); e > 1e-7 {
			t.Errorf("%v: Newton–Krylov and dense BDF differ by %.3g relative at t = 2000", m.Kind, e)
		}
		if l0, l := s.LossEigen(s.ToEigen(nil, y0)), s.LossEigen(nk); !(l < 0.9*l0) {
			t.Errorf("%v: the loss moved from %g to %g only: the test does not reach the drop", m.Kind, l0, l)
		}
	}
}
