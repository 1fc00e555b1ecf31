package export

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/sbinet/npyio/npy"
	"github.com/sbinet/npyio/npz"
)

// Dtype is the numpy type string of a's data: '<f8' (float64), '<i8'
// (int64) or '|b1' (bool).
func (a Array) Dtype() string {
	switch {
	case a.Int != nil || a.IntAt != nil:
		return "<i8"
	case a.BoolAt != nil:
		return "|b1"
	}
	return "<f8"
}

// ReadNPY decodes one .npy file holding float64 ('<f8'), int64 ('<i8') or
// bool ('|b1') data in C or Fortran order. The Array has no name, its data
// in C order in Float, Int or (bools) BoolAt, and its shape. Floats must be
// finite: the writer never writes anything else, and the readers of our
// files rely on it.
func ReadNPY(r io.Reader) (Array, error) {
	nr, err := npy.NewReader(r)
	if err != nil {
		return Array{}, err
	}
	return decode(nr.Header, nr.Read)
}

// NPZReader reads the arrays of a .npz archive, as numpy.savez writes it.
type NPZReader struct {
	zr    *npz.Reader
	names []string
}

// NewNPZReader opens the .npz archive in r, of size bytes.
func NewNPZReader(r io.ReaderAt, size int64) (*NPZReader, error) {
	zr, err := npz.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("not a .npz file: %w", err)
	}
	z := &NPZReader{zr: zr}
	for _, k := range zr.Keys() {
		if name, ok := strings.CutSuffix(k, ".npy"); ok {
			z.names = append(z.names, name)
		}
	}
	return z, nil
}

// LoadNPZ opens the .npz file at path; the archive is read into memory.
func LoadNPZ(path string) (*NPZReader, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return NewNPZReader(bytes.NewReader(b), int64(len(b)))
}

// Names lists the arrays of the archive in its order.
func (z *NPZReader) Names() []string { return append([]string(nil), z.names...) }

// Has reports whether the archive holds the array called name.
func (z *NPZReader) Has(name string) bool {
	for _, n := range z.names {
		if n == name {
			return true
		}
	}
	return false
}

// Read decodes the array called name, as ReadNPY does.
func (z *NPZReader) Read(name string) (Array, error) {
	if !z.Has(name) {
		return Array{}, fmt.Errorf("no array %q", name)
	}
	hdr := z.zr.Header(name + ".npy")
	if hdr == nil {
		return Array{}, fmt.Errorf("array %q is not a valid .npy", name)
	}
	a, err := decode(*hdr, func(ptr any) error { return z.zr.Read(name+".npy", ptr) })
	if err != nil {
		return Array{}, fmt.Errorf("array %q: %w", name, err)
	}
	a.Name = name
	return a, nil
}

// decode reads the data described by h through read and puts it in C
// order.
func decode(h npy.Header, read func(ptr any) error) (Array, error) {
	shape := append([]int{}, h.Descr.Shape...)
	a := Array{Shape: shape}
	var perm []int // C position → stored position, for Fortran order
	if h.Descr.Fortran && len(shape) > 1 {
		perm = fortranIndex(shape)
	}
	switch h.Descr.Type {
	case "<f8":
		var x []float64
		if err := read(&x); err != nil {
			return a, err
		}
		for i, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return a, fmt.Errorf("value %d is %g, want finite values", i, v)
			}
		}
		a.Float = permute(x, perm)
	case "<i8":
		var x []int64
		if err := read(&x); err != nil {
			return a, err
		}
		a.Int = permute(x, perm)
	case "|b1":
		var x []bool
		if err := read(&x); err != nil {
			return a, err
		}
		x = permute(x, perm)
		a.BoolAt = func(i int) bool { return x[i] }
	default:
		return a, &DtypeError{Type: h.Descr.Type}
	}
	return a, nil
}

// DtypeError is the error of reading an array of a data type other than
// float64, int64 and bool; a reader that wants floats alone says so
// itself (errors.As).
type DtypeError struct {
	Type string // numpy's type string, such as '<f4'
}

func (e *DtypeError) Error() string {
	return fmt.Sprintf("data type %q, want float64 ('<f8'; numpy: a.astype(numpy.float64)), int64 ('<i8') or bool ('|b1')", e.Type)
}

// fortranIndex returns, for each C-order position of an array of the given
// shape, its position in column-major (Fortran) storage.
func fortranIndex(shape []int) []int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	out := make([]int, n)
	idx := make([]int, len(shape))
	for i := range out {
		pos, stride := 0, 1
		for k := range shape {
			pos += idx[k] * stride
			stride *= shape[k]
		}
		out[i] = pos
		for k := len(shape) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return out
}

func permute[T any](x []T, perm []int) []T {
	if perm == nil || len(perm) != len(x) {
		return x
	}
	out := make([]T, len(x))
	for i, p := range perm {
		out[i] = x[p]
	}
	return out
}
