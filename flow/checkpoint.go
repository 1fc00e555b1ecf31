package flow

import (
	"errors"
	"fmt"
	"io"

	"github.com/linattn/linattn/internal/floatio"
	"github.com/linattn/linattn/ode"
)

// checkpointFormat is the version of the encoding Checkpoint.Save writes
// before the integrator's snapshot: 2 adds the records of a run that thins
// its states.
const checkpointFormat = 2

const checkpointMagic = "linattn/flow checkpoint"

// ErrCheckpoint marks a checkpoint that cannot be read or does not belong
// to the run it is to resume.
var ErrCheckpoint = errors.New("flow: corrupt or foreign checkpoint")

// Checkpoint is the state of a run after an accepted step of the pass Run
// starts with (RunSettings.Checkpoint): the integrator's (ode.Checkpoint,
// with the continuous extension kept so far), the loss path that places
// the drops grid, the settling test's history and, for a run that thins
// its states, what it recorded at the accepted steps (passRecord). It is
// valid only during the call.
type Checkpoint struct {
	T      float64 // the time reached
	n      int
	oc     *ode.Checkpoint
	rec    *passRecord
	settle *settleDetector
}

// CanCheckpoint reports whether a run by method m can be checkpointed
// (ode.CanCheckpoint): nil means the plan's, which can.
func CanCheckpoint(m ode.Method) bool { return m == nil || ode.CanCheckpoint(m) }

// Save writes the checkpoint: the flow's part (numbers as little-endian
// float64 bits, so they come back bit for bit), then the integrator's.
func (c *Checkpoint) Save(w io.Writer) error {
	var settleT, settleL []float64
	if c.settle != nil {
		settleT, settleL = c.settle.t, c.settle.loss
	}
	fw := floatio.NewWriter(w, checkpointMagic)
	fw.Put(checkpointFormat, float64(c.n))
	fw.Vec(c.rec.path.T)
	fw.Vec(c.rec.path.Loss)
	fw.Bool(c.settle != nil)
	fw.Vec(settleT)
	fw.Vec(settleL)
	fw.Bool(c.rec.thinned())
	if c.rec.thinned() {
		c.rec.save(fw)
	}
	if err := fw.Flush(); err != nil {
		return err
	}
	return c.oc.Save(w)
}

// Resume is a Checkpoint read back (ReadCheckpoint), for
// RunSettings.Resume.
type Resume struct {
	// T is the time the run had reached.
	T        float64
	n        int
	record   passRecord // the path and, for a first pass that thins its states, its records
	settle   bool
	settleT  []float64
	settleL  []float64
	snapshot *ode.Snapshot
}

// ReadCheckpoint reads what Checkpoint.Save wrote. Errors wrap
// ErrCheckpoint.
func ReadCheckpoint(r io.Reader) (*Resume, error) {
	fr, err := newFloatReader(r, checkpointMagic, "a checkpoint of a flow")
	if err != nil {
		return nil, err
	}
	if f := fr.Get(); fr.Err == nil && f != checkpointFormat {
		return nil, fmt.Errorf("%w: format %g, this program reads %d", ErrCheckpoint, f, checkpointFormat)
	}
	rs := &Resume{n: int(fr.Get())}
	path := &rs.record.path
	path.T, path.Loss = fr.Vec(), fr.Vec()
	rs.settle = fr.Bool()
	rs.settleT, rs.settleL = fr.Vec(), fr.Vec()
	valid := true
	if fr.Bool() {
		valid = rs.record.readRecords(fr, rs.n)
	}
	if fr.Err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, fr.Err)
	}
	if len(path.T) == 0 || len(path.T) != len(path.Loss) || len(rs.settleT) != len(rs.settleL) {
		return nil, fmt.Errorf("%w: its loss path is damaged", ErrCheckpoint)
	}
	if !valid {
		return nil, fmt.Errorf("%w: its record of the accepted steps is damaged", ErrCheckpoint)
	}
	if rs.snapshot, err = ode.ReadSnapshot(fr.Rest()); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	rs.T = rs.snapshot.T
	return rs, nil
}

// resumePass restores the flow's part of a checkpoint into the pass's
// record and settling test and returns the integrator's snapshot.
func (s *System) resumePass(rs *Resume, rec *passRecord, settle *settleDetector) (*ode.Snapshot, error) {
	if rs.n != s.n || rs.settle != (settle != nil) {
		return nil, fmt.Errorf("%w: a run of %d values (settling test %v), this one has %d (%v)", ErrCheckpoint, rs.n, rs.settle, s.n, settle != nil)
	}
	if rs.record.thinned() != rec.thinned() {
		return nil, fmt.Errorf("%w: a run that thins its states %v, this one %v", ErrCheckpoint, rs.record.thinned(), rec.thinned())
	}
	if err := rec.restore(&rs.record); err != nil {
		return nil, err
	}
	if settle != nil {
		settle.t, settle.loss = append([]float64(nil), rs.settleT...), append([]float64(nil), rs.settleL...)
	}
	return rs.snapshot, nil
}
