package flow

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/linattn/linattn/ode"
)

// TestResumeEqualsUninterrupted: a run stopped after a checkpoint at
// about half its steps (as a process killed there) and resumed from the
// checkpoint returns what the run that was not stopped returns, bit for
// bit: samples, drops, end and the counts of work. Auto (DOP853 then
// ROCK4) and BDF (block preconditioner) sample the drops grid from their
// continuous extension, restored with the rest; with DenseBytes 1 (no
// extension) the resumed first pass is followed by a second one. Keeping
// every 7th state (StateEvery), with the test losses, they sample from
// what they recorded at the steps (Sampling Interpolated), restored too.
func TestResumeEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	s, y0 := powerLawSix(t)
	killed := errors.New("killed")
	for _, c := range []struct {
		m            ode.Method
		dense, every int
	}{{ode.Auto, 0, 0}, {ode.BDF, 0, 0}, {ode.Auto, 1, 0}, {ode.Auto, 0, 7}, {ode.BDF, 0, 7}} {
		rs := RunSettings{Samples: 301, Method: c.m, DenseBytes: c.dense, StateEvery: c.every, NoTestLosses: c.every <= 1}
		want, err := s.Run(context.Background(), y0, rs)
		if err != nil {
			t.Fatal(err)
		}
		var saved bytes.Buffer
		steps := 0
		rs.Checkpoint = func(ck *Checkpoint) error {
			if steps++; steps < want.Stats.Steps/2/(1+c.dense) { // two passes with dense 1
				return nil
			}
			if err := ck.Save(&saved); err != nil {
				return err
			}
			return killed
		}
		if tr, err := s.Run(context.Background(), y0, rs); !errors.Is(err, killed) || tr.Status != Interrupted {
			t.Fatalf("%s: the stopped run returned %v", c.m.Name(), err)
		}
		resume, err := ReadCheckpoint(bytes.NewReader(saved.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if !(resume.T > 0 && resume.T < want.FinalT) {
			t.Fatalf("%s: checkpoint at t = %g of %g", c.m.Name(), resume.T, want.FinalT)
		}
		rs.Checkpoint, rs.Resume = nil, resume
		got, err := s.Run(context.Background(), y0, rs)
		if err != nil {
			t.Fatal(err)
		}
		for name, x := range map[string][2][]float64{"times": {got.Times, want.Times}, "loss": {got.Loss, want.Loss},
			"states": {got.States, want.States}, "plateaus": {got.Plateaus, want.Plateaus}, "final": {got.Final, want.Final},
			"state times": {got.StateTimes, want.StateTimes}, "test_icl": {got.TestICL, want.TestICL}} {
			if !slices.Equal(x[0], x[1]) {
				t.Errorf("%s, dense %d, every %d: %s differ", c.m.Name(), c.dense, c.every, name)
			}
		}
		if (want.Sampling == Interpolated) != (c.every > 1) {
			t.Errorf("%s, every %d: sampling %v", c.m.Name(), c.every, want.Sampling)
		}
		if !reflect.DeepEqual(got.Transitions, want.Transitions) || got.FinalT != want.FinalT || got.Sampling != want.Sampling {
			t.Errorf("%s, dense %d: transitions, end or sampling differ", c.m.Name(), c.dense)
		}
		if !reflect.DeepEqual(got.Stats, want.Stats) {
			t.Errorf("%s, dense %d: stats %+v, want %+v", c.m.Name(), c.dense, got.Stats, want.Stats)
		}
	}
}

// TestResumeRefusesForeign: a checkpoint of another system, or cut
// short, is refused with ErrCheckpoint.
func TestResumeRefusesForeign(t *testing.T) {
	t.Parallel()
	s, y0 := paperExample(t, Separate, 3)
	var saved bytes.Buffer
	rs := RunSettings{Samples: 50, Checkpoint: func(ck *Checkpoint) error {
		if saved.Len() == 0 {
			return ck.Save(&saved)
		}
		return nil
	}}
	if _, err := s.Run(context.Background(), y0, rs); err != nil {
		t.Fatal(err)
	}
	b := saved.Bytes()
	if _, err := ReadCheckpoint(bytes.NewReader(b[:len(b)/2])); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("a truncated checkpoint: %v", err)
	}
	resume, err := ReadCheckpoint(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	other, y1 := paperExample(t, Merged, 3)
	if _, err := other.Run(context.Background(), y1, RunSettings{Samples: 50, Resume: resume}); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("another model's checkpoint: %v", err)
	}
}

