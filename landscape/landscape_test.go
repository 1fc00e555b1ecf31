package landscape

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

func paperSystem(t testing.TB, kind flow.Kind) *flow.System {
	t.Helper()
	nu, _ := law.NuFixed(31)
	data, err := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	m := flow.Model{Kind: kind, H: 4, R: 1, Tau: 1}
	if kind == flow.Merged {
		m.R = 0
	}
	s, err := flow.NewSystem(data, m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func randomSystem(t testing.TB, d, h, r int, seed uint64) *flow.System {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	lam := make([]float64, d)
	for i := range lam {
		lam[i] = 0.05 + rng.Float64()
	}
	nu, _ := law.NuNextToken(5 + d)
	data, err := law.NewData(lam, law.RandomRotation(d, seed), law.Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: h, R: r, Tau: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mapOriginal forms M = Σ v_i k_{i,r} q_{i,r}ᵀ directly in the original basis.
func mapOriginal(s *flow.System, y []float64) *mat.Dense {
	d := s.Dim()
	k, q := s.Keys(y), s.Queries(y)
	m := mat.NewDense(d, d, nil)
	for row := 0; row < s.Model.H*s.Model.R; row++ {
		vi := y[row/s.Model.R]
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				m.Set(a, b, m.At(a, b)+vi*k.At(row, a)*q.At(row, b))
			}
		}
	}
	return m
}

func TestEnumerate(t *testing.T) {
	s := paperSystem(t, flow.Separate)
	var n, onPath int
	err := Enumerate(s.Data, func(sub Subset) error {
		n++
		if sub.OnPath {
			onPath++
			if sub.Mask != (1<<sub.Size)-1 {
				t.Errorf("mask %b on the path, want a prefix {1..m}", sub.Mask)
			}
		}
		if want := s.Data.LossOfSubset(Indices(sub.Mask)); math.Abs(sub.Loss-want) > 1e-15 {
			t.Errorf("mask %b: loss %v, want %v", sub.Mask, sub.Loss, want)
		}
		return nil
	})
	if err != nil || n != 16 || onPath != 5 {
		t.Errorf("err=%v, %d subsets, %d on the path; want 16 and D+1 = 5", err, n, onPath)
	}
	// Ties: with λ = (0.35, 0.35, 0.15, 0.15) (paper, "Dynamics with
	// repeated eigenvalues") {1}, {2}, {1,2}, {1,2,3}, {1,2,4}, ∅ and the
	// full set can all be visited.
	tied, _ := law.NewData([]float64{0.35, 0.35, 0.15, 0.15}, nil, law.Lengths{Nu: 1.0 / 31})
	var masks []uint64
	Enumerate(tied, func(sub Subset) error {
		if sub.OnPath {
			masks = append(masks, sub.Mask)
		}
		return nil
	})
	want := []uint64{0b0000, 0b0001, 0b0010, 0b0011, 0b0111, 0b1011, 0b1111}
	if len(masks) != len(want) {
		t.Fatalf("tied spectrum: on-path masks %b, want %b", masks, want)
	}
	for i := range want {
		if masks[i] != want[i] {
			t.Errorf("tied spectrum: on-path masks %b, want %b", masks, want)
		}
	}
	stop := errors.New("stop")
	if err := Enumerate(s.Data, func(Subset) error { return stop }); err != stop {
		t.Errorf("Enumerate did not stop: %v", err)
	}
}

// TestConfigurationsAreFixedPoints: for random non-diagonal Λ and D up to 6,
// every configuration has a right-hand side below 1e-12 and its loss, from
// the population loss of its weights, equals L(S).
func TestConfigurationsAreFixedPoints(t *testing.T) {
	for d := 1; d <= 6; d++ {
		for _, r := range []int{1, 2} {
			if r > d {
				continue
			}
			s := randomSystem(t, d, d, r, uint64(10*d+r))
			for mask := uint64(0); mask < 1<<d; mask++ {
				y, err := Configuration(s, mask)
				if err != nil {
					t.Fatal(err)
				}
				ye := s.ToEigen(nil, y)
				dy := make([]float64, s.Len())
				s.DerivEigen(dy, ye)
				var nrm float64
				for _, x := range dy {
					nrm += x * x
				}
				if math.Sqrt(nrm) > 1e-12 {
					t.Errorf("D=%d R=%d S=%v: |dy/dt| = %.3g", d, r, Indices(mask), math.Sqrt(nrm))
				}
				direct := s.Data.LossOfMap(mapOriginal(s, y))
				if want := s.Data.LossOfSubset(Indices(mask)); math.Abs(direct-want) > 1e-13 {
					t.Errorf("D=%d S=%v: population loss %.15g, L(S) = %.15g", d, Indices(mask), direct, want)
				}
			}
		}
	}
}

func TestConfigurationPacking(t *testing.T) {
	// H < |S| ≤ H·R packs R eigenvectors per head and is still a fixed
	// point; beyond H·R it cannot be realized.
	s := randomSystem(t, 4, 2, 2, 3)
	y, err := Configuration(s, 0b1111)
	if err != nil {
		t.Fatal(err)
	}
	dy := make([]float64, s.Len())
	s.DerivEigen(dy, s.ToEigen(nil, y))
	for _, x := range dy {
		if math.Abs(x) > 1e-13 {
			t.Fatalf("packed configuration is not a fixed point: %v", dy)
		}
	}
	s1 := randomSystem(t, 4, 2, 1, 3)
	if _, err := Configuration(s1, 0b0111); err == nil {
		t.Error("|S| = 3 > H·R = 2: no error")
	}
}

// TestPaperStability: for the paper's D = 4 example the empty set and the
// path points {1}, {1,2}, {1,2,3} are not strict saddles (they escape only
// through dormant heads, at rate λ_d²/τ), S = {2} is a strict saddle, and the
// full set is the minimum (paper section 4.3 and docs/math.md "Fixed points").
func TestPaperStability(t *testing.T) {
	s := paperSystem(t, flow.Separate)
	for mask := uint64(0); mask < 16; mask++ {
		p, err := AnalyzeSubset(s, mask)
		if err != nil {
			t.Fatal(err)
		}
		st := p.Stability
		if st.Residual > 1e-12 || st.MaxAsymmetry > 1e-12 {
			t.Errorf("S=%v: residual %.3g, asymmetry %.3g", Indices(mask), st.Residual, st.MaxAsymmetry)
		}
		switch {
		case mask == 0b1111:
			if st.Class != Minimum || !st.Global || st.Positive != 0 {
				t.Errorf("full set: %v (global %v, %d positive)", st.Class, st.Global, st.Positive)
			}
		case p.OnPath:
			if st.Class != HigherOrderSaddle || st.Positive != 0 {
				t.Errorf("path point %v: %v with %d positive eigenvalues", Indices(mask), st.Class, st.Positive)
			}
			// The fastest escape is through the next eigenvector.
			best := 0.0
			for _, e := range st.Escapes {
				best = math.Max(best, e.Rate)
			}
			next := s.Data.Lambda()[p.Size]
			if math.Abs(best-next*next) > 1e-15 {
				t.Errorf("path point %v: fastest escape %v, want λ_%d² = %v", Indices(mask), best, p.Size+1, next*next)
			}
		case mask == 0b0010:
			if st.Class != StrictSaddle {
				t.Errorf("S = {2}: %v, want strict saddle", st.Class)
			}
		}
		// Off the path, every point is a strict saddle: a larger eigenvalue
		// is left unlearned while a smaller one is.
		if !p.OnPath && st.Class != StrictSaddle {
			t.Errorf("S=%v off the path: %v", Indices(mask), st.Class)
		}
		// The Hessian of the loss: its trace, Σ of HessianEigenvalues, equals
		// Σ_i ∂²L/∂y_i² by central second differences of the loss alone.
		var trace float64
		for _, h := range st.HessianEigenvalues {
			trace += h
		}
		if fd := lossHessianTrace(s, p.State); math.Abs(trace-fd) > 1e-6*math.Abs(fd) {
			t.Errorf("S=%v: Σ Hessian eigenvalues %.10g, trace of the finite-difference Hessian of L %.10g", Indices(mask), trace, fd)
		}
	}
}

// lossHessianTrace is Σ_i (L(y + h e_i) − 2L(y) + L(y − h e_i))/h² in eigen
// coordinates (the trace is the same in any orthonormal basis); L is a
// polynomial of degree 6, so h = 1e-4 leaves an error of order h².
func lossHessianTrace(s *flow.System, y []float64) float64 {
	ye := s.ToEigen(nil, y)
	l0 := s.LossEigen(ye)
	const h = 1e-4
	var tr float64
	for i := range ye {
		orig := ye[i]
		ye[i] = orig + h
		lp := s.LossEigen(ye)
		ye[i] = orig - h
		lm := s.LossEigen(ye)
		ye[i] = orig
		tr += (lp - 2*l0 + lm) / (h * h)
	}
	return tr
}

// TestMergedFixedPoints: the merged model's zero is unstable with rate
// ‖Λ²‖_F/τ (paper appendix "Early dynamics": the linear system
// τẆ₁ = w₂E[yzᵀ], τẇ₂ = W₁E[yz] grows at γ = ‖E[yz]‖ = ‖Λ²‖_F), and its
// global minimum is a minimum.
func TestMergedFixedPoints(t *testing.T) {
	for _, tau := range []float64{1, 2.5} {
		nu, _ := law.NuFixed(31)
		data, _ := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{Nu: nu})
		s, err := flow.NewSystem(data, flow.Model{Kind: flow.Merged, H: 3, Tau: tau})
		if err != nil {
			t.Fatal(err)
		}
		pts, err := MergedFixedPoints(s)
		if err != nil {
			t.Fatal(err)
		}
		var f float64
		for _, l := range data.Lambda() {
			f += l * l * l * l
		}
		for _, p := range pts {
			st, err := Analyze(s, p.State, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st.Residual > 1e-13 {
				t.Errorf("%s: residual %.3g", p.Name, st.Residual)
			}
			if l := s.Loss(p.State); math.Abs(l-p.Loss) > 1e-14 {
				t.Errorf("%s: loss %v, want %v", p.Name, l, p.Loss)
			}
			switch p.Name {
			case "zero":
				if st.Class != StrictSaddle || math.Abs(st.UnstableRate-math.Sqrt(f)/tau) > 1e-14 {
					t.Errorf("zero: %v, rate %.15g, want ‖Λ²‖_F/τ = %.15g", st.Class, st.UnstableRate, math.Sqrt(f)/tau)
				}
				if st.Positive != s.Model.H {
					t.Errorf("zero: %d unstable directions, want one per head (%d)", st.Positive, s.Model.H)
				}
			case "minimum":
				if st.Class != Minimum || !st.Global {
					t.Errorf("minimum: %v, global %v", st.Class, st.Global)
				}
			}
		}
	}
}
