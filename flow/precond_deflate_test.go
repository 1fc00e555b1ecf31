package flow

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/ode"
)

// TestDeflatePrecond: the Ritz values the preconditioner keeps are the
// largest eigenvalues of −J (the dense Jacobian, Linearization.Dense), its
// Ritz vectors orthonormal, and Solve inverts P = I + γ V diag(θ) Vᵀ on
// the pairs with γθ ≥ deflateMin, to single precision.
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

	p := newDeflatePrecond(s)
	const gamma = 0.7
	if _, err := p.Setup(0, y, gamma, false); err != nil {
		t.Fatal(err)
	}
	if len(p.theta) < 5 {
		t.Fatalf("kept %d Ritz pairs, want at least 5 of n = %d", len(p.theta), n)
	}
	for i := 0; i < 5; i++ {
		if math.Abs(p.theta[i]-want[i]) > 1e-9*want[0] {
			t.Errorf("Ritz value %d: %.15g, eigenvalue of −J %.15g", i, p.theta[i], want[i])
		}
	}
	k := len(p.theta)
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if g := impl.Ddot(p.n, p.q[i], 1, p.q[j], 1); math.Abs(g-want) > 1e-10 {
				t.Fatalf("Ritz vectors %d, %d: inner product %g, want %g", i, j, g, want)
			}
		}
	}
	// Solve applies the pairs with γθ ≥ deflateMin, the identity beyond.
	if len(p.scale) == 0 || len(p.scale) == k || gamma*p.theta[len(p.scale)] >= deflateMin {
		t.Errorf("Solve applies %d of %d Ritz pairs", len(p.scale), k)
	}
	if p.kron == nil || slices.Min(p.kron.scale) > -0.1 {
		t.Fatalf("the structured deflation is missing or acts little (its least scale %g): the test does not check it", slices.Min(p.kron.scale))
	}
	x := randomState(s, 1, 9)
	z := make([]float64, n)
	p.Solve(z, x)
	if e := relErr(z, twoLevelInverse(p, gamma, x)); e > 1e-6 {
		t.Errorf("Solve differs from the two-level inverse by %.3g", e)
	}
}

// twoLevelInverse is P⁻¹x = V diag(1/(1 + γθ)) Vᵀx + (I − VVᵀ) P_S⁻¹ (I −
// VVᵀ) x, in double and step by step (P_S = I without the structured
// deflation). Solve's products with the Ritz vectors are in single
// precision (unit roundoff 6·10⁻⁸), its inner products accumulated in
// double.
func twoLevelInverse(p *deflatePrecond, gamma float64, x []float64) []float64 {
	k := len(p.scale)
	complement := func(v []float64) []float64 {
		out := append([]float64(nil), v...)
		for i := 0; i < k; i++ {
			impl.Daxpy(p.n, -impl.Ddot(p.n, p.q[i], 1, v, 1), p.q[i], 1, out, 1)
		}
		return out
	}
	ps := complement(x)
	if kr := p.kron; kr != nil {
		e := make([]float64, kr.active*kr.d)
		kr.coords(e, ps, kr.active)
		for i := range e {
			e[i] *= kr.scale[i]
		}
		kr.addSpan(ps, e)
	}
	z := complement(ps)
	for i := 0; i < k; i++ {
		impl.Daxpy(p.n, impl.Ddot(p.n, p.q[i], 1, x, 1)/(1+gamma*p.theta[i]), p.q[i], 1, z, 1)
	}
	return z
}

// TestBDFNewtonKrylovFullLayer: BDF with GMRES preconditioned by
// deflatePrecond (the full layer's path above ode.MaxDenseDim) follows the
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
		dense, nk := solve(nil), solve(newDeflatePrecond(s))
		if e := relErr(nk, dense); e > 1e-7 {
			t.Errorf("%v: Newton–Krylov and dense BDF differ by %.3g relative at t = 2000", m.Kind, e)
		}
		if l0, l := s.LossEigen(s.ToEigen(nil, y0)), s.LossEigen(nk); !(l < 0.9*l0) {
			t.Errorf("%v: the loss moved from %g to %g only: the test does not reach the drop", m.Kind, l0, l)
		}
	}
}

// TestDeflateSolveShared: Solve's passes over the Ritz vectors shared by
// one to four goroutines (solveShare; here over five blocks and a part
// of one) give the same Vᵀr and the same V c, bit for bit, and Vᵀr equals
// the inner products to single precision.
func TestDeflateSolveShared(t *testing.T) {
	const n, m = 4*solveBlock + 300, 7
	rnd := rand.New(rand.NewPCG(5, 6))
	p := &deflatePrecond{n: n, m: m, v32: make([]float32, m*n), r32: make([]float32, n), c32: make([]float32, m),
		proj: make([]float64, m)}
	for i := range p.v32 {
		p.v32[i] = float32(rnd.NormFloat64())
	}
	x, c := make([]float64, n), make([]float64, m)
	for i := range x {
		x[i] = rnd.NormFloat64()
	}
	for i := range c {
		c[i] = rnd.NormFloat64()
	}
	var coords, span []float64
	for w := 1; w <= 4; w++ {
		p.share(w)
		got := slices.Clone(p.coords(m, x))
		z := make([]float64, n)
		p.addSpan(z, c)
		if w == 1 {
			coords, span = got, z
			for i := range m { // row i of V, by blocks: vBlock's layout
				var want float64
				for j0 := 0; j0 < n; j0 += solveBlock {
					vb, nb := p.vBlock(j0)
					for j := range nb {
						want += float64(vb[i*nb+j]) * x[j0+j]
					}
				}
				if math.Abs(got[i]-want) > 1e-5*math.Sqrt(n) {
					t.Errorf("(Vᵀx)_%d = %.9g, want %.9g", i, got[i], want)
				}
			}
			continue
		}
		for i := range coords {
			if math.Float64bits(got[i]) != math.Float64bits(coords[i]) {
				t.Fatalf("%d goroutines: (Vᵀx)_%d = %v, one goroutine %v", w, i, got[i], coords[i])
			}
		}
		for i := range span {
			if math.Float64bits(z[i]) != math.Float64bits(span[i]) {
				t.Fatalf("%d goroutines: (Vc)_%d = %v, one goroutine %v", w, i, z[i], span[i])
			}
		}
	}
}
