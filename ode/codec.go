package ode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// encoder writes the little-endian binary encoding of a Snapshot: every
// number as 8 bytes (int64 or the float64's bits, so the values come back
// bit for bit), every slice as its length and its values. The first error
// sticks.
type encoder struct {
	w   *bufio.Writer
	buf [8]byte
	err error
}

func newEncoder(w io.Writer) *encoder { return &encoder{w: bufio.NewWriterSize(w, 1<<16)} }

func (e *encoder) u64(v uint64) {
	if e.err != nil {
		return
	}
	binary.LittleEndian.PutUint64(e.buf[:], v)
	_, e.err = e.w.Write(e.buf[:])
}

func (e *encoder) int(v int)      { e.u64(uint64(int64(v))) }
func (e *encoder) f64(v float64)  { e.u64(math.Float64bits(v)) }
func (e *encoder) ints(v []int32) { e.int(len(v)); e.i32s(v) }

func (e *encoder) bool(v bool) {
	if v {
		e.int(1)
	} else {
		e.int(0)
	}
}
func (e *encoder) f64s(v []float64) {
	e.int(len(v))
	for _, x := range v {
		e.f64(x)
	}
}

func (e *encoder) i32s(v []int32) {
	for _, x := range v {
		e.int(int(x))
	}
}

func (e *encoder) str(s string) {
	e.int(len(s))
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

func (e *encoder) flush() error {
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.err
}

// decoder reads what encoder wrote. The first error sticks; a length
// beyond maxLen (a corrupt file) is an error, not an allocation.
type decoder struct {
	r      *bufio.Reader
	buf    [8]byte
	err    error
	maxLen int
}

// errSnapshot marks a snapshot that cannot be read.
var errSnapshot = errors.New("ode: corrupt or foreign snapshot")

func newDecoder(r io.Reader) *decoder {
	return &decoder{r: bufio.NewReaderSize(r, 1<<16), maxLen: 1 << 40}
}

func (d *decoder) u64() uint64 {
	if d.err != nil {
		return 0
	}
	if _, err := io.ReadFull(d.r, d.buf[:]); err != nil {
		d.err = fmt.Errorf("%w: %v", errSnapshot, err)
		return 0
	}
	return binary.LittleEndian.Uint64(d.buf[:])
}

func (d *decoder) int() int        { return int(int64(d.u64())) }
func (d *decoder) f64() float64    { return math.Float64frombits(d.u64()) }
func (d *decoder) bool() bool      { return d.int() != 0 }
func (d *decoder) ints() []int32   { return d.i32s(d.len()) }
func (d *decoder) f64s() []float64 { return d.f64n(d.len()) }

// len reads a length and checks it.
func (d *decoder) len() int {
	n := d.int()
	if d.err == nil && (n < 0 || n > d.maxLen) {
		d.err = fmt.Errorf("%w: length %d", errSnapshot, n)
	}
	if d.err != nil {
		return 0
	}
	return n
}

func (d *decoder) f64n(n int) []float64 {
	v := make([]float64, 0, min(n, 1<<20))
	for i := 0; i < n && d.err == nil; i++ {
		v = append(v, d.f64())
	}
	return v
}

func (d *decoder) i32s(n int) []int32 {
	v := make([]int32, 0, min(n, 1<<20))
	for i := 0; i < n && d.err == nil; i++ {
		v = append(v, int32(d.int()))
	}
	return v
}

// fill reads len(dst) values into dst after checking the stored length.
func (d *decoder) fill(dst []float64) {
	if n := d.len(); d.err == nil && n != len(dst) {
		d.err = fmt.Errorf("%w: a vector of %d values, want %d", errSnapshot, n, len(dst))
	}
	for i := range dst {
		dst[i] = d.f64()
	}
}

func (d *decoder) str() string {
	n := d.len()
	if d.err != nil || n > 1<<16 {
		d.fail("a string of %d bytes", n)
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.err = fmt.Errorf("%w: %v", errSnapshot, err)
	}
	return string(b)
}

func (d *decoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{errSnapshot}, a...)...)
	}
}
