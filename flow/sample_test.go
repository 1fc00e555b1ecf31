package flow

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
)

// TestRunZeroSettings: Run with zero settings is linattn run: until
// converged, DefaultSamples times of the drops grid from 0 to the end,
// sampled on the kept extension, with the loss, the states, the four drops
// and flow's own status.
func TestRunZeroSettings(t *testing.T) {
	t.Parallel()
	s, y0 := paperExample(t, Separate, 3)
	tr, err := s.Run(context.Background(), y0, RunSettings{})
	if err != nil {
		t.Fatal(err)
	}
	n := len(tr.Times)
	if n != DefaultSamples || tr.Times[0] != 0 || tr.Times[n-1] != tr.FinalT || len(tr.Loss) != n || len(tr.States) != n*s.Len() {
		t.Fatalf("%d times from %v to %v (end %v), %d losses, %d state values", n, tr.Times[0], tr.Times[n-1], tr.FinalT, len(tr.Loss), len(tr.States))
	}
	if tr.Status != Converged || tr.Status.String() != "converged" || tr.Sampling != FromDense || len(tr.Transitions) != 4 || !tr.Dense() {
		t.Errorf("status %v, sampling %v, %d drops, dense %v", tr.Status, tr.Sampling, len(tr.Transitions), tr.Dense())
	}
	if tr.Loss[0] != s.Loss(y0) || tr.Loss[n-1] != tr.FinalLoss {
		t.Errorf("loss from %v to %v, want L(y0) = %v to %v", tr.Loss[0], tr.Loss[n-1], s.Loss(y0), tr.FinalLoss)
	}
	// A final time: the drops grid on [0, T], the status reached T; the
	// linear grid in one pass.
	for _, g := range []Grid{GridDrops, GridLinear, GridLog} {
		tr, err := s.Run(context.Background(), y0, RunSettings{T: 3000, Samples: 11, Grid: g})
		want := map[Grid]Sampling{GridDrops: FromDense, GridLinear: AtTimes, GridLog: AtTimes}[g]
		if err != nil || tr.Status != ReachedT || tr.Sampling != want || tr.Times[len(tr.Times)-1] != 3000 || len(tr.Transitions) != 1 {
			t.Errorf("%v grid: err %v, status %v, sampling %v, times %v, %d drops", g, err, tr.Status, tr.Sampling, tr.Times, len(tr.Transitions))
		}
	}
	if _, err := s.Run(context.Background(), y0, RunSettings{Samples: 1}); err == nil {
		t.Error("Samples = 1: no error")
	}
}

// TestOnePassEqualsTwoPasses: a run samples its output from the first
// pass's continuous extension; when that does not fit in DenseBytes it
// integrates a second time to the output times. Both give the same values,
// bit for bit: the second pass takes the same steps, ends at the same
// terminal event, and evaluates the same continuous extension. Under Auto
// 2 MiB thins the ROCK4 steps of the extension (3 MB, of which DOP853's
// steps take 1 MB; see ode.Settings.DenseLimit), 1 byte drops it. BDF's
// extension (the state of the solve at the steps' ends) is thinned within
// BDFKeptStates times the output, and Sample takes the steps between kept
// states again, with their preconditioner setups.
func TestOnePassEqualsTwoPasses(t *testing.T) {
	t.Parallel()
	s, y0 := powerLawSix(t)
	for _, m := range []ode.Method{ode.Auto, ode.BDF} {
		rs := RunSettings{Samples: 301, Method: m}
		one, err := s.Run(context.Background(), y0, rs)
		if err != nil || one.Sampling != FromDense {
			t.Fatalf("%s, one pass: %v, sampling %v", m.Name(), err, one.Sampling)
		}
		if rp := one.replayStats(); m == ode.BDF && (rp.Steps == 0 || rp.Decompositions == 0) {
			t.Errorf("BDF: %d steps, replayed %+v: want the kept states thinned and steps taken again with their preconditioner", one.Stats.Steps, rp)
		}
		for _, budget := range []int{2 << 20, 1} {
			rs.DenseBytes = budget
			two, err := s.Run(context.Background(), y0, rs)
			if err != nil {
				t.Fatalf("%s, budget %d: %v", m.Name(), budget, err)
			}
			if want := map[int]Sampling{2 << 20: FromDense, 1: AtTimes}[budget]; two.Sampling != want {
				t.Errorf("%s, budget %d: sampling %v, want %v", m.Name(), budget, two.Sampling, want)
			}
			for name, x := range map[string][2][]float64{"times": {one.Times, two.Times}, "loss": {one.Loss, two.Loss}, "states": {one.States, two.States}} {
				if !slices.Equal(x[0], x[1]) {
					t.Errorf("%s, budget %d: %s differ", m.Name(), budget, name)
				}
			}
			if !slices.EqualFunc(one.Transitions, two.Transitions, func(a, b Transition) bool { return a.T == b.T && a.M == b.M }) ||
				one.FinalT != two.FinalT || one.FinalLoss != two.FinalLoss {
				t.Errorf("%s, budget %d: transitions or end differ", m.Name(), budget)
			}
			if budget == 1 && two.Stats.Steps != 2*one.Stats.Steps {
				t.Errorf("%s, two passes: %d steps, one pass %d: want twice", m.Name(), two.Stats.Steps, one.Stats.Steps)
			}
		}
	}
}

