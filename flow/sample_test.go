package flow

import (
	"context"
	"errors"
	"math"
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

// TestStateRecord: a stateRecord of at most 30 states, fed 20 000 steps of a
// run whose loss falls as 1/(1 + t) over t ∈ (0, 1000], keeps t = 0,
// never more than 30 states, increasing in time, always the end, at least
// a third of 30, and spreads them as DropsGrid's shares (7 in time, 7 in
// log time, 14 in the loss's fall, of the 28 besides the start and the
// end): no gap in time larger than 2·1000/7 (twice the spacing of its
// share, which doubles only when more than the share are kept), none in
// ln(1 + t) larger than 2·ln(1001)/7, none in the fall of the loss larger
// than 2/14 of it. The states kept are those of the same steps fed to a
// stateRecord of 3000 states, whose spacings are then doubled to the first
// one's: the spacing alone decides what is kept, not when it doubled.
func TestStateRecord(t *testing.T) {
	t.Parallel()
	data, err := law.NewData([]float64{0.2}, nil, law.Lengths{Nu: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	s := newSys(t, data, Model{Kind: Separate, H: 1, R: 1, Tau: 1})
	const steps, limit, end = 20_000, 30, 1000.0
	loss := func(t float64) float64 { return 1 / (1 + t) }
	l0 := s.Loss([]float64{0, 0, 0})
	rec, big := newStateRecord(s, limit, []float64{0, 0, 0}, l0), newStateRecord(s, 3000, []float64{0, 0, 0}, l0)
	rec.l0, rec.gap, big.l0, big.gap = 1, 1, 1, 1 // the loss of this run, not of s
	for step := 1; step <= steps; step++ {
		tk := end * float64(step) / steps
		y := []float64{tk, 0, 0}
		rec.add(tk, y, loss(tk))
		big.add(tk, y, loss(tk))
		if len(rec.t) > limit {
			t.Fatalf("step %d: %d states", step, len(rec.t))
		}
	}
	rec.last(end, []float64{end, 0, 0}, loss(end))
	n := len(rec.t)
	if rec.t[0] != 0 || rec.t[n-1] != end || 3*n < limit || !increasing(rec.t) {
		t.Fatalf("states at %v", rec.t)
	}
	for i := 1; i < n; i++ {
		a, b := rec.t[i-1], rec.t[i]
		if b-a > 2*end/7 || math.Log1p(b)-math.Log1p(a) > 2*math.Log1p(end)/7 || loss(a)-loss(b) > 2.0/14 {
			t.Errorf("gap between states at %v and %v", a, b)
		}
	}
	for k := range big.coord {
		for big.coord[k].q < rec.coord[k].q {
			big.double(k)
		}
	}
	if !slices.Equal(big.t, rec.t[:n-1]) || rec.states[3*(n-1)] != end || rec.states[3*(n-2)] != rec.t[n-2] {
		t.Errorf("states kept at %v; with the spacings doubled after: %v", rec.t, big.t)
	}
}

// TestStateRecordFew: a stateRecord of a handful of states keeps at most that
// many, the start and the end among them: -state-every K promises at most
// ⌈S/K⌉ + 1 states (docs/cli.md, "States kept"), and -state-every 1000000
// kept 4 of the 2 it allows (issue 45, unclear case 5).
func TestStateRecordFew(t *testing.T) {
	t.Parallel()
	data, err := law.NewData([]float64{0.2}, nil, law.Lengths{Nu: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	s := newSys(t, data, Model{Kind: Separate, H: 1, R: 1, Tau: 1})
	for limit := 2; limit <= 6; limit++ {
		rec := newStateRecord(s, limit, []float64{0, 0, 0}, 1)
		rec.l0, rec.gap = 1, 1
		for step := 1; step <= 1000; step++ {
			tk := float64(step)
			rec.add(tk, []float64{tk, 0, 0}, 1/(1+tk))
		}
		rec.last(1000.5, []float64{1000.5, 0, 0}, 1/1001.5)
		if n := len(rec.t); n > limit || rec.t[0] != 0 || rec.t[n-1] != 1000.5 {
			t.Errorf("limit %d: states at %v", limit, rec.t)
		}
	}
}

// TestInterpolate: interpolate reproduces a polynomial of degree 5 to
// rounding through any 6 or more nodes (Lagrange's interpolant is
// unique), returns the node's value at a node, and through fewer nodes
// is the polynomial through all of them (a line through 2).
func TestInterpolate(t *testing.T) {
	p := func(x float64) float64 { return 1 - 2*x + 0.5*x*x*x - 0.01*x*x*x*x*x }
	ts := []float64{0, 0.3, 1, 1.2, 2.5, 3, 4.1, 5, 7, 7.5}
	ys := make([]float64, len(ts))
	for i, x := range ts {
		ys[i] = p(x)
	}
	for _, x := range []float64{-0.5, 0.1, 1.1, 2.9, 4.5, 6, 7.4, 8} {
		if got := interpolate(ts, ys, x); math.Abs(got-p(x)) > 1e-12*(1+math.Abs(p(x))) {
			t.Errorf("at %v: %v, want %v", x, got, p(x))
		}
	}
	if got := interpolate(ts, ys, 3); got != ys[5] {
		t.Errorf("at a node: %v, want %v", got, ys[5])
	}
	if got := interpolate([]float64{1, 3}, []float64{2, 6}, 2.5); math.Abs(got-5) > 1e-15 {
		t.Errorf("through 2 nodes: %v, want 5", got)
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
