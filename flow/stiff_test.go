package flow

import (
	"context"
	"flag"
	"math"
	"testing"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
)

// powerLawExample is `linattn run -D d -H d -spectrum power:1`: λ_k ∝ 1/k
// with trace 1, eigenvectors random:1, N = 31, R = 1, w_init = 0.01, seed 3.
func powerLawExample(t testing.TB, d int) (*System, []float64) {
	t.Helper()
	nu, _ := law.NuFixed(31)
	data, err := law.NewData(law.PowerLaw(d, 1, 1), law.RandomRotation(d, 1), law.Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	s := newSys(t, data, Model{Kind: Separate, H: d, R: 1, Tau: 1})
	y0, err := s.Init(0.01, 3)
	if err != nil {
		t.Fatal(err)
	}
	return s, y0
}

// stiffFull adds Rodas5P and Radau5 on the D = 8 power-law run to
// TestStiffMethodsMatchDOP853 (about 10 s more; by default those two are
// checked on the paper's D = 4 example only, the other methods on both):
// go test ./flow -run StiffMethodsMatchDOP853 -stiff.full.
var stiffFull = flag.Bool("stiff.full", false, "TestStiffMethodsMatchDOP853: Rodas5P and Radau5 on the D = 8 power-law run too")

// TestStiffMethodsMatchDOP853: on the paper's D = 4 example and the D = 8
// power-law run, BDF, Auto, ROCK4, Rodas5P and Radau5 at their default tolerances give
// every drop time t_m to 10⁻⁶ relative and the loss at the end to 10⁻⁹
// relative of DOP853 at rtol 10⁻¹² (computed here). Rodas5P and Radau5,
// whose dense factorizations dominate the test at D = 8 (n = 136), run on
// the D = 8 example only with -stiff.full.
func TestStiffMethodsMatchDOP853(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: ~2 s")
	}
	type example struct {
		name string
		s    *System
		y0   []float64
		T    float64 // past the last drop
		// dense: also Rodas5P and Radau5
		dense bool
	}
	s4, y4 := paperExample(t, Separate, 3)
	s8, y8 := powerLawExample(t, 8)
	for _, ex := range []example{{"paper D=4", s4, y4, 3.5e4, true}, {"power-law D=8", s8, y8, 8e5, *stiffFull}} {
		ref, err := ex.s.Run(context.Background(), ex.y0, RunSettings{T: ex.T, Times: []float64{0}, Method: ode.DOP853, RTol: 1e-12, ATol: 1e-16, MaxSteps: 1e7})
		if err != nil {
			t.Fatal(err)
		}
		if len(ref.Transitions) != ex.s.Dim() {
			t.Fatalf("%s: reference has %d drops, want %d", ex.name, len(ref.Transitions), ex.s.Dim())
		}
		methods := []ode.Method{ode.BDF, ode.Auto, ode.ROCK4}
		if ex.dense {
			methods = append(methods, ode.Rodas5P, ode.Radau5)
		}
		for _, m := range methods {
			tr, err := ex.s.Run(context.Background(), ex.y0, RunSettings{T: ex.T, Times: []float64{0}, Method: m})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Transitions) != len(ref.Transitions) {
				t.Errorf("%s, %s: %d drops, want %d", ex.name, m.Name(), len(tr.Transitions), len(ref.Transitions))
				continue
			}
			var worst float64
			for i, want := range ref.Transitions {
				worst = math.Max(worst, math.Abs(tr.Transitions[i].T-want.T)/want.T)
			}
			lossErr := math.Abs(tr.FinalLoss-ref.FinalLoss) / ref.FinalLoss
			if worst > 1e-6 || lossErr > 1e-9 {
				t.Errorf("%s, %s: drop times to %.3g relative, final loss to %.3g; want 1e-6 and 1e-9", ex.name, m.Name(), worst, lossErr)
			}
			t.Logf("%s, %s: drop times to %.2g, final loss to %.2g; %d steps, %d evaluations (DOP853 at 1e-12: %d, %d)",
				ex.name, m.Name(), worst, lossErr, tr.Stats.Steps, tr.Stats.FuncEvals, ref.Stats.Steps, ref.Stats.FuncEvals)
		}
	}
}

// TestMethodFor: the plan's method: Run's default integrator is BDF for the full layer under
// a task law with fixed tasks (factored densely) and for the separate
// model's in-context flow from D = BDFMinDim (block preconditioner), Auto
// elsewhere: the merged model, the separate one below BDFMinDim, the full
// layer on in-context data (the reduced flow's method, which its run from
// zero extra blocks is) and a full layer too large to factor (merged,
// H = D = 16: n = H(D+1)² = 4624), which BDF runs by Newton–Krylov.
func TestMethodFor(t *testing.T) {
	sep := Model{Kind: Separate, H: 4, R: 1, Tau: 1}
	full := Model{Kind: Merged, H: 8, Tau: 1, Layer: FullLayer}
	big := Model{Kind: Merged, H: 16, Tau: 1, Layer: FullLayer}
	for _, tc := range []struct {
		name      string
		m         Model
		d         int
		inContext bool
		want      ode.Method
	}{
		{"separate D=4", sep, 4, true, ode.Auto},
		{"separate D=15", sep, BDFMinDim - 1, true, ode.Auto},
		{"separate D=16", sep, BDFMinDim, true, ode.BDF},
		{"separate D=16 fixed tasks", sep, BDFMinDim, false, ode.Auto},
		{"separate D=16, two layers", Model{Kind: Separate, H: 4, R: 1, Tau: 1, Layers: 2}, BDFMinDim, true, ode.BDF},
		{"merged D=8, two layers", Model{Kind: Merged, H: 8, Tau: 1, Layers: 2}, 8, true, ode.Auto},
		{"merged D=32", Model{Kind: Merged, H: 32, Tau: 1}, 32, true, ode.Auto},
		{"full D=8 fixed tasks", full, 8, false, ode.BDF},
		{"full D=8 in context", full, 8, true, ode.Auto},
		{"full D=16 fixed tasks, n > MaxDenseDim", big, 16, false, ode.BDF},
	} {
		data := planData(t, tc.d, tc.inContext)
		if got := PlanFor(tc.m, data).Method; got != tc.want {
			t.Errorf("%s (n = %d): %s, want %s", tc.name, tc.m.StateLen(tc.d), got.Name(), tc.want.Name())
		}
	}
}

// planData is the paper's task at dimension d (λ_d ∝ 1/d, N = 31), or
// with half the tasks one fixed vector.
func planData(t *testing.T, d int, inContext bool) *law.Data {
	t.Helper()
	lam := make([]float64, d)
	for i := range lam {
		lam[i] = 1 / float64(i+1)
	}
	data, err := law.NewData(lam, nil, law.Lengths{N: 31})
	if err != nil {
		t.Fatal(err)
	}
	if inContext {
		return data
	}
	w0 := make([]float64, d)
	w0[0] = 1
	if data, err = data.WithTasks(law.Tasks{ICL: 0.5, Fixed: [][]float64{w0}}); err != nil {
		t.Fatal(err)
	}
	return data
}
