package export

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadNPZRoundTrip: what WriteNPZ writes, NPZReader reads back with
// the same names, shapes, types and values.
func TestReadNPZRoundTrip(t *testing.T) {
	flags := []bool{true, false, false, true, true, false}
	arrays := []Array{
		Floats("x", []float64{1.5, -2, math.SmallestNonzeroFloat64, 1e300, 0, 7}, 2, 3),
		Ints("n", []int64{-1, 0, 1 << 40}, 3),
		Bools("b", flags, 3, 2),
		Floats("s", []float64{math.Pi}),
	}
	path := filepath.Join(t.TempDir(), "a.npz")
	if err := SaveNPZ(path, arrays); err != nil {
		t.Fatal(err)
	}
	z, err := LoadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(z.Names(), ","); got != "x,n,b,s" {
		t.Errorf("names %s", got)
	}
	for _, want := range arrays {
		got, err := z.Read(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != want.Name || got.Dtype() != want.Dtype() || !slices.Equal(got.Shape, want.Shape) {
			t.Errorf("%s: %s %v, want %s %v", want.Name, got.Dtype(), got.Shape, want.Dtype(), want.Shape)
		}
		for i := 0; i < want.Size(); i++ {
			switch {
			case want.Float != nil && got.Float[i] != want.Float[i],
				want.Int != nil && got.Int[i] != want.Int[i],
				want.BoolAt != nil && got.BoolAt(i) != want.BoolAt(i):
				t.Errorf("%s[%d] differs", want.Name, i)
			}
		}
	}
}

// npyFile is a version 1.0 .npy file with the given header dictionary and
// raw little-endian data.
func npyFile(dict string, data []byte) []byte {
	header := dict + strings.Repeat(" ", (64-(11+len(dict))%64)%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

// TestReadNPYFortranOrder: Fortran-order data, as numpy writes for a
// transposed array, is returned in C order, for floats and ints alike.
func TestReadNPYFortranOrder(t *testing.T) {
	// The C-order matrix [[1 2 3] [4 5 6]] stored by columns: 1 4 2 5 3 6.
	var f, n bytes.Buffer
	for _, v := range []float64{1, 4, 2, 5, 3, 6} {
		binary.Write(&f, binary.LittleEndian, v)
		binary.Write(&n, binary.LittleEndian, int64(v))
	}
	for _, tc := range []struct {
		dtype string
		data  []byte
	}{{"<f8", f.Bytes()}, {"<i8", n.Bytes()}} {
		a, err := ReadNPY(bytes.NewReader(npyFile("{'descr': '"+tc.dtype+"', 'fortran_order': True, 'shape': (2, 3), }", tc.data)))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 6; i++ {
			v := 0.0
			if a.Float != nil {
				v = a.Float[i]
			} else {
				v = float64(a.Int[i])
			}
			if v != float64(i+1) || !slices.Equal(a.Shape, []int{2, 3}) {
				t.Fatalf("%s: element %d = %v (shape %v), want %d", tc.dtype, i, v, a.Shape, i+1)
			}
		}
	}
}

// TestReadRefuses: non-finite floats, data types other than float64,
// int64 and bool, a missing array and a file that is not a zip archive are
// errors that say so.
func TestReadRefuses(t *testing.T) {
	nan := make([]byte, 8)
	binary.LittleEndian.PutUint64(nan, math.Float64bits(math.NaN()))
	f4 := make([]byte, 4)
	for _, tc := range []struct {
		file []byte
		want string
	}{
		{npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", nan), "value 0 is NaN, want finite values"},
		{npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f4), `data type "<f4", want float64`},
	} {
		if _, err := ReadNPY(bytes.NewReader(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "a.npz")
	if err := SaveNPZ(path, []Array{Floats("x", []float64{1}, 1)}); err != nil {
		t.Fatal(err)
	}
	z, _ := LoadNPZ(path)
	if _, err := z.Read("y"); err == nil || err.Error() != `no array "y"` {
		t.Errorf("missing array: %v", err)
	}
	if _, err := NewNPZReader(bytes.NewReader([]byte("text")), 4); err == nil || !strings.Contains(err.Error(), "not a .npz file") {
		t.Errorf("not a zip: %v", err)
	}
}

// TestReadNPYDamaged: damaged and lying headers are refused in one line
// each, before anything they claim is allocated. The first is the file of
// issue 46, on which github.com/sbinet/npyio v0.9.0 (and v0.14.0) panics:
// its header claims 118 bytes and the file ends 60 bytes in.
func TestReadNPYDamaged(t *testing.T) {
	f8 := func(shape string, n int) []byte {
		return npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': "+shape+", }", make([]byte, n))
	}
	for _, tc := range []struct {
		file []byte
		want string
	}{
		{[]byte("\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (4, 4), }\n"), "the .npy header is cut short: 60 of the 118 bytes it claims"},
		{f8("(1000000, 1000000)", 8), "needs 8000000000000 bytes of data, the file has 8"},
		{f8("(2,)", 8), "needs 16 bytes of data, the file has 8"},
		{f8("(1,)", 16), "needs 8 bytes of data, the file has 16"},
		{f8("(2, -1)", 8), "want a dimension 0 to 10^15"},
		{f8("(1099511627776, 2)", 8), "more than 2^40 elements"},
		{npyFile("{'descr': '<f8', 'shape': (1,), }", make([]byte, 8)), "want the keys 'descr', 'fortran_order' and 'shape'"},
		{npyFile("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)), `key "descr" appears twice`},
		{npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", []byte{2}), "the byte 2, want a bool: 0 or 1"},
		{[]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"), "claims 4294967295 bytes, more than the 65536 allowed"},
		{[]byte("PK\x03\x04"), "not a .npy file"},
	} {
		_, err := ReadNPY(bytes.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want one line with %q", err, tc.want)
		}
	}
	// A reader that does not tell its length: the data read as they come.
	_, err := ReadNPY(struct{ io.Reader }{bytes.NewReader(f8("(1000000, 1000000)", 8))})
	if err == nil || !strings.Contains(err.Error(), "the data are cut short: 8 of 8000000000000 bytes") {
		t.Errorf("streamed: %v", err)
	}
}