// TestRunInterrupted: a first pass stopped by its observer returns the
// accepted steps it recorded (at most Samples, spread over the run, ending
// where it stopped) with status Interrupted and the error.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	s, y0 := paperExample(t, Separate, 3)
	stop := errors.New("stop")
	tr, err := s.Run(context.Background(), y0, RunSettings{Samples: 50, Observer: func(t float64, _ []float64, _ float64) error {
		if t > 4000 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || tr == nil {
		t.Fatalf("err = %v", err)
	}
	n := len(tr.Times)
	if tr.Status != Interrupted || tr.Sampling != AtSteps || n > 50 || n < 10 || tr.Times[0] != 0 || tr.Times[n-1] != tr.FinalT || len(tr.Transitions) != 1 {
		t.Errorf("status %v, sampling %v, %d samples from %v to %v (end %v), %d drops", tr.Status, tr.Sampling, n, tr.Times[0], tr.Times[n-1], tr.FinalT, len(tr.Transitions))
	}
}

// TestRecorder: a recorder of at most 9 samples keeps t = 0, stays within
// its bound, keeps the samples increasing and spread over the whole run
// (no gap larger than four times the mean), and always keeps the end.
func TestRecorder(t *testing.T) {
	t.Parallel()
	data, err := law.NewData([]float64{0.2}, nil, law.Lengths{Nu: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	s := newSys(t, data, Model{Kind: Separate, H: 1, R: 1, Tau: 1})
	y := []float64{1, 2, 3}
	rec := newRecorder(s, 9, y, 1)
	for step := 1; step <= 1000; step++ {
		rec.add(float64(step), y, 1)
		if len(rec.t) > 9 {
			t.Fatalf("step %d: %d samples", step, len(rec.t))
		}
	}
	rec.last(1000.5, y, 1)
	n := len(rec.t)
	if rec.t[0] != 0 || rec.t[n-1] != 1000.5 || n < 5 {
		t.Fatalf("samples %v", rec.t)
	}
	for i := 1; i < n; i++ {
		if gap := rec.t[i] - rec.t[i-1]; !(gap > 0) || gap > 4*1000.5/float64(n-1) {
			t.Errorf("gap %v between samples %d and %d: %v", gap, i-1, i, rec.t)
		}
	}
	if len(rec.states) != n*s.Len() || rec.states[3*(n-1)+2] != 3 {
		t.Errorf("states %v", rec.states)
	}
}

// powerLawSix is the run of the one-pass and checkpoint tests: the
// separate model, D = H = 6, R = 1, power-law Λ in a random basis, N = 31,
// from the paper's initialization (w_init = 0.01, seed 3).
func powerLawSix(t *testing.T) (*System, []float64) {
	t.Helper()
	data, err := law.NewData(law.PowerLaw(6, 1, 1), law.RandomRotation(6, 1), law.Lengths{Nu: 1.0 / 31})
	if err != nil {
		t.Fatal(err)
	}
	s := newSys(t, data, Model{Kind: Separate, H: 6, R: 1, Tau: 1})
	y0, _ := s.Init(0.01, 3)
	return s, y0
}
