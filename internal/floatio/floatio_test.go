package floatio

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestRoundTrip: numbers, vectors and bools come back bit for bit (NaN's
// payload, −0 and the subnormals included) after the magic string; a
// wrong magic string, a count out of range and a vector that claims more
// numbers than the file holds are errors, the last without allocating
// what it claims.
func TestRoundTrip(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, "magic")
	nan := math.Float64frombits(0x7ff8_0000_dead_beef)
	v := []float64{math.Copysign(0, -1), 5e-324, math.MaxFloat64, nan, math.Inf(-1)}
	w.Put(3, 1.5)
	w.Vec(v)
	w.Bool(true)
	w.Bool(false)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if b.Len() != len("magic")+8*(2+1+len(v)+2) {
		t.Fatalf("%d bytes", b.Len())
	}
	r, ok := NewReader(bytes.NewReader(b.Bytes()), "magic")
	if !ok {
		t.Fatal("magic string not found")
	}
	k, x := r.Count(10), r.Get()
	got := r.Vec()
	yes, no := r.Bool(), r.Bool()
	bits := func(v []float64) []uint64 {
		out := make([]uint64, len(v))
		for i, x := range v {
			out[i] = math.Float64bits(x)
		}
		return out
	}
	if r.Err != nil || k != 3 || x != 1.5 || !slices.Equal(bits(got), bits(v)) || !yes || no {
		t.Errorf("read back %d %g %v %v %v (%v)", k, x, got, yes, no, r.Err)
	}
	r.Get()
	if r.Err == nil {
		t.Error("a read past the end did not fail")
	}
	if _, ok := NewReader(strings.NewReader("magix"), "magic"); ok {
		t.Error("a wrong magic string was taken")
	}
	r, _ = NewReader(bytes.NewReader(b.Bytes()), "magic")
	if r.Count(2); r.Err == nil || !strings.Contains(r.Err.Error(), "a count of 3, want 0 to 2") {
		t.Errorf("count out of range: %v", r.Err)
	}
	var claim bytes.Buffer
	w = NewWriter(&claim, "m")
	w.Put(1<<32, 1, 2)
	w.Flush()
	r, _ = NewReader(bytes.NewReader(claim.Bytes()), "m")
	if got := r.Vec(); r.Err == nil || len(got) != 2 || cap(got) > 1<<16 {
		t.Errorf("a vector claiming 2^32 numbers: %d read, capacity %d, %v", len(got), cap(got), r.Err)
	}
}
