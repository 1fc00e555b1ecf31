package flow

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/linattn/linattn/flow/internal/deflation"
	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/ode/replay"
)

// TestSampleForks: sampling a run's thinned BDF extension in two and three
// goroutines, each but the first on a fork of its own (a copy of the
// System, a preconditioner of the run's kind and a fork of the extension),
// which take the groups of output times by replay origin one at a time,
// the last first, gives the serial sampling's losses and states bit for
// bit: the separate model with its block
// preconditioner, and the merged full layer with the deflation and its
// structured part. go test -race checks that they share nothing they
// write. The goroutines evaluate on a share each of the run's processors
// (RunSettings.Workers = 4: two each for two), the first on its own
// System, which has its count back after.
func TestSampleForks(t *testing.T) {
	t.Parallel()
	sep, y0 := powerLawSix(t)
	full := newSys(t, matfreeData(t, 6), Model{Kind: Merged, H: 6, Tau: 1, Layer: FullLayer})
	for _, c := range []struct {
		name string
		s    *System
		y0   []float64
	}{{"separate", sep, y0}, {"merged full", full, nil}} {
		tr, err := c.s.Run(context.Background(), c.y0, RunSettings{Samples: 301, Method: ode.BDF, Workers: 4})
		if err != nil || !tr.Dense() || !replay.Thinned(tr.dense) {
			t.Fatalf("%s: %v, dense %v: want the kept states thinned", c.name, err, tr != nil && tr.Dense())
		}
		if _, ok := tr.precond.(*deflation.Precond); c.s.Model.Kind == Merged && !ok {
			t.Fatalf("%s: preconditioner %T, want the deflation", c.name, tr.precond)
		}
		if g := len(tr.sampleGroups(tr.Times, 1)) - 1; g <= 3 {
			t.Fatalf("%s: %d groups of output times by replay origin, want more than the goroutines, so that they share them out of order", c.name, g)
		}
		serial := sampleOn(t, tr, 1)
		for _, w := range []int{2, 3} {
			got := sampleOn(t, tr, w)
			for k := range serial {
				for i, x := range serial[k] {
					if math.Float64bits(got[k][i]) != math.Float64bits(x) {
						t.Fatalf("%s, %d ranges: output %d, entry %d: %v, serially %v", c.name, w, k, i, got[k][i], x)
					}
				}
			}
		}
		if rs := tr.forkReplays; rs.Steps == 0 {
			t.Errorf("%s: the forks took no step again: the replay in forks is not tested", c.name)
		}
		var mu sync.Mutex
		shares := map[int]bool{}
		tr.sampleParallel(tr.Times[:64], 2, func(int, int) bool { return false }, func(on *Trajectory, lo, hi int) error {
			mu.Lock()
			defer mu.Unlock()
			shares[on.sys.workers] = true
			return nil
		})
		if !shares[2] || len(shares) != 1 || c.s.workers != 0 {
			t.Errorf("%s: two goroutines on 4 processors evaluated on %v processors each, want 2; the System has %d after, want 0 (all) as before", c.name, shares, c.s.workers)
		}
	}
}

// sampleOn samples tr at its output times in w goroutines
// (sampleParallel; 1: serially) and returns the states and the loss.
func sampleOn(t *testing.T, tr *Trajectory, w int) [][]float64 {
	t.Helper()
	times, n := tr.Times, tr.sys.n+tr.pad
	states, loss := make([]float64, len(times)*n), make([]float64, len(times))
	fill := func(on *Trajectory, lo, hi int) error {
		return on.sampleRange(context.Background(), times, lo, hi, states, loss)
	}
	var err error
	if w == 1 {
		err = fill(tr, 0, len(times))
	} else {
		err = tr.sampleParallel(times, w, func(int, int) bool { return false }, fill)
	}
	if err != nil {
		t.Fatal(err)
	}
	return [][]float64{states, loss}
}
