package flow

import (
	"context"
	"math"
	"testing"
)

// TestSettleDetector on curves sampled 100 times a decade: the initial
// plateau never settles however long (no drop yet); a curve that keeps
// falling by more than the tolerance a decade never settles; one that is
// flat to the tolerance after its drop settles a decade after it flattened.
func TestSettleDetector(t *testing.T) {
	const tol = 1e-6
	curves := map[string]struct {
		loss   func(t float64) float64
		settle float64 // the time it settles at, 0: never
	}{
		"initial plateau":  {func(t float64) float64 { return 1 - 1e-12*t }, 0},
		"slow fall":        {func(t float64) float64 { return 0.5 + 1e-2/math.Log10(10*t) }, 0},
		"flat after drops": {func(t float64) float64 { return 0.5 + 0.5/(1+math.Pow(t/100, 8)) }, 0},
	}
	// flat after drops: L − 0.5 = 0.5(t/100)^−8 falls below tol/2 by t ≈ 510,
	// so [t/10, t] is flat to tol from t ≈ 5100 on.
	c := curves["flat after drops"]
	c.settle = 5100
	curves["flat after drops"] = c
	for name, c := range curves {
		d := &settleDetector{l0: c.loss(0), tol: tol, drop: 0.01 * 0.5}
		got := 0.0
		for k := 0; k <= 1000; k++ {
			tt := math.Pow(10, float64(k)/100-2) // 0.01 … 1e8
			if d.add(tt, c.loss(tt)) {
				got = tt
				break
			}
		}
		if (c.settle == 0) != (got == 0) || (got != 0 && math.Abs(got-c.settle) > 0.1*c.settle) {
			t.Errorf("%s: settled at t = %g, want %g (0: never)", name, got, c.settle)
		}
	}
}

// TestRunSettles: a reduced separate layer with one head (R·H = 1 < D)
// under fixed tasks has no known least loss; run until converged, it
// learns, then settles above the least loss over all maps, and says so.
func TestRunSettles(t *testing.T) {
	tc := lawCase{lam: []float64{0.4, 0.3, 0.2, 0.1}, n: 31, icl: 0.5, k: 1, m: Model{Kind: Separate, H: 1, R: 1, Tau: 1}}
	s := newSys(t, lawData(t, tc, 2), tc.m)
	if !math.IsNaN(s.MinLoss()) || !s.ExpressivityLimited {
		t.Fatalf("MinLoss %g, limited %v: want NaN, true", s.MinLoss(), s.ExpressivityLimited)
	}
	y0, _ := s.Init(0.01, 3)
	tr, err := s.Run(context.Background(), y0, RunSettings{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v at t = %.4g, loss %.6g → %.6g (bound %.6g), drops %v", tr.Status, tr.FinalT, s.Loss(y0), tr.FinalLoss, s.lossFloor(), len(tr.Transitions))
	if tr.Status != LossSettled || !(tr.FinalLoss > s.lossFloor()) || !(tr.FinalLoss < 0.9*s.Loss(y0)) {
		t.Errorf("status %v, loss %g → %g, bound %g", tr.Status, s.Loss(y0), tr.FinalLoss, s.lossFloor())
	}
}
