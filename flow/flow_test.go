package flow

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/mlp"
)

// testData returns a task with a non-diagonal covariance (random rotation)
// and ν of the next-token loss, which differs from 1/N.
func testData(t testing.TB, lambda []float64, seed uint64) *law.Data {
	t.Helper()
	nu, err := law.NuNextToken(7)
	if err != nil {
		t.Fatal(err)
	}
	d, err := law.NewData(lambda, law.RandomRotation(len(lambda), seed), law.Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newSys(t testing.TB, d *law.Data, m Model) *System {
	t.Helper()
	s, err := NewSystem(d, m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mapOriginal forms M in the original basis directly from the weights:
// Σ_i v_i U_i or Σ_{i,r} v_i k_{i,r} q_{i,r}ᵀ.
func mapOriginal(s *System, y []float64) *mat.Dense {
	d, h := s.Dim(), s.Model.H
	m := mat.NewDense(d, d, nil)
	if s.Model.Kind == Merged {
		for i := 0; i < h; i++ {
			var u mat.Dense
			u.Scale(y[i], s.HeadMatrix(y, i))
			m.Add(m, &u)
		}
		return m
	}
	k, q := s.Keys(y), s.Queries(y)
	for row := 0; row < h*s.Model.R; row++ {
		vi := y[row/s.Model.R]
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				m.Set(a, b, m.At(a, b)+vi*k.At(row, a)*q.At(row, b))
			}
		}
	}
	return m
}

// derivOriginal is DerivEigen mapped to the original basis.
func derivOriginal(s *System, y []float64) []float64 {
	ye := s.ToEigen(nil, y)
	dy := make([]float64, s.Len())
	s.DerivEigen(dy, ye)
	return s.FromEigen(nil, dy)
}

func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range got {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

var gradCases = []struct {
	name string
	m    Model
	lam  []float64
}{
	{"merged D3 H2", Model{Kind: Merged, H: 2, Tau: 1.7}, []float64{0.9, 0.5, 0.2}},
	{"merged D4 H5", Model{Kind: Merged, H: 5, Tau: 1}, []float64{1.3, 0.7, 0.4, 0.1}},
	{"separate D4 H3 R2", Model{Kind: Separate, H: 3, R: 2, Tau: 0.8}, []float64{1.3, 0.7, 0.4, 0.1}},
	{"separate D5 H2 R3", Model{Kind: Separate, H: 2, R: 3, Tau: 2}, []float64{2, 1, 0.6, 0.3, 0.25}},
	{"separate D3 H4 R1", Model{Kind: Separate, H: 4, R: 1, Tau: 1}, []float64{0.5, 0.3, 0.2}},
}

// TestDerivIsHalfNegativeGradient checks τ dW/dt = −½ ∂L/∂W against central
// differences of the loss formed in the original basis from the weights
// (Data.LossOfMap), so that the eigenbasis rotation is tested too.
func TestDerivIsHalfNegativeGradient(t *testing.T) {
	for ci, tc := range gradCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSys(t, testData(t, tc.lam, uint64(ci+1)), tc.m)
			y, err := s.Init(1.5, uint64(10+ci))
			if err != nil {
				t.Fatal(err)
			}
			got := derivOriginal(s, y)
			loss := func(y []float64) float64 { return s.Data.LossOfMap(mapOriginal(s, y)) }
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
			var fdNorm float64
			for _, w := range want {
				fdNorm += w * w
			}
			fdNorm = 2 * tc.m.Tau * math.Sqrt(fdNorm) // ‖∇L‖ = 2τ‖dθ/dt‖
			if g := s.GradNormEigen(s.ToEigen(nil, y)); math.Abs(g-fdNorm) > 1e-7*fdNorm {
				t.Errorf("GradNorm %.10g, finite differences %.10g", g, fdNorm)
			}
			// The eigenbasis loss equals the original-basis one.
			if l1, l2 := s.Loss(y), loss(y); math.Abs(l1-l2) > 1e-12*math.Abs(l2) {
				t.Errorf("Loss %.17g, LossOfMap %.17g", l1, l2)
			}
		})
	}
}

func TestFastPathEqualsLiteral(t *testing.T) {
	// The merged flow through G = Λ² − AMΛ equals the literal two-layer
	// network with explicit E[y zᵀ] and E[z zᵀ] (paper eq. attnM-gd,
	// package mlp).
	for _, tc := range gradCases[:2] {
		s := newSys(t, testData(t, tc.lam, 3), tc.m)
		y, _ := s.Init(2, 5)
		h, d := tc.m.H, s.Data.Dim()
		net, err := mlp.New(s.Data, h, tc.m.Tau)
		if err != nil {
			t.Fatal(err)
		}
		z, _ := mlp.FromAttention(y[:h], y[h:], d)
		dz := make([]float64, len(z))
		net.Deriv(dz, z)
		dv, du := mlp.ToAttention(dz, h, d)
		if e := relErr(derivOriginal(s, y), append(dv, du...)); e > 1e-12 {
			t.Errorf("%s: fast path differs from the literal flow by %.3g relative", tc.name, e)
		}
	}
}

