package train

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/ode"
)

// TestResumeEqualsUninterrupted: a training stopped after the checkpoint
// of about half its steps (as a process killed there), read back and
// resumed returns what the training that was not stopped returns, bit for
// bit: times, loss, weights, drops, end and counts. Gradient descent full
// batch (the drops grid from every step's weights) and SGD (minibatches in
// the middle of an epoch, the lin grid), and the gradient flow by BDF and
// Auto on the drops grid (its loss path restored with the integrator) and
// on the lin grid.
func TestResumeEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	base := smallConfig(t, smallCase{kind: flow.Separate, att: Linear, blocks: flow.ReducedLayer, icl: 1}, AutoPath)
	sgd := base
	sgd.Batch, sgd.Path = 3, DirectPath
	theta0 := randomWeights(base.Model.Len(), 0.3, 5)
	type result struct {
		tr  *flow.Trajectory
		err error
	}
	cases := map[string]struct {
		cfg   Config
		train func(tr *Trainer, ck func(*Checkpoint) error, rs *Resume) result
	}{
		"GD drops": {base, func(tr *Trainer, ck func(*Checkpoint) error, rs *Resume) result {
			r, err := tr.GD(context.Background(), theta0, GDSettings{LR: 0.05, Steps: 400, Samples: 40, Checkpoint: ck, Resume: rs})
			return result{r, err}
		}},
		"SGD lin": {sgd, func(tr *Trainer, ck func(*Checkpoint) error, rs *Resume) result {
			r, err := tr.GD(context.Background(), theta0, GDSettings{LR: 0.05, Steps: 301, Samples: 30, Grid: flow.GridLinear, Checkpoint: ck, Resume: rs})
			return result{r, err}
		}},
		"flow BDF drops": {base, func(tr *Trainer, ck func(*Checkpoint) error, rs *Resume) result {
			r, err := tr.Flow(context.Background(), theta0, FlowSettings{T: 40, Samples: 40, Method: ode.BDF, Checkpoint: ck, Resume: rs})
			return result{r, err}
		}},
		"flow Auto lin": {base, func(tr *Trainer, ck func(*Checkpoint) error, rs *Resume) result {
			r, err := tr.Flow(context.Background(), theta0, FlowSettings{T: 40, Samples: 40, Grid: flow.GridLinear, Method: ode.Auto, Checkpoint: ck, Resume: rs})
			return result{r, err}
		}},
	}
	killed := errors.New("killed")
	for name, c := range cases {
		tr := newTrainer(t, c.cfg)
		want := c.train(tr, nil, nil)
		if want.err != nil {
			t.Fatalf("%s: %v", name, want.err)
		}
		calls := 0
		c.train(tr, func(*Checkpoint) error { calls++; return nil }, nil)
		var saved bytes.Buffer
		n := 0
		stopped := c.train(tr, func(ck *Checkpoint) error {
			if n++; n < calls/2+1 {
				return nil
			}
			if err := ck.Save(&saved); err != nil {
				return err
			}
			return killed
		}, nil)
		if !errors.Is(stopped.err, killed) || calls < 10 {
			t.Fatalf("%s: the stopped training returned %v after %d checkpoints of %d", name, stopped.err, n, calls)
		}
		rs, err := ReadCheckpoint(bytes.NewReader(saved.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if !(rs.T > 0 && rs.T < want.tr.FinalT) {
			t.Fatalf("%s: checkpoint at t = %g of %g", name, rs.T, want.tr.FinalT)
		}
		if c.cfg.Batch > 0 && !(rs.gd.batch > 0 && rs.gd.batch < c.cfg.P) {
			t.Fatalf("%s: checkpoint %d sequences into an epoch, want the middle of one", name, rs.gd.batch)
		}
		got := c.train(tr, nil, rs)
		if got.err != nil {
			t.Fatalf("%s: resumed: %v", name, got.err)
		}
		w, g := want.tr, got.tr
		for what, x := range map[string][2][]float64{"times": {g.Times, w.Times}, "loss": {g.Loss, w.Loss},
			"states": {g.States, w.States}, "final": {g.Final, w.Final}} {
			if !slices.Equal(x[0], x[1]) || len(x[1]) == 0 {
				t.Errorf("%s: %s differ", name, what)
			}
		}
		if !reflect.DeepEqual(g.Transitions, w.Transitions) || g.FinalT != w.FinalT || !reflect.DeepEqual(g.Stats, w.Stats) {
			t.Errorf("%s: drops, end or counts differ: %+v, want %+v", name, g.Stats, w.Stats)
		}
	}
}

// TestReadCheckpointRefuses: a checkpoint cut short or damaged is refused
// with ErrCheckpoint, and one of gradient descent does not resume the
// flow, nor one of another problem the descent.
func TestReadCheckpointRefuses(t *testing.T) {
	t.Parallel()
	cfg := smallConfig(t, smallCase{kind: flow.Separate, att: Linear, blocks: flow.ReducedLayer, icl: 1}, AutoPath)
	tr := newTrainer(t, cfg)
	theta0 := randomWeights(cfg.Model.Len(), 0.3, 5)
	var saved bytes.Buffer
	stop := errors.New("stop")
	gs := GDSettings{LR: 0.05, Steps: 100, Samples: 20, Checkpoint: func(ck *Checkpoint) error {
		if ck.T > 2 {
			ck.Save(&saved)
			return stop
		}
		return nil
	}}
	if _, err := tr.GD(context.Background(), theta0, gs); !errors.Is(err, stop) {
		t.Fatal(err)
	}
	b := saved.Bytes()
	for name, bad := range map[string][]byte{"cut": b[:len(b)-8], "foreign": []byte("linattn/flow checkpoint"), "empty": nil} {
		if _, err := ReadCheckpoint(bytes.NewReader(bad)); !errors.Is(err, ErrCheckpoint) {
			t.Errorf("%s: %v", name, err)
		}
	}
	rs, err := ReadCheckpoint(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Flow(context.Background(), theta0, FlowSettings{T: 10, Method: ode.BDF, Resume: rs}); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("a descent's checkpoint resumed the flow: %v", err)
	}
	if _, err := tr.GD(context.Background(), theta0, GDSettings{LR: 0.1, Steps: 100, Samples: 20, Resume: rs}); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("a checkpoint of η = 0.05 resumed a descent with η = 0.1: %v", err)
	}
	if _, err := tr.Flow(context.Background(), theta0, FlowSettings{T: 10, Method: ode.Rodas5P, Checkpoint: gs.Checkpoint}); err == nil {
		t.Errorf("Rodas5P took a Checkpoint")
	}
}
