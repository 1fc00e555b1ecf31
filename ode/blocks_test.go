package ode

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestBlockSourceStops: a dense solve long enough to fill full-size blocks
// starts the goroutine that makes them ahead, and ends it when it returns,
// whether it kept the solution or dropped it at DenseLimit; the kept
// solution is the same either way.
func TestBlockSourceStops(t *testing.T) {
	const n = 400
	f := func(_ float64, y, dy []float64) {
		for i := range y {
			dy[i] = -float64(i%7+1) * y[i]
		}
	}
	y0 := make([]float64, n)
	for i := range y0 {
		y0[i] = 1
	}
	p := Problem{Func: f, T0: 0, T1: 10, Y0: y0}
	before := runtime.NumGoroutine()
	for _, lim := range []int{0, 3 * solutionBlockMax} {
		res, err := Solve(context.Background(), p, Settings{Method: ROCK4, MaxStep: 0.005, Dense: true, DenseLimit: lim})
		if err != nil {
			t.Fatal(err)
		}
		if lim == 0 && (res.Solution == nil || res.Solution.size < 2*solutionBlockMax) {
			t.Fatalf("the solve stored too little to use full-size blocks")
		}
		if lim > 0 && res.Solution != nil {
			t.Errorf("DenseLimit %d: solution kept (%d values)", lim, res.Solution.size)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines after the solves, %d before", g, before)
	}
}
