package flow

import (
	"context"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/linattn/linattn/law"
)

// TestMergedWhiteClosedForm checks the merged flow with Λ = cI and a balanced,
// aligned initialization W₁(0) = w₂(0) mᵀ, m = vec(I)/√D, against the exact
// solution of docs/math.md ("Closed form for the merged model with white
// covariance"; paper eq. attnM-solution generalized to any c and ν):
// s(t) = γe^{2γt/τ}/(α(e^{2γt/τ} − 1) + γ/s₀), γ = c²√D, α = c³(1 + ν(1 + D)),
// M = σI with σ = s/√D, L = cD − 2σc²D + σ²c³(1 + ν(1 + D))D.
func TestMergedWhiteClosedForm(t *testing.T) {
	const (
		dim = 3
		c   = 0.7
		h   = 4
		tau = 1.3
	)
	nu, _ := law.NuNextToken(10)
	data, err := law.NewData(law.White(dim, c), law.RandomRotation(dim, 5), law.Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	s := newSys(t, data, Model{Kind: Merged, H: h, Tau: tau})
	v := []float64{1e-3, -2e-3, 0.5e-3, 1.5e-3}
	var s0 float64
	for _, vi := range v {
		s0 += vi * vi
	}
	y0, err := s.BalancedAligned(v)
	if err != nil {
		t.Fatal(err)
	}
	gamma := c * c * math.Sqrt(dim)
	alpha := c * c * c * (1 + nu*(1+dim))
	sigma := func(tt float64) float64 {
		e := math.Exp(2 * gamma * tt / tau)
		return gamma * e / (alpha*(e-1) + gamma/s0) / math.Sqrt(dim)
	}
	lossAt := func(sg float64) float64 {
		return c*dim - 2*sg*c*c*dim + sg*sg*c*c*c*(1+nu*(1+dim))*dim
	}
	// The drop happens near t ≈ τ/(2γ) ln(α/(γ s₀ ... )); cover it whole.
	T := 12.0
	tr, err := s.Run(context.Background(), y0, RunSettings{T: T, Times: LinearGrid(T, 241), RTol: 1e-13, ATol: 1e-16})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Loss[0]-tr.Loss[len(tr.Loss)-1] < 0.9*(tr.Loss[0]-data.MinLoss()) {
		t.Fatalf("the run does not cover the drop: loss %g → %g", tr.Loss[0], tr.Loss[len(tr.Loss)-1])
	}
	var worstS, worstL float64
	n := s.Len()
	for i, tt := range tr.Times {
		m := mapOriginal(s, tr.States[i*n:(i+1)*n])
		sg := sigma(tt)
		for a := 0; a < dim; a++ {
			for b := 0; b < dim; b++ {
				want := 0.0
				if a == b {
					want = sg
				}
				worstS = math.Max(worstS, math.Abs(m.At(a, b)-want)/sg)
			}
		}
		worstL = math.Max(worstL, math.Abs(tr.Loss[i]-lossAt(sg))/lossAt(sg))
	}
	if worstS > 1e-8 || worstL > 1e-8 {
		t.Errorf("largest relative deviation from the closed form: M %.3g, loss %.3g", worstS, worstL)
	}
}

// TestConservedQuantities integrates the paper's example through all drops
// and checks the conserved quantities (paper eqs. attnS-lowrank-conservation,
// attnM-conservation) at every output time, relative to the weights' scale.
func TestConservedQuantities(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		T    float64
	}{{Separate, 3e4}, {Merged, 500}} {
		s, y0 := paperExample(t, tc.kind, 3)
		tr, err := s.Run(context.Background(), y0, RunSettings{T: tc.T, Times: LinearGrid(tc.T, 101)})
		if err != nil {
			t.Fatal(err)
		}
		c0 := s.Conserved(y0)
		n := s.Len()
		var worst, scale float64
		for i := range tr.Times {
			yi := tr.States[i*n : (i+1)*n]
			for _, x := range yi {
				scale = math.Max(scale, x*x)
			}
			for j, c := range s.Conserved(yi) {
				worst = math.Max(worst, math.Abs(c-c0[j]))
			}
		}
		if worst > 1e-8*scale {
			t.Errorf("%v: conserved quantities drift by %.3g (weights² up to %.3g)", tc.kind, worst, scale)
		}
		if tr.FinalLoss > 1.001*s.Data.MinLoss() {
			t.Errorf("%v: the run did not converge (loss %g, L* %g)", tc.kind, tr.FinalLoss, s.Data.MinLoss())
		}
	}
}

