package flow

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
	"gonum.org/v1/gonum/mat"
)

// lawCase is a model under a task law: c = ICL, K fixed tasks, a random
// task covariance Ω (omega) and label noise σ².
type lawCase struct {
	name  string
	m     Model
	lam   []float64
	n     int // context length N
	icl   float64
	k     int
	omega bool
	noise float64
}

var fullCases = []lawCase{
	{"merged D3 H2 c=0.3 K=1", Model{Kind: Merged, H: 2, Tau: 1.7, Layer: FullLayer}, []float64{0.9, 0.5, 0.2}, 5, 0.3, 1, false, 0},
	{"merged D4 H5 c=0 K=3", Model{Kind: Merged, H: 5, Tau: 1, Layer: FullLayer}, []float64{1.3, 0.7, 0.4, 0.1}, 7, 0, 3, false, 0},
	{"merged D3 H3 c=1 K=1", Model{Kind: Merged, H: 3, Tau: 0.5, Layer: FullLayer}, []float64{0.6, 0.3, 0.1}, 31, 1, 1, false, 0},
	{"separate D4 H3 R2 c=0.3 K=3", Model{Kind: Separate, H: 3, R: 2, Tau: 0.8, Layer: FullLayer}, []float64{1.3, 0.7, 0.4, 0.1}, 5, 0.3, 3, false, 0},
	{"separate D3 H4 R3 c=0.3 K=1", Model{Kind: Separate, H: 4, R: 3, Tau: 1, Layer: FullLayer}, []float64{0.5, 0.3, 0.2}, 5, 0.3, 1, false, 0},
	{"separate D3 H4 R1 c=0 K=1", Model{Kind: Separate, H: 4, R: 1, Tau: 1, Layer: FullLayer}, []float64{0.5, 0.3, 0.2}, 31, 0, 1, false, 0},
	{"reduced merged D3 H2 c=0.3 K=3", Model{Kind: Merged, H: 2, Tau: 1.2}, []float64{0.9, 0.5, 0.2}, 5, 0.3, 3, false, 0},
	{"reduced separate D4 H3 R2 c=0 K=1", Model{Kind: Separate, H: 3, R: 2, Tau: 0.8}, []float64{1.3, 0.7, 0.4, 0.1}, 7, 0, 1, false, 0},
	{"reduced separate D3 H3 R1 c=1 Ω σ²=0.2", Model{Kind: Separate, H: 3, R: 1, Tau: 1}, []float64{0.9, 0.5, 0.2}, 5, 1, 1, true, 0.2},
	{"full merged D3 H4 c=0.5 K=2 Ω σ²=0.3", Model{Kind: Merged, H: 4, Tau: 1, Layer: FullLayer}, []float64{0.9, 0.5, 0.2}, 5, 0.5, 2, true, 0.3},
	{"full separate D3 H2 R2 c=0 K=1000 σ²=0.1", Model{Kind: Separate, H: 2, R: 2, Tau: 1, Layer: FullLayer}, []float64{0.9, 0.5, 0.2}, 7, 0, 1000, false, 0.1},
	{"labelkey merged D3 H2 c=0.3 K=3 Ω σ²=0.1", Model{Kind: Merged, H: 2, Tau: 1.3, Layer: LabelKeyLayer}, []float64{0.9, 0.5, 0.2}, 5, 0.3, 3, true, 0.1},
	{"labelkey separate D4 H2 R2 c=0 K=3 σ²=0.2", Model{Kind: Separate, H: 2, R: 2, Tau: 0.9, Layer: LabelKeyLayer}, []float64{1.3, 0.7, 0.4, 0.1}, 7, 0, 3, false, 0.2},
}

// randomCov returns a random symmetric positive definite D×D matrix with
// eigenvalues in [0.5, 2] (the task covariance Ω of a lawCase).
func randomCov(d int, seed uint64) *mat.Dense {
	q := law.RandomRotation(d, seed+100)
	e := make([]float64, d)
	for i := range e {
		e[i] = 0.5 + 1.5*float64(i)/float64(max(d-1, 1))
	}
	var qe, out mat.Dense
	qe.Mul(q, mat.NewDiagDense(d, e))
	out.Mul(&qe, q.T())
	return &out
}

// lawData returns the data of a lawCase: a rotated Λ, fixed lengths and
// the task law.
func lawData(t testing.TB, tc lawCase, seed uint64) *law.Data {
	t.Helper()
	d := len(tc.lam)
	data, err := law.NewData(tc.lam, law.RandomRotation(d, seed), law.Lengths{N: tc.n})
	if err != nil {
		t.Fatal(err)
	}
	tasks := law.Tasks{ICL: tc.icl, Fixed: law.FixedTasks(d, tc.k, seed), Noise: tc.noise}
	if tc.omega {
		tasks.Cov = randomCov(d, seed)
	}
	if data, err = data.WithTasks(tasks); err != nil {
		t.Fatal(err)
	}
	return data
}