func TestValidation(t *testing.T) {
	// Each error names the offending field and its allowed range; want is
	// the part of the message that does.
	type check struct {
		f    func() error
		want string
	}
	for name, c := range map[string]check{
		"H 0": {func() error {
			_, err := NewSystem(mustData(t), Model{Kind: Separate, H: 0, R: 1, Tau: 1})
			return err
		}, "H = 0"},
		"R > D": {func() error {
			_, err := NewSystem(mustData(t), Model{Kind: Separate, H: 1, R: 3, Tau: 1})
			return err
		}, "R = 3, want 1 ≤ R ≤ D = 2"},
		"tau": {func() error {
			_, err := NewSystem(mustData(t), Model{Kind: Merged, H: 1, Tau: -1})
			return err
		}, "Tau = -1"},
		"w_init": {func() error {
			s, _ := NewSystem(mustData(t), Model{Kind: Merged, H: 1, Tau: 1})
			_, err := s.Init(math.Inf(1), 1)
			return err
		}, "w_init = +Inf"},
		"shape": {func() error {
			s, _ := NewSystem(mustData(t), Model{Kind: Separate, H: 2, R: 1, Tau: 1})
			_, err := s.FromArrays([]float64{1, 2}, nil, []float64{1, 2, 3}, []float64{1, 2, 3, 4})
			return err
		}, "H·R·D = 4"},
		"non-finite": {func() error {
			s, _ := NewSystem(mustData(t), Model{Kind: Separate, H: 1, R: 1, Tau: 1})
			_, err := s.FromArrays([]float64{1}, nil, []float64{1, math.NaN()}, []float64{1, 2})
			return err
		}, "initial weight 2 is NaN"},
		"NaN state": {func() error {
			s, _ := NewSystem(mustData(t), Model{Kind: Separate, H: 1, R: 1, Tau: 1})
			_, err := s.Run(context.Background(), []float64{math.NaN(), 1, 1, 1, 1}, RunSettings{})
			return err
		}, "initial state[0] = NaN"},
	} {
		if err := c.f(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", name, err, c.want)
		}
	}
	s, err := NewSystem(mustData(t), Model{Kind: Separate, H: 1, R: 1, Tau: 1})
	if err != nil || !s.ExpressivityLimited {
		t.Errorf("R·H < D: err=%v, ExpressivityLimited=%v", err, s.ExpressivityLimited)
	}
}

func mustData(t testing.TB) *law.Data {
	d, err := law.NewData([]float64{0.6, 0.4}, nil, law.Lengths{Nu: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestInitDeterministic(t *testing.T) {
	s := newSys(t, testData(t, []float64{0.4, 0.3, 0.2, 0.1}, 1), Model{Kind: Separate, H: 4, R: 1, Tau: 1})
	a, _ := s.Init(0.01, 7)
	b, _ := s.Init(0.01, 7)
	c, _ := s.Init(0.01, 8)
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatal("same seed, different initialization")
		}
	}
	if a[0] == c[0] {
		t.Error("different seeds, same draw")
	}
	// The paper's scaling: Σ_i v_i² and Σ_{i,r} ‖k_{i,r}‖² have mean w²
	// (appendix "Initialization"). With H = 200 heads they are w² times a
	// χ² over its degrees of freedom (200 and 800), within 30% of w².
	big := newSys(t, testData(t, []float64{0.4, 0.3, 0.2, 0.1}, 1), Model{Kind: Separate, H: 200, R: 1, Tau: 1})
	y, _ := big.Init(0.01, 3)
	var vv, kk float64
	for _, x := range big.Values(y) {
		vv += x * x
	}
	for _, x := range big.Keys(y).RawMatrix().Data {
		kk += x * x
	}
	if math.Abs(vv/1e-4-1) > 0.3 || math.Abs(kk/1e-4-1) > 0.3 {
		t.Errorf("Σv² = %g, Σ‖k‖² = %g, want ≈ w_init² = 1e-4", vv, kk)
	}
}

// paperExample is the paper's Figure 3 setting: D = 4, N = 31, H = 4, R = 1,
// λ = (0.4, 0.3, 0.2, 0.1), a random rotation as eigenvectors, and the small
// initialization w_init = 0.01 of the authors' code (README of
// yedizhang/linattn-icl: --init 1e-2).
func paperExample(t testing.TB, kind Kind, seed uint64) (*System, []float64) {
	t.Helper()
	nu, _ := law.NuFixed(31)
	data, err := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	m := Model{Kind: kind, H: 4, R: 1, Tau: 1}
	if kind == Merged {
		m.R = 0
	}
	s := newSys(t, data, m)
	y0, err := s.Init(0.01, seed)
	if err != nil {
		t.Fatal(err)
	}
	return s, y0
}

// TestLossCoordinates: Loss takes the original basis and LossEigen eigen
// coordinates; for the same state they agree, and passing the original
// state to LossEigen gives a different (wrong) number — the mistake the
// names guard against.
func TestLossCoordinates(t *testing.T) {
	s, y0 := paperExample(t, Separate, 3)
	ye := s.ToEigen(nil, y0)
	if a, b := s.Loss(y0), s.LossEigen(ye); a != b {
		t.Errorf("Loss(original) = %.17g, LossEigen(eigen) = %.17g", a, b)
	}
	if s.LossEigen(y0) == s.Loss(y0) {
		t.Error("the original state read as eigen coordinates gives the same loss; the test state is too symmetric")
	}
	if a := testing.AllocsPerRun(10, func() { s.Loss(y0) }); a != 0 {
		t.Errorf("Loss allocates %v times", a)
	}
}
