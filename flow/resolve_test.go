package flow

import (
	"context"
	"testing"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
)

// TestRunReportsResolved: a run reports in Trajectory.Resolved the
// settings it ran with: the defaults (Plan.Method, Tolerances,
// DefaultTol, DefaultSamples) where its settings are zero, the given
// values elsewhere.
func TestRunReportsResolved(t *testing.T) {
	t.Parallel()
	data, err := law.NewData([]float64{0.5, 0.25}, nil, law.Lengths{N: 10})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSystem(data, Model{Kind: Merged, H: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rs   RunSettings
		want Resolved
	}{
		// Auto below D = BDFMinDim (Plan.Method); a switching method has
		// DefaultRTol, DefaultATol; until converged with DefaultTol.
		{RunSettings{}, Resolved{Method: ode.Auto, RTol: DefaultRTol, ATol: DefaultATol, Tol: DefaultTol, Samples: DefaultSamples}},
		// DOP853, an explicit pair: ExplicitRTol, ExplicitATol.
		{RunSettings{T: 20, Grid: GridLinear, Samples: 5, Method: ode.DOP853},
			Resolved{Method: ode.DOP853, RTol: ExplicitRTol, ATol: ExplicitATol, T: 20, Samples: 5, Grid: GridLinear}},
		{RunSettings{T: 20, Times: []float64{0, 10, 20}, RTol: 1e-6, ATol: 1e-9},
			Resolved{Method: ode.Auto, RTol: 1e-6, ATol: 1e-9, T: 20}},
	} {
		tr, err := s.Run(context.Background(), nil, tc.rs)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Resolved; got.Method.Name() != tc.want.Method.Name() || got.RTol != tc.want.RTol || got.ATol != tc.want.ATol ||
			got.T != tc.want.T || got.Tol != tc.want.Tol || got.Samples != tc.want.Samples || got.Grid != tc.want.Grid {
			t.Errorf("%+v: resolved %+v, want %+v", tc.rs, got, tc.want)
		}
		if s.Settings(nil, tc.rs).Resolved() != tr.Resolved {
			t.Errorf("%+v: Settings resolves %+v before the run, the run %+v", tc.rs, s.Settings(nil, tc.rs).Resolved(), tr.Resolved)
		}
	}
}

// TestResolveTolerances: BDF takes the explicit pairs' tight tolerances
// on the reduced and label–key layers and DefaultRTol, DefaultATol on the
// full layer (Tolerances), under which the plan picks BDF for a task law
// with fixed tasks; given tolerances stay.
func TestResolveTolerances(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m          Model
		standard   bool
		rtol, atol float64 // given
		wantMethod ode.Method
		wantR      float64
		wantA      float64
	}{
		{Model{Kind: Merged, H: 8, Layer: FullLayer}, false, 0, 0, ode.BDF, DefaultRTol, DefaultATol},
		{Model{Kind: Separate, H: 8, R: 1, Layer: FullLayer}, false, 0, 0, ode.BDF, DefaultRTol, DefaultATol},
		{Model{Kind: Merged, H: 8, Layer: FullLayer}, false, 1e-11, 1e-15, ode.BDF, 1e-11, 1e-15},
		{Model{Kind: Separate, H: 32, R: 1}, true, 0, 0, ode.BDF, ExplicitRTol, ExplicitATol},
	} {
		rs := PlanFor(tc.m, planData(t, 32, tc.standard)).Resolve(RunSettings{RTol: tc.rtol, ATol: tc.atol})
		if rs.Method.Name() != tc.wantMethod.Name() || rs.RTol != tc.wantR || rs.ATol != tc.wantA {
			t.Errorf("%v (standard %v): resolved %s, rtol %g, atol %g; want %s, %g, %g",
				tc.m, tc.standard, rs.Method.Name(), rs.RTol, rs.ATol, tc.wantMethod.Name(), tc.wantR, tc.wantA)
		}
	}
}

// TestResolveStateBytes: StateBytes bounds the states kept: at H = D and
// R = 1 (n = D(2D+1)) the 2001 default samples take 132 MB at D = 64, all
// kept within 160 MB, and 526 MB at D = 128, every 4th kept; a given
// StateEvery stays.
func TestResolveStateBytes(t *testing.T) {
	t.Parallel()
	const budget = 160 << 20
	for _, tc := range []struct {
		d, every, want int
	}{{64, 0, 1}, {128, 0, 4}, {128, 2, 2}} {
		m := Model{Kind: Separate, H: tc.d, R: 1}
		rs := PlanFor(m, planData(t, tc.d, true)).Resolve(RunSettings{StateBytes: budget, StateEvery: tc.every})
		if rs.StateEvery != tc.want {
			t.Errorf("D = %d, StateEvery %d: resolved %d, want %d", tc.d, tc.every, rs.StateEvery, tc.want)
		}
	}
}
