// Package floatio writes and reads the binary files of a run's state
// (checkpoints, samples made so far): a magic string, then numbers as the
// little-endian bits of float64, so that they come back bit for bit, and
// vectors as their length and their numbers. A reader's first error
// sticks, and a length that claims more numbers than the file holds costs
// no more memory than the file holds.
package floatio

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Writer writes numbers after a magic string. Its first error is
// Flush's.
type Writer struct{ bw *bufio.Writer }

// NewWriter returns a Writer to w that has written magic.
func NewWriter(w io.Writer, magic string) Writer {
	fw := Writer{bufio.NewWriter(w)}
	fw.bw.WriteString(magic)
	return fw
}

// Put writes the numbers v.
func (w Writer) Put(v ...float64) {
	var b [8]byte
	for _, x := range v {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		w.bw.Write(b[:])
	}
}

// Vec writes the length of v, then v.
func (w Writer) Vec(v []float64) {
	w.Put(float64(len(v)))
	w.Put(v...)
}

// Bool writes b as 1 or 0.
func (w Writer) Bool(b bool) {
	if b {
		w.Put(1)
	} else {
		w.Put(0)
	}
}

// Flush writes what is buffered and returns the first error of the
// writes.
func (w Writer) Flush() error { return w.bw.Flush() }

// Reader reads what a Writer wrote. Its first error sticks: the reads
// after it return zero, and Err holds it.
type Reader struct {
	br  *bufio.Reader
	Err error
}

// NewReader checks the magic string at the start of r: ok is false when
// the file does not begin with it (or is shorter).
func NewReader(r io.Reader, magic string) (_ *Reader, ok bool) {
	br := bufio.NewReader(r)
	got := make([]byte, len(magic))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != magic {
		return nil, false
	}
	return &Reader{br: br}, true
}

// Rest is the reader of what follows the numbers read so far.
func (r *Reader) Rest() io.Reader { return r.br }

// Get reads a number.
func (r *Reader) Get() float64 {
	var b [8]byte
	if r.Err == nil {
		_, r.Err = io.ReadFull(r.br, b[:])
	}
	if r.Err != nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
}

// Bool reads a number as a bool: anything but 0 is true.
func (r *Reader) Bool() bool { return r.Get() != 0 }

// Count reads a whole number in [0, limit].
func (r *Reader) Count(limit int) int {
	k := r.Get()
	if r.Err == nil && !(k >= 0 && k <= float64(limit) && k == math.Trunc(k)) {
		r.Err = fmt.Errorf("a count of %g, want 0 to %d", k, limit)
	}
	if r.Err != nil {
		return 0
	}
	return int(k)
}

// Vec reads what Writer.Vec wrote: a length up to 2³², then as many
// numbers.
func (r *Reader) Vec() []float64 { return r.Floats(r.Count(1 << 32)) }

// Floats reads k numbers, growing the slice as they arrive.
func (r *Reader) Floats(k int) []float64 {
	v := make([]float64, 0, min(k, 1<<16))
	for i := 0; i < k; i++ {
		x := r.Get()
		if r.Err != nil {
			break
		}
		v = append(v, x)
	}
	return v
}
