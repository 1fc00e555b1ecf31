package flow

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// floatWriter writes what Checkpoint.Save and SamplingProgress.Save save:
// a magic string, then numbers as the little-endian bits of float64, so
// that they come back bit for bit (floatReader).
type floatWriter struct{ bw *bufio.Writer }

func newFloatWriter(w io.Writer, magic string) floatWriter {
	fw := floatWriter{bufio.NewWriter(w)}
	fw.bw.WriteString(magic)
	return fw
}

// put writes the numbers v.
func (w floatWriter) put(v ...float64) {
	for _, x := range v {
		binary.Write(w.bw, binary.LittleEndian, math.Float64bits(x))
	}
}

// vec writes the length of v, then v.
func (w floatWriter) vec(v []float64) {
	w.put(float64(len(v)))
	w.put(v...)
}

// flush writes what is buffered and returns the first error of the writes.
func (w floatWriter) flush() error { return w.bw.Flush() }

// floatReader reads what a floatWriter wrote. Its first error sticks:
// the reads after it return zero, and err holds it.
type floatReader struct {
	br  *bufio.Reader
	err error
}

// newFloatReader checks the magic string at the start of r; what it
// wrote otherwise is not of the kind: an error wrapping ErrCheckpoint
// that says so.
func newFloatReader(r io.Reader, magic, kind string) (*floatReader, error) {
	br := bufio.NewReader(r)
	got := make([]byte, len(magic))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != magic {
		return nil, fmt.Errorf("%w: not %s", ErrCheckpoint, kind)
	}
	return &floatReader{br: br}, nil
}

// get reads a number.
func (r *floatReader) get() float64 {
	var u uint64
	if r.err == nil {
		r.err = binary.Read(r.br, binary.LittleEndian, &u)
	}
	return math.Float64frombits(u)
}

// count reads a whole number in [0, limit].
func (r *floatReader) count(limit int) int {
	k := r.get()
	if r.err == nil && !(k >= 0 && k <= float64(limit) && k == math.Trunc(k)) {
		r.err = fmt.Errorf("a count of %g, want 0 to %d", k, limit)
	}
	if r.err != nil {
		return 0
	}
	return int(k)
}

// vec reads what floatWriter.vec wrote: a length up to 2³², then as many
// numbers.
func (r *floatReader) vec() []float64 { return r.floats(r.count(1 << 32)) }

// floats reads k numbers, growing the slice as they arrive: a length that
// claims more than the file holds costs no more memory than it holds.
func (r *floatReader) floats(k int) []float64 {
	v := make([]float64, 0, min(k, 1<<16))
	for i := 0; i < k && r.err == nil; i++ {
		v = append(v, r.get())
	}
	return v
}