// randomState is a state of s with every block random (extra blocks
// included), N(0, sd²) entries.
func randomState(s *System, sd float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	y := make([]float64, s.Len())
	for i := range y {
		y[i] = sd * rng.NormFloat64()
	}
	return y
}

// momentsLoss is the loss formed in the original basis from the weights:
// Data.Moments and Coefficients, without the eigenbasis of System.
func momentsLoss(t testing.TB, s *System) func(y []float64) float64 {
	mo, err := s.Data.Moments(s.Model.Layer.Pairs(s.Dim()), law.Training, false)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCoefficients(s.Dim(), s.Model)
	return func(y []float64) float64 {
		c.At(y)
		return mo.Loss(c.Values())
	}
}

// TestLawDerivIsHalfNegativeGradient: under every task law and layer,
// τ dθ/dt = −½ ∂L/∂θ against central differences of the loss formed in
// the original basis (momentsLoss), which also tests the rotation to eigen
// coordinates of the extra blocks and of the fixed tasks.
func TestLawDerivIsHalfNegativeGradient(t *testing.T) {
	for ci, tc := range fullCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSys(t, lawData(t, tc, uint64(ci+1)), tc.m)
			y := randomState(s, 0.6, uint64(ci))
			loss := momentsLoss(t, s)
			if l1, l2 := s.Loss(y), loss(y); math.Abs(l1-l2) > 1e-12*math.Abs(l2) {
				t.Errorf("Loss %.17g, from the original-basis moments %.17g", l1, l2)
			}
			got := derivOriginal(s, y)
			want := make([]float64, len(y))
			const h = 1e-5
			for i := range y {
				orig := y[i]
				y[i] = orig + h
				lp := loss(y)
				y[i] = orig - h
				lm := loss(y)
				y[i] = orig
				want[i] = -(lp - lm) / (2 * h) / (2 * tc.m.Tau)
			}
			if e := relErr(got, want); e > 1e-8 {
				t.Errorf("relative difference from −½∇L/τ: %.3g", e)
			}
		})
	}
}

// TestLawJacobian: the analytic Jacobian under every task law against
// central differences of the flow, and its symmetry (J = −∇²L/(2τ)).
func TestLawJacobian(t *testing.T) {
	for ci, tc := range fullCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSys(t, lawData(t, tc, uint64(ci+3)), tc.m)
			y := s.ToEigen(nil, randomState(s, 0.6, uint64(ci+7)))
			jac, asym := jacobianOf(s, y)
			if rel := jacobianFDError(s, jac, y, 1e-6); rel > 1e-7 {
				t.Errorf("analytic Jacobian differs from finite differences by %.3g relative", rel)
			}
			if asym > 1e-12 {
				t.Errorf("Jacobian asymmetry %.3g; a gradient flow has a symmetric one", asym)
			}
		})
	}
}

// TestLawConserved: the conserved quantities of the flow (Conserved) have
// zero time derivative at random states, under every task law and layer:
// d/dt ṽ_iᵀṽ_j − ⟨W̃_i, W̃_j⟩ = 0 (merged), and the key–query norms
// (separate), to rounding.
func TestLawConserved(t *testing.T) {
	for ci, tc := range fullCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSys(t, lawData(t, tc, uint64(ci+5)), tc.m)
			y := randomState(s, 0.6, uint64(ci+11))
			dy := derivOriginal(s, y)
			const h = 1e-6
			yp, ym := make([]float64, len(y)), make([]float64, len(y))
			for i := range y {
				yp[i], ym[i] = y[i]+h*dy[i], y[i]-h*dy[i]
			}
			cp, cm, c0 := s.Conserved(yp), s.Conserved(ym), s.Conserved(y)
			var scale float64
			for _, x := range c0 {
				scale = max(scale, math.Abs(x))
			}
			for i := range cp {
				if rate := (cp[i] - cm[i]) / (2 * h); math.Abs(rate) > 1e-8*scale {
					t.Errorf("conserved quantity %d changes at rate %.3g (scale %.3g)", i, rate, scale)
				}
			}
		})
	}
}

