package ode_test

import (
	"math"
	"strings"
	"testing"

	"github.com/linattn/linattn/ode"
)

// heunEuler is the Heun–Euler 2(1) pair (HNW I, II.4): stages k₀ = f(y),
// k₁ = f(y + h k₀); y₁ = y + h(k₀ + k₁)/2; the embedded Euler step
// ŷ = y + h k₀, so E = b − b̂ = (−1/2, 1/2, 0) over k₀, k₁ and the FSAL
// stage. Its continuous extension is the linear interpolant F₁ = y₁ − y.
func heunEuler() ode.Tableau {
	return ode.Tableau{
		Name: "HeunEuler", Order: 2, ErrorOrder: 1, DenseOrder: 1,
		C:     []float64{0, 1},
		A:     [][]float64{{}, {1}},
		B:     []float64{0.5, 0.5},
		E:     []float64{-0.5, 0.5, 0},
		Dense: [][]float64{{0.5, 0.5}},
	}
}

// TestUserDefinedRK builds the Heun–Euler pair with NewRK: with fixed steps
// on y' = −y its error falls as h², and adaptively it meets the tolerance.
func TestUserDefinedRK(t *testing.T) {
	m, err := ode.NewRK(heunEuler())
	if err != nil {
		t.Fatal(err)
	}
	decay := ode.Problem{Func: func(_ float64, y, dy []float64) { dy[0] = -y[0] }, T0: 0, T1: 1, Y0: []float64{1}}
	exact := math.Exp(-1)
	var errs []float64
	for _, h := range []float64{0.01, 0.005} {
		res := solve(t, decay, ode.Settings{Method: m, FixedStep: h})
		errs = append(errs, math.Abs(res.Y[0]-exact))
	}
	if p := math.Log2(errs[0] / errs[1]); math.Abs(p-2) > 0.05 {
		t.Errorf("Heun–Euler: observed order %.3f, want 2", p)
	}
	res := solve(t, decay, ode.Settings{Method: m, RTol: 1e-6, ATol: 1e-9})
	if e := math.Abs(res.Y[0] - exact); e > 1e-5 {
		t.Errorf("Heun–Euler adaptive: error %.3g at rtol 1e-6", e)
	}
	// The method is immutable: changing the returned copy changes nothing.
	tab := m.Tableau()
	tab.B[0] = 7
	if m.Tableau().B[0] != 0.5 {
		t.Error("Tableau() returned the method's own coefficients")
	}
}

// TestNewRKValidates: a malformed tableau is refused with an error that
// names the offending field.
func TestNewRKValidates(t *testing.T) {
	for _, tc := range []struct {
		edit func(*ode.Tableau)
		want string
	}{
		{func(tb *ode.Tableau) { tb.Name = "" }, "Tableau.Name"},
		{func(tb *ode.Tableau) { tb.B = tb.B[:1] }, "len(B) = 1"},
		{func(tb *ode.Tableau) { tb.A[1] = []float64{0.9} }, "stage 1: Σ_j a_ij − c_i"},
		{func(tb *ode.Tableau) { tb.B = []float64{0.4, 0.5} }, "Σ B − 1"},
		{func(tb *ode.Tableau) { tb.E = []float64{-0.5, 0.4, 0} }, "Σ E"},
		{func(tb *ode.Tableau) { tb.Dense = [][]float64{{0.4, 0.6}} }, "Dense[0][0]"},
		{func(tb *ode.Tableau) { tb.Order = 0 }, "Order = 0"},
		{func(tb *ode.Tableau) { tb.MinScale = 2 }, "MinScale = 2"},
	} {
		tab := heunEuler()
		tc.edit(&tab)
		_, err := ode.NewRK(tab)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %q", err, tc.want)
		}
	}
}

// TestMethodByName: every listed name gives the method of that name, and
// an unknown one none.
func TestMethodByName(t *testing.T) {
	t.Parallel()
	want := map[string]string{"auto": "Auto(DOP853,ROCK4)", "bdf": "BDF", "rock4": "ROCK4", "rodas5p": "Rodas5P", "radau5": "Radau5",
		"dop853": "DOP853", "dp5": "DP5", "tsit5": "Tsit5"}
	names := ode.MethodNames()
	if len(names) != len(want) {
		t.Errorf("MethodNames() = %v", names)
	}
	for _, n := range names {
		if m, ok := ode.MethodByName(n); !ok || m.Name() != want[n] {
			t.Errorf("MethodByName(%q) = %v, %v; want %s", n, m, ok, want[n])
		}
	}
	if m, ok := ode.MethodByName("rk4"); ok || m != nil {
		t.Errorf("MethodByName(rk4) = %v, %v", m, ok)
	}
}
