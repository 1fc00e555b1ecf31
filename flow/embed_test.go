package flow

import (
	"context"
	"math"
	"slices"
	"testing"
)

// TestRunFullLayerAsReduced: the full layer's Run from Init (zero extra
// blocks) with zero settings under an in-context law whose methods
// differ (label noise σ² = 0.1: the plan picks BDF for the full layer,
// Auto for the reduced one) is the reduced layer's Run bit for bit, loss
// and states, and reports the reduced layer's method, which it ran
// (System.Settings). With the states thinned (StateEvery) and the test
// losses asked for, it holds the kept states alone, at the same times,
// padded with zero extra blocks, and its test losses are the full
// layer's, to the interpolation's error (10⁻⁸ of the loss's fall), at
// the output times (Sample: the states there).
func TestRunFullLayerAsReduced(t *testing.T) {
	t.Parallel()
	tc := lawCase{lam: []float64{0.4, 0.3, 0.2, 0.1}, n: 31, icl: 1, k: 1, noise: 0.1, m: Model{Kind: Merged, H: 4, Tau: 1}}
	data := lawData(t, tc, 1)
	red := newSys(t, data, tc.m)
	tc.m.Layer = FullLayer
	full := newSys(t, data, tc.m)
	if a, b := full.Plan().Method, red.Plan().Method; a.Name() == b.Name() {
		t.Fatalf("the plans pick %s for both layers: the test needs a law where they differ", a.Name())
	}
	yf, _ := full.Init(DefaultWInit, DefaultSeed)
	if got, want := full.Settings(yf, RunSettings{}).Method.Name(), red.Plan().Method.Name(); got != want {
		t.Errorf("Settings resolves %s, want the reduced layer's %s", got, want)
	}
	for _, rs := range []RunSettings{{}, {T: 2000, Samples: 41, StateEvery: 3}} {
		a, err := red.Run(context.Background(), nil, rs)
		if err != nil {
			t.Fatal(err)
		}
		b, err := full.Run(context.Background(), nil, rs)
		if err != nil {
			t.Fatal(err)
		}
		if b.Resolved != a.Resolved || b.Resolved.Method.Name() != red.Plan().Method.Name() {
			t.Errorf("%+v: the full layer resolved %+v, the reduced %+v", rs, b.Resolved, a.Resolved)
		}
		nr, nf := red.Len(), full.Len()
		if len(a.Loss) != len(b.Loss) || len(b.States)/nf != len(a.States)/nr || !slices.Equal(b.StateTimes, a.StateTimes) ||
			(b.Sampling == Interpolated) != (rs.StateEvery > 1) {
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
		}
		fullTestLosses(t, full, b)
	}
}

// fullTestLosses checks the test losses of tr, a run of the full layer
// s, against s's at the states of tr's extension at its output times, to
// 10⁻⁸ of the loss's fall.
func fullTestLosses(t *testing.T, s *System, tr *Trajectory) {
	t.Helper()
	states, _, err := tr.Sample(tr.Times)
	if err != nil {
		t.Fatal(err)
	}
	n, fall := s.Len(), tr.Loss[0]-tr.FinalLoss
	for i := range tr.Times {
		icl, iwl, idg := s.TestLosses(states[i*n : (i+1)*n])
		got, want := []float64{tr.TestICL[i], tr.TestIWL[i], tr.TestIDG[i]}, []float64{icl, iwl, idg}
		for k := range got {
			if !sameFloat(got[k], want[k]) && !(math.Abs(got[k]-want[k]) <= 1e-8*fall) {
				t.Fatalf("sample %d: test losses %v, want the full layer's %v", i, got, want)
			}
		}
	}
}

// sameFloat reports whether a and b are equal or both NaN.
func sameFloat(a, b float64) bool { return a == b || (a != a && b != b) }
