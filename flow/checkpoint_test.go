package flow

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/linattn/linattn/ode"
)

// TestResumeEqualsUninterrupted: a run stopped after a checkpoint at
// about half its steps (as a process killed there) and resumed from the
// checkpoint returns what the run that was not stopped returns, bit for
// bit: samples, drops, end and the counts of work. Auto (DOP853 then
// ROCK4) and BDF (block preconditioner) sample the drops grid from their
// continuous extension, restored with the rest; with DenseBytes 1 (no
// extension) the resumed first pass is followed by a second one.
func TestResumeEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	s, y0 := powerLawSix(t)
	killed := errors.New("killed")
	for _, c := range []struct {
		m     ode.Method
		dense int
	}{{ode.Auto, 0}, {ode.BDF, 0}, {ode.Auto, 1}} {
		rs := RunSettings{Samples: 301, Method: c.m, DenseBytes: c.dense}
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
			"states": {got.States, want.States}, "plateaus": {got.Plateaus, want.Plateaus}, "final": {got.Final, want.Final}} {
			if !slices.Equal(x[0], x[1]) {
				t.Errorf("%s, dense %d: %s differ", c.m.Name(), c.dense, name)
			}
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

// TestStateEvery: a run that keeps every 7th state (and the last) has
// the times, losses and test losses of the run that keeps them all, and
// its states are those rows of it, bit for bit: from the continuous
// extension (Auto, BDF, whose kept states of the solve are then fewer)
// and from a second pass (DenseBytes 1).
func TestStateEvery(t *testing.T) {
	t.Parallel()
	s, y0 := powerLawSix(t)
	n := s.Len()
	for _, c := range []struct {
		m     ode.Method
		dense int
	}{{ode.Auto, 0}, {ode.BDF, 0}, {ode.Auto, 1}} {
		rs := RunSettings{Samples: 301, Method: c.m, DenseBytes: c.dense, TestLosses: true}
		all, err := s.Run(context.Background(), y0, rs)
		if err != nil {
			t.Fatal(err)
		}
		rs.StateEvery = 7
		few, err := s.Run(context.Background(), y0, rs)
		if err != nil {
			t.Fatal(err)
		}
		if len(few.StateIndex) != 44 || few.StateIndex[43] != 300 || len(few.States) != 44*n || all.StateIndex != nil {
			t.Fatalf("%s: %d states kept at %v", c.m.Name(), len(few.States)/n, few.StateIndex)
		}
		for row, i := range few.StateIndex {
			if !slices.Equal(few.States[row*n:(row+1)*n], all.States[i*n:(i+1)*n]) {
				t.Fatalf("%s: state %d (row %d) differs", c.m.Name(), i, row)
			}
		}
		for name, x := range map[string][2][]float64{"times": {few.Times, all.Times}, "loss": {few.Loss, all.Loss},
			"test_icl": {few.TestICL, all.TestICL}, "test_iwl": {few.TestIWL, all.TestIWL}} {
			same := slices.EqualFunc(x[0], x[1], func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
			if !same || len(x[0]) != 301 { // test_iwl is NaN in context: compared by bits
				t.Errorf("%s, dense %d: %s differ", c.m.Name(), c.dense, name)
			}
		}
	}
}
