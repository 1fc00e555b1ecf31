package train

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/linattn/linattn/internal/floatio"
	"github.com/linattn/linattn/ode"
)

// checkpointFormat is the version of the encoding Checkpoint.Save writes;
// ReadCheckpoint refuses others.
const checkpointFormat = 1

const checkpointMagic = "linattn/train checkpoint"

// The kinds of training a checkpoint holds.
const (
	kindGD   = 0
	kindFlow = 1
)

// ErrCheckpoint marks a checkpoint that cannot be read or does not belong
// to the training it is to resume.
var ErrCheckpoint = errors.New("train: corrupt or foreign checkpoint")

// Checkpoint is the state of a training run after a step of the pass it
// begins with (GDSettings.Checkpoint, FlowSettings.Checkpoint): gradient
// descent's weights, loss so far, weights kept and minibatch order, or the
// gradient flow's integrator (ode.Checkpoint) and the loss path that
// places the drops grid. It is valid only during the call.
type Checkpoint struct {
	T  float64 // the time reached
	gd *gdState
	// Flow: the loss at the accepted steps so far (drops grid) and the
	// integrator's state.
	path *[2][]float64
	oc   *ode.Checkpoint
}

// Save writes the checkpoint: the trainer's part (numbers as little-endian
// float64 bits, so they come back bit for bit), then, for the gradient
// flow, the integrator's.
func (c *Checkpoint) Save(w io.Writer) error {
	fw := floatio.NewWriter(w, checkpointMagic)
	fw.Put(checkpointFormat)
	if c.gd != nil {
		fw.Put(kindGD)
		c.gd.save(fw)
		return fw.Flush()
	}
	fw.Put(kindFlow)
	fw.Vec(c.path[0])
	fw.Vec(c.path[1])
	if err := fw.Flush(); err != nil {
		return err
	}
	return c.oc.Save(w)
}

// Resume is a Checkpoint read back (ReadCheckpoint), for
// GDSettings.Resume and FlowSettings.Resume.
type Resume struct {
	// T is the time the training had reached.
	T        float64
	gd       *gdState
	path     [2][]float64
	snapshot *ode.Snapshot
}

// ReadCheckpoint reads what Checkpoint.Save wrote. Errors wrap
// ErrCheckpoint.
func ReadCheckpoint(r io.Reader) (*Resume, error) {
	fr, ok := floatio.NewReader(r, checkpointMagic)
	if !ok {
		return nil, fmt.Errorf("%w: not a checkpoint of a training run", ErrCheckpoint)
	}
	if f := fr.Get(); fr.Err == nil && f != checkpointFormat {
		return nil, fmt.Errorf("%w: format %g, this program reads %d", ErrCheckpoint, f, checkpointFormat)
	}
	rs := &Resume{}
	switch kind := fr.Get(); {
	case fr.Err != nil:
	case kind == kindGD:
		rs.gd = readGDState(fr)
	case kind == kindFlow:
		rs.path = [2][]float64{fr.Vec(), fr.Vec()}
	default:
		return nil, fmt.Errorf("%w: a training of kind %g", ErrCheckpoint, kind)
	}
	if fr.Err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, fr.Err)
	}
	if rs.gd != nil {
		if err := rs.gd.valid(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCheckpoint, err)
		}
		rs.T = rs.gd.t
		return rs, nil
	}
	if len(rs.path[0]) != len(rs.path[1]) {
		return nil, fmt.Errorf("%w: its loss path is damaged", ErrCheckpoint)
	}
	var err error
	if rs.snapshot, err = ode.ReadSnapshot(fr.Rest()); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	rs.T = rs.snapshot.T
	return rs, nil
}

// gdState is gradient descent before step k: the weights θ_k and
// θ_{k−1}, the loss at steps 0…k−1, the steps kept and their weights, the
// divergence test's reference loss and the minibatches' position.
type gdState struct {
	k            int
	t            float64 // 2ητ·k
	loss0        float64
	theta, prev  []float64
	loss         []float64
	kept         []int
	states       []float64
	epoch, batch int // batches.epoch, batches.pos
}

func (s *gdState) save(fw floatio.Writer) {
	fw.Put(float64(s.k), s.t, s.loss0)
	fw.Vec(s.theta)
	fw.Vec(s.prev)
	fw.Vec(s.loss)
	kept := make([]float64, len(s.kept))
	for i, k := range s.kept {
		kept[i] = float64(k)
	}
	fw.Vec(kept)
	fw.Vec(s.states)
	fw.Put(float64(s.epoch), float64(s.batch))
}

func readGDState(fr *floatio.Reader) *gdState {
	s := &gdState{k: fr.Count(math.MaxInt32), t: fr.Get(), loss0: fr.Get()}
	s.theta, s.prev, s.loss = fr.Vec(), fr.Vec(), fr.Vec()
	for _, k := range fr.Vec() {
		s.kept = append(s.kept, int(k))
		if !(k >= 0 && k < float64(s.k) && k == math.Trunc(k)) {
			fr.Err = fmt.Errorf("a kept step %g of %d", k, s.k)
		}
	}
	s.states = fr.Vec()
	s.epoch, s.batch = int(fr.Get()), fr.Count(math.MaxInt32)
	return s
}

// valid checks the lengths and ranges of what readGDState read.
func (s *gdState) valid() error {
	n := len(s.theta)
	switch {
	case s.k < 1 || len(s.prev) != n || len(s.loss) != s.k || len(s.states) != len(s.kept)*n:
		return errors.New("its record of the descent is damaged")
	case s.epoch < -1 || !(s.t >= 0) || math.IsInf(s.t, 0):
		return errors.New("its minibatch order or time is damaged")
	}
	for i, k := range s.kept {
		if i > 0 && k <= s.kept[i-1] {
			return errors.New("its kept steps are not in order")
		}
	}
	return nil
}

// resumeGD checks rs against the descent it is to continue and returns
// its state.
func (t *Trainer) resumeGD(rs *Resume, gs *GDSettings) (*gdState, error) {
	st := rs.gd
	switch {
	case st == nil:
		return nil, fmt.Errorf("%w: a checkpoint of the gradient flow, not of gradient descent", ErrCheckpoint)
	case len(st.theta) != t.Len() || st.k > gs.Steps || st.t != t.Time(gs.LR, st.k):
		return nil, fmt.Errorf("%w: a descent of %d weights at step %d (t = %g), not of %d weights to step %d with η = %g",
			ErrCheckpoint, len(st.theta), st.k, st.t, t.Len(), gs.Steps, gs.LR)
	case t.cfg.Batch > 0 && (st.epoch < 0 || st.batch > t.cfg.P):
		return nil, fmt.Errorf("%w: its minibatch order is damaged", ErrCheckpoint)
	}
	return st, nil
}

// resumeFlow checks rs against the gradient flow it is to continue (the
// first pass of a drops grid records the loss path) and returns the
// integrator's snapshot.
func resumeFlow(rs *Resume, recordsPath bool) (*ode.Snapshot, error) {
	switch {
	case rs.snapshot == nil:
		return nil, fmt.Errorf("%w: a checkpoint of gradient descent, not of the gradient flow", ErrCheckpoint)
	case recordsPath != (len(rs.path[0]) > 0):
		return nil, fmt.Errorf("%w: a gradient flow on another output grid", ErrCheckpoint)
	}
	return rs.snapshot, nil
}
