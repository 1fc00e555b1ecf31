package flow

import (
	"context"
	"testing"
)

// TestRunFullLayerAsReduced: the full layer's Run from Init (zero extra
// blocks) with zero settings under an in-context law whose methods
// differ (label noise σ² = 0.1: MethodFor picks BDF for the full layer,
// Auto for the reduced one) is the reduced layer's Run bit for bit, loss
// and states, and reports the reduced layer's method, which it ran
// (System.Settings). With the states thinned (StateEvery) and the test
// losses asked for, it holds the kept states alone, padded with zero extra
// blocks, and its test losses are the full layer's at them.
func TestRunFullLayerAsReduced(t *testing.T) {
	t.Parallel()
	tc := lawCase{lam: []float64{0.4, 0.3, 0.2, 0.1}, n: 31, icl: 1, k: 1, noise: 0.1, m: Model{Kind: Merged, H: 4, Tau: 1}}
	data := lawData(t, tc, 1)
	red := newSys(t, data, tc.m)
	tc.m.Layer = FullLayer
	full := newSys(t, data, tc.m)
	if a, b := MethodFor(full.Model, 4, false), MethodFor(red.Model, 4, false); a.Name() == b.Name() {
		t.Fatalf("MethodFor picks %s for both layers: the test needs a law where they differ", a.Name())
	}
	yf, _ := full.Init(DefaultWInit, DefaultSeed)
	if got, want := full.Settings(yf, RunSettings{}).Method.Name(), MethodFor(red.Model, 4, false).Name(); got != want {
		t.Errorf("Settings resolves %s, want the reduced layer's %s", got, want)
	}
	for _, rs := range []RunSettings{{}, {T: 2000, Samples: 41, TestLosses: true, StateEvery: 3}} {
		a, err := red.Run(context.Background(), nil, rs)
		if err != nil {
			t.Fatal(err)
		}
		b, err := full.Run(context.Background(), nil, rs)
		if err != nil {
			t.Fatal(err)
		}
		if b.Resolved != a.Resolved || b.Resolved.Method.Name() != MethodFor(red.Model, 4, false).Name() {
			t.Errorf("%+v: the full layer resolved %+v, the reduced %+v", rs, b.Resolved, a.Resolved)
		}
		nr, nf := red.Len(), full.Len()
		if len(a.Loss) != len(b.Loss) || len(b.States)/nf != len(a.States)/nr || len(b.StateIndex) != len(a.StateIndex) {
			t.Fatalf("%+v: %d samples, %d states (full), %d, %d (reduced)", rs, len(b.Loss), len(b.States)/nf, len(a.Loss), len(a.States)/nr)
		}
		for i, l := range a.Loss {
			if b.Loss[i] != l || b.Times[i] != a.Times[i] {
				t.Fatalf("%+v: sample %d: (%g, %.17g) reduced, (%g, %.17g) full", rs, i, a.Times[i], l, b.Times[i], b.Loss[i])
			}
		}
		for row := 0; row < len(a.States)/nr; row++ {
			y := b.States[row*nf : (row+1)*nf]
			for j, x := range y {
				if (j < nr && x != a.States[row*nr+j]) || (j >= nr && x != 0) {
					t.Fatalf("%+v: state %d: entry %d is %g", rs, row, j, x)
				}
			}
			if !rs.TestLosses {
				continue
			}
			i := b.StateIndex[row]
			icl, iwl, idg := full.TestLosses(y)
			if b.TestICL[i] != icl || !sameFloat(b.TestIWL[i], iwl) || !sameFloat(b.TestIDG[i], idg) {
				t.Errorf("%+v: sample %d: test losses %g, %g, %g, want the full layer's %g, %g, %g",
					rs, i, b.TestICL[i], b.TestIWL[i], b.TestIDG[i], icl, iwl, idg)
			}
		}
	}
}

// sameFloat reports whether a and b are equal or both NaN.
func sameFloat(a, b float64) bool { return a == b || (a != a && b != b) }