// TestSubsetConfigurationsAreFixedPoints builds, for every subset S, the
// configuration of docs/math.md ("Fixed points"): one head per d ∈ S with
// k = q = v e_d, v = (λ_d/a_d)^{1/3}, the rest zero; its right-hand side
// vanishes and its loss is L(S).
func TestSubsetConfigurationsAreFixedPoints(t *testing.T) {
	data := testData(t, []float64{0.9, 0.5, 0.35, 0.2}, 8)
	d := data.Dim()
	s := newSys(t, data, Model{Kind: Separate, H: d + 1, R: 2, Tau: 1})
	a := data.AEigenvalues()
	for mask := 0; mask < 1<<d; mask++ {
		y := make([]float64, s.Len()) // eigen coordinates
		var set []int
		head := 0
		hr := s.Model.H * s.Model.R
		for e := 0; e < d; e++ {
			if mask&(1<<e) == 0 {
				continue
			}
			set = append(set, e)
			v := math.Cbrt(data.Lambda()[e] / a[e])
			y[head] = v
			row := head * s.Model.R // r = 0
			y[s.Model.H+row*d+e] = v
			y[s.Model.H+hr*d+row*d+e] = v
			head++
		}
		dy := make([]float64, s.Len())
		s.DerivEigen(dy, y)
		var nrm float64
		for _, x := range dy {
			nrm = math.Max(nrm, math.Abs(x))
		}
		if nrm > 1e-14 {
			t.Errorf("S=%v: |dy/dt| = %.3g", set, nrm)
		}
		if l, want := s.LossEigen(y), data.LossOfSubset(set); math.Abs(l-want) > 1e-14 {
			t.Errorf("S=%v: loss %.17g, L(S) = %.17g", set, l, want)
		}
	}
}

// TestPaperExample reproduces the paper's Figure 3 (separate, D = 4, N = 31,
// H = 4, R = 1, λ = 0.4, 0.3, 0.2, 0.1): the loss sits on the plateau levels
// L(M_m) = 1, 0.64057971, 0.37737216, 0.2098046 (paper eq. attnS-loss; values
// from docs/math.md's formula) within 1e-3 and ends at L* = 0.13599507; the four
// transitions come in order and each key ends aligned with one eigenvector.
// The merged model on the same data drops once.
func TestPaperExample(t *testing.T) {
	levels := []float64{1, 0.64057971, 0.37737216, 0.2098046, 0.13599507}
	s, y0 := paperExample(t, Separate, 3)
	for m, l := range s.Data.PlateauLevels() {
		if math.Abs(l-levels[m]) > 5e-9 {
			t.Errorf("L(M_%d) = %.10g, want %.8g", m, l, levels[m])
		}
	}
	T := 3e4
	tr, err := s.Run(context.Background(), y0, RunSettings{T: T, Times: LinearGrid(T, 3001)})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Transitions) != 4 {
		t.Fatalf("%d transitions, want 4: %+v", len(tr.Transitions), tr.Transitions)
	}
	bounds := []float64{0}
	for i, tn := range tr.Transitions {
		if tn.M != i+1 || (i > 0 && tn.T <= tr.Transitions[i-1].T) {
			t.Errorf("transitions out of order: %+v", tr.Transitions)
		}
		bounds = append(bounds, tn.T)
	}
	bounds = append(bounds, T)
	// On each plateau, between consecutive transitions, the loss comes
	// within 1e-3 of its level.
	for m := 0; m <= 4; m++ {
		best := math.Inf(1)
		for i, tt := range tr.Times {
			if tt >= bounds[m] && tt <= bounds[m+1] {
				best = math.Min(best, math.Abs(tr.Loss[i]-levels[m]))
			}
		}
		if best > 1e-3 {
			t.Errorf("plateau %d: closest loss is %.3g from L(M_%d) = %g", m, best, m, levels[m])
		}
	}
	if math.Abs(tr.FinalLoss-levels[4]) > 1e-8 {
		t.Errorf("final loss %.10g, want %.8g", tr.FinalLoss, levels[4])
	}
	// Each head's key is aligned with a distinct eigenvector at the end.
	keys, _ := s.AlignmentEigen(s.ToEigen(nil, tr.Final))
	used := map[int]bool{}
	for i := 0; i < 4; i++ {
		best, arg := 0.0, -1
		for e := 0; e < 4; e++ {
			if keys[i*4+e] > best {
				best, arg = keys[i*4+e], e
			}
		}
		if best < 0.999 || used[arg] {
			t.Errorf("head %d: alignment %.4f with e_%d (already used: %v)", i, best, arg+1, used[arg])
		}
		used[arg] = true
	}

	if n := countDrops(tr.Loss); n != 4 {
		t.Errorf("separate: %d drops, want 4", n)
	}

	// The merged model drops once: its drop speed has a single maximum, and
	// no transition but the one from L(M_0) to L* is recorded.
	sm, ym := paperExample(t, Merged, 3)
	Tm := 1000.0
	trm, err := sm.Run(context.Background(), ym, RunSettings{T: Tm, Times: LinearGrid(Tm, 4001)})
	if err != nil {
		t.Fatal(err)
	}
	if len(trm.Transitions) != 1 {
		t.Fatalf("merged: %d transitions", len(trm.Transitions))
	}
	if n := countDrops(trm.Loss); n != 1 {
		t.Errorf("merged: %d drops, want 1", n)
	}
	if math.Abs(trm.FinalLoss-levels[4]) > 1e-8 {
		t.Errorf("merged final loss %.10g", trm.FinalLoss)
	}
}