// TestFullLayerInContextIsReduced: with every task in-context (c = 1)
// and zero extra blocks the full layer's flow is the reduced one — the
// same loss and derivative of the reduced weights to rounding, and extra
// blocks whose derivative is exactly zero, so they stay zero (docs/math.md,
// "The full layer": their features are uncorrelated with the others and
// with the label when E[w] = 0 and odd moments vanish).
func TestFullLayerInContextIsReduced(t *testing.T) {
	for _, kind := range []Kind{Merged, Separate} {
		tc := lawCase{lam: []float64{0.4, 0.3, 0.2, 0.1}, n: 31, icl: 1, k: 1,
			m: Model{Kind: kind, H: 4, R: 2, Tau: 1.3}}
		if kind == Merged {
			tc.m.R = 0
		}
		data := lawData(t, tc, 4)
		red := newSys(t, data, tc.m)
		tc.m.Layer = FullLayer
		full := newSys(t, data, tc.m)
		y, _ := red.Init(0.8, 5)
		yf, _ := full.Init(0.8, 5)
		for i, x := range y {
			if yf[i] != x {
				t.Fatalf("%v: Init of the full layer differs from the reduced one at %d", kind, i)
			}
		}
		if lr, lf := red.Loss(y), full.Loss(yf); math.Abs(lr-lf) > 1e-14 {
			t.Errorf("%v: loss %.17g (reduced), %.17g (full)", kind, lr, lf)
		}
		dr, df := derivOriginal(red, y), derivOriginal(full, yf)
		if e := relErr(df[:len(dr)], dr); e > 1e-13 {
			t.Errorf("%v: derivatives differ by %.3g relative", kind, e)
		}
		de := make([]float64, full.Len())
		full.DerivEigen(de, full.ToEigen(nil, yf))
		for i, x := range de[len(dr):] {
			if x != 0 {
				t.Errorf("%v: extra block %d moves at rate %g, want exactly 0", kind, i, x)
			}
		}
		if full.MinLoss() != red.MinLoss() {
			t.Errorf("%v: MinLoss %g (full), %g (reduced)", kind, full.MinLoss(), red.MinLoss())
		}
	}
}

// TestLawMinLoss: the least loss under a task law is attained where the
// gradient vanishes and is below the loss at random states.
func TestLawMinLoss(t *testing.T) {
	for ci, tc := range fullCases {
		if tc.icl == 1 && !tc.omega && tc.noise == 0 {
			continue // the paper's task: MinLoss is L* (TestFullLayerInContextIsReduced)
		}
		t.Run(tc.name, func(t *testing.T) {
			s := newSys(t, lawData(t, tc, uint64(ci+1)), tc.m)
			mo, err := s.Data.Moments(tc.m.Layer.Pairs(s.Dim()), law.Training, false)
			if err != nil {
				t.Fatal(err)
			}
			lmin, cstar, err := mo.Minimum()
			if err != nil {
				t.Fatal(err)
			}
			// The layer reaches every coefficient with H ≥ D + 1 heads (and
			// R = D, separate); otherwise its least loss is not known.
			reaches := tc.m.H >= len(tc.lam)+1 && (tc.m.Kind == Merged || tc.m.R == len(tc.lam))
			if tc.m.Layer != FullLayer { // M, or Γ = Σ_i v_i W̃_i: rank ≤ D
				reaches = tc.m.Kind == Merged || tc.m.R*tc.m.H >= len(tc.lam)
			}
			switch got := s.MinLoss(); {
			case !reaches && !math.IsNaN(got):
				t.Errorf("MinLoss %g, want NaN: this layer cannot take every coefficient", got)
			case reaches && !(math.Abs(lmin-got) <= 1e-12*math.Abs(lmin)):
				t.Errorf("MinLoss %.17g, the original-basis moments' minimum %.17g", got, lmin)
			}
			r := make([]float64, mo.F)
			if l := mo.Residual(r, cstar); math.Abs(l-lmin) > 1e-12*math.Abs(lmin) {
				t.Errorf("L(c*) = %.17g, Minimum %.17g", l, lmin)
			}
			for i, x := range r {
				if math.Abs(x) > 1e-12 {
					t.Errorf("residual at c* [%d] = %.3g, want 0", i, x)
				}
			}
			for k := 0; k < 5; k++ {
				if l := s.Loss(randomState(s, 0.5, uint64(k))); l < lmin {
					t.Errorf("a random state has loss %.17g below the minimum %.17g", l, lmin)
				}
			}
		})
	}
}

