package flow

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/linattn/linattn/ode"
)

// checkpointFormat is the version of the encoding Checkpoint.Save writes
// before the integrator's snapshot.
const checkpointFormat = 1

const checkpointMagic = "linattn/flow checkpoint"

// ErrCheckpoint marks a checkpoint that cannot be read or does not belong
// to the run it is to resume.
var ErrCheckpoint = errors.New("flow: corrupt or foreign checkpoint")

// Checkpoint is the state of a run after an accepted step of the pass Run
// starts with (RunSettings.Checkpoint): the integrator's (ode.Checkpoint,
// with the continuous extension kept so far), the loss path that places
// the drops grid, and the settling test's history. It is valid only
// during the call.
type Checkpoint struct {
	T      float64 // the time reached
	n      int
	oc     *ode.Checkpoint
	path   *pathRecorder
	settle *settleDetector
}

// CanCheckpoint reports whether a run by method m can be checkpointed
// (ode.CanCheckpoint): nil means MethodFor's, which can.
func CanCheckpoint(m ode.Method) bool { return m == nil || ode.CanCheckpoint(m) }

// Save writes the checkpoint: the flow's part (numbers as little-endian
// float64 bits, so they come back bit for bit), then the integrator's.
func (c *Checkpoint) Save(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var settleT, settleL []float64
	if c.settle != nil {
		settleT, settleL = c.settle.t, c.settle.loss
	}
	put := func(v ...float64) {
		for _, x := range v {
			binary.Write(bw, binary.LittleEndian, math.Float64bits(x))
		}
	}
	vec := func(v []float64) { put(float64(len(v))); put(v...) }
	bw.WriteString(checkpointMagic)
	put(checkpointFormat, float64(c.n))
	vec(c.path.path.T)
	vec(c.path.path.Loss)
	put(b2f(c.settle != nil))
	vec(settleT)
	vec(settleL)
	if err := bw.Flush(); err != nil {
		return err
	}
	return c.oc.Save(w)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Resume is a Checkpoint read back (ReadCheckpoint), for
// RunSettings.Resume.
type Resume struct {
	// T is the time the run had reached.
	T        float64
	n        int
	path     LossPath
	settle   bool
	settleT  []float64
	settleL  []float64
	snapshot *ode.Snapshot
}

// ReadCheckpoint reads what Checkpoint.Save wrote. Errors wrap
// ErrCheckpoint.
func ReadCheckpoint(r io.Reader) (*Resume, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, len(checkpointMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != checkpointMagic {
		return nil, fmt.Errorf("%w: not a checkpoint of a flow", ErrCheckpoint)
	}
	var err error
	get := func() float64 {
		var u uint64
		if err == nil {
			err = binary.Read(br, binary.LittleEndian, &u)
		}
		return math.Float64frombits(u)
	}
	vec := func() []float64 {
		k := get()
		if err != nil || !(k >= 0 && k <= 1<<32) {
			err = fmt.Errorf("length %g", k)
			return nil
		}
		v := make([]float64, 0, min(int(k), 1<<20))
		for i := 0; i < int(k) && err == nil; i++ {
			v = append(v, get())
		}
		return v
	}
	if f := get(); err == nil && f != checkpointFormat {
		return nil, fmt.Errorf("%w: format %g, this program reads %d", ErrCheckpoint, f, checkpointFormat)
	}
	rs := &Resume{n: int(get())}
	rs.path.T, rs.path.Loss = vec(), vec()
	rs.settle = get() != 0
	rs.settleT, rs.settleL = vec(), vec()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	if len(rs.path.T) == 0 || len(rs.path.T) != len(rs.path.Loss) || len(rs.settleT) != len(rs.settleL) {
		return nil, fmt.Errorf("%w: its loss path is damaged", ErrCheckpoint)
	}
	if rs.snapshot, err = ode.ReadSnapshot(br); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	rs.T = rs.snapshot.T
	return rs, nil
}

// resumePass restores the flow's part of a checkpoint into the pass's
// recorders and returns the integrator's snapshot.
func (s *System) resumePass(rs *Resume, path *pathRecorder, settle *settleDetector) (*ode.Snapshot, error) {
	if rs.n != s.n || rs.settle != (settle != nil) {
		return nil, fmt.Errorf("%w: a run of %d values (settling test %v), this one has %d (%v)", ErrCheckpoint, rs.n, rs.settle, s.n, settle != nil)
	}
	path.path = LossPath{T: append([]float64(nil), rs.path.T...), Loss: append([]float64(nil), rs.path.Loss...)}
	if settle != nil {
		settle.t, settle.loss = append([]float64(nil), rs.settleT...), append([]float64(nil), rs.settleL...)
	}
	return rs.snapshot, nil
}