// countDrops counts the local maxima of the drop speed L(t_{i−1}) − L(t_{i+1})
// on an even grid that exceed 1% of its largest value: one per abrupt drop.
func countDrops(loss []float64) int {
	speed := make([]float64, len(loss)-2)
	var top float64
	for i := range speed {
		speed[i] = loss[i] - loss[i+2]
		top = math.Max(top, speed[i])
	}
	n := 0
	for i := 1; i+1 < len(speed); i++ {
		if speed[i] > 0.01*top && speed[i] > speed[i-1] && speed[i] >= speed[i+1] {
			n++
		}
	}
	return n
}

func TestRunStopsAtMinimum(t *testing.T) {
	s, y0 := paperExample(t, Separate, 3)
	tr, err := s.Run(context.Background(), y0, RunSettings{T: 1e7, StopTol: 1e-6, Times: []float64{0, 100}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(tr.FinalLoss-s.Data.MinLoss()-1e-6) > 1e-12 || tr.FinalT > 1e5 {
		t.Errorf("stopped at t=%g with L − L* = %g", tr.FinalT, tr.FinalLoss-s.Data.MinLoss())
	}
	if len(tr.Times) != 2 || len(tr.States) != 2*s.Len() {
		t.Errorf("outputs %v", tr.Times)
	}
}

func TestRunValidation(t *testing.T) {
	s, y0 := paperExample(t, Separate, 3)
	// Each bad setting gives an error that names the field.
	for want, rs := range map[string]RunSettings{
		"T = -1":                 {T: -1},
		"Times[1] = 20":          {T: 10, Times: []float64{0, 20}},
		"Times[1] = 1":           {T: 10, Times: []float64{5, 1}},
		"StopTol = NaN":          {T: 10, StopTol: math.NaN()},
		"Tol = 2":                {Tol: 2},
		"StopTol = 1 with T = 0": {StopTol: 1},
		"DenseBytes = -1":        {T: 10, DenseBytes: -1},
		"Workers = -1":           {T: 10, Workers: -1},
	} {
		_, err := s.Run(context.Background(), y0, rs)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want one naming %q", rs, err, want)
		}
	}
	if _, err := s.Run(context.Background(), y0[:3], RunSettings{T: 1}); err == nil {
		t.Error("short state: no error")
	}
}

func TestRunDeterministic(t *testing.T) {
	s, y0 := paperExample(t, Separate, 4)
	a, _ := s.Run(context.Background(), y0, RunSettings{T: 5000, Times: LinearGrid(5000, 11)})
	b, _ := s.Run(context.Background(), y0, RunSettings{T: 5000, Times: LinearGrid(5000, 11)})
	for i := range a.States {
		if math.Float64bits(a.States[i]) != math.Float64bits(b.States[i]) {
			t.Fatal("two runs differ")
		}
	}
}

// TestDerivIndependentOfGOMAXPROCS: at D = 64 (the products in the
// assembly kernel where the processor has one) the right-hand side is
// bit-identical whatever GOMAXPROCS is.
func TestDerivIndependentOfGOMAXPROCS(t *testing.T) {
	data, err := law.NewData(law.PowerLaw(64, 1, 1), law.RandomRotation(64, 2), law.Lengths{Nu: 1.0 / 31})
	if err != nil {
		t.Fatal(err)
	}
	s := newSys(t, data, Model{Kind: Separate, H: 64, R: 2, Tau: 1})
	y0, _ := s.Init(0.5, 1)
	y := s.ToEigen(nil, y0)
	eval := func(procs int) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		dy := make([]float64, s.Len())
		s.DerivEigen(dy, y)
		return dy
	}
	a, b := eval(1), eval(4)
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("component %d differs: %v vs %v", i, a[i], b[i])
		}
	}
}