// icliwlSystem is the paper's in-context against in-weight setting
// (appendix supp:icl-iwl: merged, D = 4, Λ = I/4, N = 31, H = 8) with the
// full layer and a fraction c of in-context sequences.
func icliwlSystem(t testing.TB, c float64, k int) *System {
	t.Helper()
	data, err := law.NewData(law.White(4, 0.25), nil, law.Lengths{N: 31})
	if err == nil {
		data, err = data.WithTasks(law.Tasks{ICL: c, Fixed: law.FixedTasks(4, k, 3)})
	}
	if err != nil {
		t.Fatal(err)
	}
	return newSys(t, data, Model{Kind: Merged, H: 8, Tau: 1, Layer: FullLayer})
}

// TestRunFullLayerInContext: with every task in-context and zero extra
// blocks, Run of the full layer is the reduced layer's run bit for bit
// (it integrates the reduced flow, the extra blocks' gradient being
// exactly zero), and the full layer's own right-hand side, integrated as
// it is, follows the same trajectory to the integration tolerance, its
// extra blocks exactly zero all along.
func TestRunFullLayerInContext(t *testing.T) {
	for _, kind := range []Kind{Merged, Separate} {
		tc := lawCase{lam: []float64{0.4, 0.3, 0.2, 0.1}, n: 31, icl: 1, k: 1, m: Model{Kind: kind, H: 4, R: 1, Tau: 1}}
		if kind == Merged {
			tc.m.R = 0
		}
		data := lawData(t, tc, 1)
		red := newSys(t, data, tc.m)
		tc.m.Layer = FullLayer
		full := newSys(t, data, tc.m)
		y0, _ := red.Init(0.01, 3)
		yf, _ := full.Init(0.01, 3)
		a, err := red.Run(context.Background(), y0, RunSettings{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := full.Run(context.Background(), yf, RunSettings{})
		if err != nil {
			t.Fatal(err)
		}
		nr, nf := red.Len(), full.Len()
		for i, l := range a.Loss {
			if b.Loss[i] != l || b.Times[i] != a.Times[i] {
				t.Fatalf("%v: sample %d: (%g, %.17g) reduced, (%g, %.17g) full", kind, i, a.Times[i], l, b.Times[i], b.Loss[i])
			}
			for j, x := range b.States[i*nf : (i+1)*nf] {
				if (j < nr && x != a.States[i*nr+j]) || (j >= nr && x != 0) {
					t.Fatalf("%v: sample %d: state %d is %g", kind, i, j, x)
				}
			}
		}
		if len(b.Transitions) != len(a.Transitions) || b.Transitions[0].T != a.Transitions[0].T {
			t.Errorf("%v: drops %v (full), %v (reduced)", kind, b.Transitions, a.Transitions)
		}
		// The full layer's right-hand side as it is.
		times := LinearGrid(30000, 301)
		res, err := ode.Solve(context.Background(), ode.Problem{Func: full.Func(), T1: 30000, Y0: full.ToEigen(nil, yf)},
			ode.Settings{Method: ode.DOP853, RTol: 1e-11, ATol: 1e-15, MaxSteps: 10_000_000, TEval: times})
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := red.Run(context.Background(), y0, RunSettings{T: 30000, Times: times, Method: ode.DOP853, RTol: 1e-11, ATol: 1e-15})
		worst := 0.0
		for i := range times {
			y := res.YEval[i*nf : (i+1)*nf]
			worst = max(worst, math.Abs(full.LossEigen(y)-ref.Loss[i])/ref.Loss[i])
			for j, x := range y[nr:] {
				if x != 0 {
					t.Fatalf("%v: t = %g: extra block %d is %g, want exactly 0", kind, times[i], j, x)
				}
			}
		}
		if worst > 1e-7 {
			t.Errorf("%v: the full layer's own flow differs from the reduced one by %.3g relative", kind, worst)
		}
		t.Logf("%v: the full layer's own flow follows the reduced one to %.2g relative", kind, worst)
	}
}

// TestRunUnderTaskLaw: a run under fixed tasks (c = 0.5, K = 1) reads
// its drops off the run. It has two (in-context and in-weight learning
// together at t ≈ 42, then a late drop at t ≈ 1860; docs/math.md), at the
// same times whether they are located by bisection on the kept continuous
// extension or as events of a second pass, and at the plateau levels and
// times a fine log grid of the loss gives.
func TestRunUnderTaskLaw(t *testing.T) {
	s := icliwlSystem(t, 0.5, 1)
	y0, _ := s.Init(2e-5, 3)
	dense, err := s.Run(context.Background(), y0, RunSettings{})
	if err != nil {
		t.Fatal(err)
	}
	twoPass, err := s.Run(context.Background(), y0, RunSettings{DenseBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if dense.Status != Converged || dense.Sampling != FromDense || twoPass.Sampling != AtTimes {
		t.Fatalf("status %v, samplings %v and %v", dense.Status, dense.Sampling, twoPass.Sampling)
	}
	if len(dense.Transitions) != 2 || len(twoPass.Transitions) != 2 || len(dense.Plateaus) != 3 {
		t.Fatalf("drops %v and %v, plateaus %v: want 2 drops between 3 plateaus", dense.Transitions, twoPass.Transitions, dense.Plateaus)
	}
	fine, _ := s.Run(context.Background(), y0, RunSettings{T: dense.FinalT, Times: LogGrid(1e-2, dense.FinalT, 20000)})
	plateaus, drops := FindDrops(fine.Times, fine.Loss)
	for i, tn := range dense.Transitions {
		if d := math.Abs(tn.T - twoPass.Transitions[i].T); d > 1e-9*tn.T {
			t.Errorf("drop %d at %.15g (bisection), %.15g (events)", tn.M, tn.T, twoPass.Transitions[i].T)
		}
		if d := math.Abs(tn.T - drops[i].T); d > 1e-3*tn.T {
			t.Errorf("drop %d at %.6g, on a fine grid %.6g", tn.M, tn.T, drops[i].T)
		}
		if tn.State == nil {
			t.Errorf("drop %d has no state", tn.M)
		}
	}
	for i, l := range dense.Plateaus {
		if math.Abs(l-plateaus[i]) > 1e-4*l {
			t.Errorf("plateau %d at %.8g, on a fine grid %.8g", i, l, plateaus[i])
		}
	}
	if dense.Transitions[0].T > 100 || dense.Transitions[1].T < 1000 {
		t.Errorf("drops at %g and %g, want one before t = 100 and one after 1000", dense.Transitions[0].T, dense.Transitions[1].T)
	}
	// The in-weight test loss falls in the first drop, as the layer
	// memorizes w₀; training on half in-context sequences, its in-context
	// test loss ends within a few percent of the training loss.
	last := len(dense.Times) - 1
	if dense.TestIWL[0] != 1 && math.Abs(dense.TestIWL[0]-1) > 1e-3 {
		t.Errorf("in-weight test loss at t = 0: %g, want ≈ 1", dense.TestIWL[0])
	}
	if dense.TestICL[last] > 1.6*dense.Loss[last] {
		t.Errorf("final in-context test loss %g against training loss %g", dense.TestICL[last], dense.Loss[last])
	}
}

// TestTestLossesInContext: trained purely in context (c = 1), the
// in-context test set is the training population, so its loss is the
// training loss.
func TestTestLossesInContext(t *testing.T) {
	s := icliwlSystem(t, 1, 1)
	y := randomState(s, 0.4, 7)
	icl, iwl, _ := s.TestLosses(y)
	if l := s.Loss(y); math.Abs(icl-l) > 1e-13*l {
		t.Errorf("in-context test loss %.17g, training loss %.17g", icl, l)
	}
	if math.IsNaN(iwl) || iwl <= 0 {
		t.Errorf("in-weight test loss %g", iwl)
	}
}

// TestInContextLearningIsTransient is the finding of docs/math.md ("Is
// in-context learning transient?"): after its first drop the exact
// in-context test loss rises again, by 19% of its least value with one
// fixed task and c = 0.3, and by far less (below 0.01%) with sixteen
// tasks and c = 0.9, but still rises.
func TestInContextLearningIsTransient(t *testing.T) {
	for _, tc := range []struct {
		c        float64
		k        int
		min, max float64 // bounds of the largest rise, relative to the running minimum
	}{{0.3, 1, 0.15, 0.25}, {0.9, 16, 1e-6, 1e-4}} {
		s := icliwlSystem(t, tc.c, tc.k)
		y0, _ := s.Init(3e-5, 3)
		tr, err := s.Run(context.Background(), y0, RunSettings{})
		if err != nil {
			t.Fatal(err)
		}
		rise, run := 0.0, math.Inf(1)
		least := tr.TestICL[0]
		for _, v := range tr.TestICL {
			least = math.Min(least, v)
		}
		for _, v := range tr.TestICL {
			if run == math.Inf(1) && v > 0.5*(tr.TestICL[0]+least) {
				continue // before its first drop
			}
			run = math.Min(run, v)
			rise = math.Max(rise, (v-run)/run)
		}
		if rise < tc.min || rise > tc.max {
			t.Errorf("c = %g, K = %d: the in-context test loss rises by %.3g of its minimum after its first drop, want [%g, %g]", tc.c, tc.k, rise, tc.min, tc.max)
		}
	}
}