// TestStateEvery: a run that keeps every 7th of 301 states keeps, from its
// continuous extension (Auto, BDF: Sampling Interpolated), states spread
// over the run: at most 44 (every 7th and the last) and a third of them at
// least, from t = 0 to the end, each the state of the run that keeps them
// all at that time (its extension, to 10⁻¹² relative: at a step's end the extension
// is the step's value up to rounding), one at least every tenth of the
// loss's fall (the stateRecord's share of 22 states spaced in loss keeps one
// at least every 2/23 of it, and steps that cover more have nodes inside).
// Its times are those of that run, bit for bit; its loss and test losses,
// interpolated, are as close to the exact ones (DOP853 at rtol 10⁻¹³ at
// the same times) as that run's, within 10⁻⁹ of the loss's fall: the
// interpolation adds nothing to the integrator's error. From a second
// pass (DenseBytes 1) it keeps the states at every 7th output time and
// the last, the rows of that run bit for bit.
func TestStateEvery(t *testing.T) {
	t.Parallel()
	s, y0 := powerLawSix(t)
	n := s.Len()
	var exact *Trajectory
	for _, c := range []struct {
		m     ode.Method
		dense int
	}{{ode.Auto, 0}, {ode.BDF, 0}, {ode.Auto, 1}} {
		rs := RunSettings{Samples: 301, Method: c.m, DenseBytes: c.dense}
		all, err := s.Run(context.Background(), y0, rs)
		if err != nil {
			t.Fatal(err)
		}
		rs.StateEvery = 7
		few, err := s.Run(context.Background(), y0, rs)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(few.Times, all.Times) || len(few.Times) != 301 {
			t.Errorf("%s, dense %d: times differ", c.m.Name(), c.dense)
		}
		if c.dense == 1 {
			sameRows(t, c.m.Name(), few, all, n)
			continue
		}
		if few.Sampling != Interpolated || few.StateIndex != nil {
			t.Fatalf("%s: sampling %v, state index %v", c.m.Name(), few.Sampling, few.StateIndex)
		}
		if exact == nil {
			exact, err = s.Run(context.Background(), y0, RunSettings{T: all.FinalT, Times: all.Times, Method: ode.DOP853, RTol: 1e-13, ATol: 1e-16})
			if err != nil {
				t.Fatal(err)
			}
		}
		interpolatedLosses(t, c.m.Name(), few, all, exact)
		stepStates(t, c.m.Name(), s, few, all, 44)
	}
}

// sameRows checks that the states of few are those of all at the output
// times few.StateIndex lists, every 7th and the last, bit for bit, and its
// loss and test losses all's.
func sameRows(t *testing.T, name string, few, all *Trajectory, n int) {
	t.Helper()
	if len(few.StateIndex) != 44 || few.StateIndex[43] != 300 || len(few.States) != 44*n || !all.AllStates() {
		t.Fatalf("%s: %d states kept at %v", name, len(few.States)/n, few.StateIndex)
	}
	for row, i := range few.StateIndex {
		if !slices.Equal(few.States[row*n:(row+1)*n], all.States[i*n:(i+1)*n]) {
			t.Fatalf("%s: state %d (row %d) differs", name, i, row)
		}
	}
	for what, x := range map[string][2][]float64{"loss": {few.Loss, all.Loss}, "test_icl": {few.TestICL, all.TestICL}, "test_iwl": {few.TestIWL, all.TestIWL}} {
		if !slices.EqualFunc(x[0], x[1], func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
			t.Errorf("%s, second pass: %s differ", name, what) // test_iwl is NaN in context: compared by bits
		}
	}
}

// interpolatedLosses checks the loss and test losses of few against
// exact's: off by no more than all's, within 10⁻⁹ of the loss's fall;
// NaN where exact's are.
func interpolatedLosses(t *testing.T, name string, few, all, exact *Trajectory) {
	t.Helper()
	fall := exact.Loss[0] - exact.Loss[len(exact.Loss)-1]
	for what, x := range map[string][3][]float64{"loss": {few.Loss, all.Loss, exact.Loss}, "test_icl": {few.TestICL, all.TestICL, exact.TestICL},
		"test_iwl": {few.TestIWL, all.TestIWL, exact.TestIWL}, "test_idg": {few.TestIDG, all.TestIDG, exact.TestIDG}} {
		var worst [2]float64 // few's, all's
		for i, want := range x[2] {
			for k := range worst {
				got := x[k][i]
				if math.IsNaN(want) != math.IsNaN(got) {
					t.Fatalf("%s: %s[%d] = %v, want %v", name, what, i, got, want)
				}
				if !math.IsNaN(want) {
					worst[k] = max(worst[k], math.Abs(got-want)/fall)
				}
			}
		}
		if worst[0] > worst[1]+1e-9 || len(x[0]) != len(x[2]) {
			t.Errorf("%s: %s off by %.3g of the loss's fall, the run that keeps all states by %.3g", name, what, worst[0], worst[1])
		}
	}
}

// stepStates checks the states few kept at accepted steps against all's
// extension there, their number against limit and their spread in loss.
func stepStates(t *testing.T, name string, s *System, few, all *Trajectory, limit int) {
	t.Helper()
	n, rows := s.Len(), len(few.StateTimes)
	ts := few.StateTimes
	if rows > limit || 3*rows < limit || len(few.States) != rows*n || ts[0] != 0 || ts[rows-1] != few.FinalT || !increasing(ts) {
		t.Fatalf("%s: %d states (at most %d) at %v, run ends at %v", name, rows, limit, ts, few.FinalT)
	}
	want, _, err := all.Sample(ts)
	if err != nil {
		t.Fatal(err)
	}
	fall, prev := all.Loss[0]-all.FinalLoss, all.Loss[0]
	for row := range rows {
		got := few.States[row*n : (row+1)*n]
		if d := floats.Distance(got, want[row*n:(row+1)*n], math.Inf(1)); d > 1e-12*floats.Norm(got, math.Inf(1)) {
			t.Errorf("%s: state at t = %v off by %g", name, ts[row], d)
		}
		l := s.Loss(got)
		if (prev-l)/fall > 0.1 {
			t.Errorf("%s: the loss falls by %.3g of its fall between states at %v and %v", name, (prev-l)/fall, ts[row-1], ts[row])
		}
		prev = l
	}
}

// increasing reports whether x is strictly increasing.
func increasing(x []float64) bool {
	for i := 1; i < len(x); i++ {
		if !(x[i] > x[i-1]) {
			return false
		}
	}
	return true
}
