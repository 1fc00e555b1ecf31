package export

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/linattn/linattn/internal/fuzzseed"
)

// seedArrays are arrays of every kind and rank ReadNPY reads.
func seedArrays() []Array {
	return append(sample(), Floats("matrix", []float64{1, 0, 0, 1, 0.5, -0.5}, 3, 2), Ints("scalar_int", []int64{-3}))
}

// TestSeeds writes (with -seeds) the corpora of FuzzReadNPY and FuzzNPZ:
// the files WriteNPY and WriteNPZ write, a file in Fortran order, and the
// damaged files the fuzzing found; and checks that the valid ones read.
func TestSeeds(t *testing.T) {
	for _, a := range seedArrays() {
		var b bytes.Buffer
		if err := WriteNPY(&b, a); err != nil {
			t.Fatal(err)
		}
		fuzzseed.Write(t, "FuzzReadNPY", "valid-"+a.Name, b.Bytes())
	}
	fortran := npyFile("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", make([]byte, 48))
	fuzzseed.Write(t, "FuzzReadNPY", "valid-fortran", fortran)
	// The file of issue 46: its header claims 118 bytes and has 60, which
	// made npyio v0.9.0's reader slice at −1.
	fuzzseed.Write(t, "FuzzReadNPY", "header-cut-short", []byte("\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (4, 4), }\n"))
	fuzzseed.Write(t, "FuzzReadNPY", "claims-1e12", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", make([]byte, 8)))
	var z bytes.Buffer
	if err := WriteNPZ(&z, seedArrays()); err != nil {
		t.Fatal(err)
	}
	fuzzseed.Write(t, "FuzzNPZ", "valid-arrays", z.Bytes())
	z.Reset()
	if err := WriteNPZ(&z, []Array{Floats("v", []float64{0.5, 2}, 2)}); err != nil {
		t.Fatal(err)
	}
	fuzzseed.Write(t, "FuzzNPZ", "valid-small", z.Bytes())

	for name, b := range fuzzseed.Valid(t, "FuzzReadNPY") {
		if _, err := ReadNPY(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, b := range fuzzseed.Valid(t, "FuzzNPZ") {
		z, err := NewNPZReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, n := range z.Names() {
			if _, err := z.Read(n); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// FuzzReadNPY: any bytes either are refused with a one-line error or
// decode to an array no larger than the file, which WriteNPY writes and
// ReadNPY reads back to the same array and the same bytes.
func FuzzReadNPY(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadNPY(bytes.NewReader(data))
		if err != nil {
			fuzzseed.OneLine(t, err)
			return
		}
		// The same bytes through a reader that does not tell its length.
		b, err := ReadNPY(struct{ *bytes.Buffer }{bytes.NewBuffer(data)})
		if err != nil || !sameArray(a, b) {
			t.Fatalf("read without the length: %v", err)
		}
		if a.Size() > len(data) {
			t.Fatalf("%d elements from %d bytes", a.Size(), len(data))
		}
		a.Name = "x"
		checkRoundTrip(t, a)
	})
}

// FuzzNPZ: any bytes either are refused with a one-line error, or every
// array of the archive reads or is refused so, and the arrays read write
// to an archive that reads back to the same arrays and the same bytes.
func FuzzNPZ(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		z, err := NewNPZReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			fuzzseed.OneLine(t, err)
			return
		}
		var arrays []Array
		for _, name := range z.Names() {
			a, err := z.Read(name)
			if err != nil {
				fuzzseed.OneLine(t, err)
				continue
			}
			if validName.MatchString(name) {
				arrays = append(arrays, a)
			}
		}
		var b1, b2 bytes.Buffer
		if err := WriteNPZ(&b1, arrays); err != nil {
			t.Fatal(err)
		}
		z2, err := NewNPZReader(bytes.NewReader(b1.Bytes()), int64(b1.Len()))
		if err != nil {
			t.Fatal(err)
		}
		var again []Array
		for i, name := range z2.Names() {
			a, err := z2.Read(name)
			if err != nil || !sameArray(a, arrays[i]) {
				t.Fatalf("array %q does not read back: %v", name, err)
			}
			again = append(again, a)
		}
		if err := WriteNPZ(&b2, again); err != nil || !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("write → read → write changed the archive (%v)", err)
		}
	})
}

// checkRoundTrip: a writes, reads back the same, and writes the same
// bytes again.
func checkRoundTrip(t *testing.T, a Array) {
	t.Helper()
	var b1, b2 bytes.Buffer
	if err := WriteNPY(&b1, a); err != nil {
		t.Fatal(err)
	}
	back, err := ReadNPY(bytes.NewReader(b1.Bytes()))
	if err != nil || !sameArray(a, back) {
		t.Fatalf("does not read back: %v", err)
	}
	back.Name = a.Name
	if err := WriteNPY(&b2, back); err != nil || !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Fatalf("write → read → write changed the bytes (%v)", err)
	}
}

// sameArray reports whether a and b hold the same type, shape and values
// (floats bit for bit).
func sameArray(a, b Array) bool {
	if a.Dtype() != b.Dtype() || !slices.Equal(a.Shape, b.Shape) {
		return false
	}
	for i := 0; i < a.Size(); i++ {
		switch {
		case a.Float != nil && math.Float64bits(a.Float[i]) != math.Float64bits(b.Float[i]),
			a.Int != nil && a.Int[i] != b.Int[i],
			a.BoolAt != nil && a.BoolAt(i) != b.BoolAt(i):
			return false
		}
	}
	return true
}
