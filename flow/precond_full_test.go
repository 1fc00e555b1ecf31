package flow

import (
	"context"
	"math"
	"testing"

	"github.com/linattn/linattn/ode"
)

// TestFullPrecondDiagonal: the full layer's preconditioner holds
// diag(J_cᵀ D_z J_c)/τ, D_z = diag(ZZ), exactly for the merged model
// (against Σ_j (J_c e_k)_j² D_z,j column by column, Coefficients.Apply),
// and for the separate one within the factor 2 that squaring the two
// products of a query weight's derivative term by term allows.
func TestFullPrecondDiagonal(t *testing.T) {
	for i, m := range []Model{
		{Kind: Merged, H: 3, Tau: 1.5, Layer: FullLayer},
		{Kind: Separate, H: 2, R: 1, Tau: 0.5, Layer: FullLayer},
	} {
		s := newSys(t, taskLawData(t, 4, 0.5, 2, uint64(i+1)), m)
		y := randomState(s, 0.5, uint64(i))
		p := newFullPrecond(s)
		if _, err := p.Setup(0, y, 0.1, false); err != nil {
			t.Fatal(err)
		}
		c := NewCoefficients(s.d, s.Model)
		c.At(y)
		e, dc := make([]float64, s.n), make([]float64, c.Features())
		want := make([]float64, s.n)
		for k := range e {
			e[k] = 1
			c.Apply(dc, e)
			e[k] = 0
			for j, x := range dc {
				want[k] += x * x * p.zdiag[j] / m.Tau
			}
		}
		if err := relErr(p.gn, want); m.Kind == Merged && err > 1e-14 {
			t.Errorf("%v: diag(J_cᵀ D_z J_c)/τ differs from the columns' by %.3g", m.Kind, err)
		}
		for k, w := range want {
			if g := p.gn[k]; !(g >= 0.5*w*(1-1e-14) && g <= 2*w*(1+1e-14)) {
				t.Errorf("%v: diagonal %d is %g, the columns' %g: beyond a factor 2", m.Kind, k, g, w)
			}
		}
		// P = I + γ·diag: Solve divides by it.
		z := make([]float64, s.n)
		p.Solve(z, want)
		for k, x := range want {
			if w := x / (1 + 0.1*p.gn[k]); math.Abs(z[k]-w) > 1e-15*math.Abs(w) {
				t.Fatalf("%v: Solve[%d] = %g, want %g", m.Kind, k, z[k], w)
			}
		}
	}
}

// TestBDFNewtonKrylovFullLayer: BDF with GMRES preconditioned by
// fullPrecond (the full layer's path above ode.MaxDenseDim) follows the
// same flow as BDF with the dense factorization, here at D = 5 where both
// run: the final states agree to the tolerances' order.
func TestBDFNewtonKrylovFullLayer(t *testing.T) {
	s := newSys(t, taskLawData(t, 5, 0.5, 2, 3), Model{Kind: Merged, H: 3, Tau: 1, Layer: FullLayer})
	y0, _ := s.Init(0.1, 3)
	solve := func(p ode.Preconditioner) []float64 {
		prob := ode.Problem{Func: s.Func(), Jac: s.Jac(), Precond: p, T0: 0, T1: 200, Y0: s.ToEigen(nil, y0),
			Autonomous: true, SymmetricJac: true}
		res, err := ode.Solve(context.Background(), prob, ode.Settings{Method: ode.BDF, RTol: 1e-10, ATol: 1e-14, MaxSteps: 1e6})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("steps %d, evaluations %d, Krylov iterations %d, setups %d", res.Stats.Steps, res.Stats.FuncEvals, res.Stats.KrylovIters, res.Stats.Decompositions)
		return res.Y
	}
	dense, nk := solve(nil), solve(newFullPrecond(s))
	if e := relErr(nk, dense); e > 1e-7 {
		t.Errorf("Newton–Krylov and dense BDF differ by %.3g relative at t = 200", e)
	}
	if l0, l := s.LossEigen(s.ToEigen(nil, y0)), s.LossEigen(nk); !(l < 0.9*l0) {
		t.Errorf("the loss moved from %g to %g only: the test does not reach the drop", l0, l)
	}
}
