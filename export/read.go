package export

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
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
// files rely on it. The file must hold exactly the data its header
// declares: a header whose shape claims more than r holds (when r tells
// its length, as bytes.Reader does) is refused before anything is
// allocated, and data are read as they come, never more than the file
// has.
func ReadNPY(r io.Reader) (Array, error) {
	avail := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok {
		avail = int64(l.Len())
	}
	return readNPY(r, avail)
}

// readNPY is ReadNPY of a file of avail bytes (−1: not known).
func readNPY(r io.Reader, avail int64) (Array, error) {
	h, err := readHeader(r)
	if err != nil {
		return Array{}, err
	}
	item := itemSize(h.descr)
	if item == 0 {
		return Array{}, &DtypeError{Type: h.descr}
	}
	want := int64(h.size) * int64(item)
	if avail >= 0 && avail-int64(h.length) != want {
		return Array{}, fmt.Errorf("the header's shape %v of %s needs %d bytes of data, the file has %d", h.shape, h.descr, want, avail-int64(h.length))
	}
	raw, err := readData(r, want)
	if err != nil {
		return Array{}, fmt.Errorf("shape %v of %s: %w", h.shape, h.descr, err)
	}
	return decode(h, raw)
}

// readData reads exactly n bytes of data and checks that nothing follows,
// growing its buffer as the bytes arrive: a file that claims more than it
// holds costs no more memory than it holds.
func readData(r io.Reader, n int64) ([]byte, error) {
	const chunk = 1 << 20
	buf := make([]byte, 0, min(n, chunk))
	for int64(len(buf)) < n {
		k := int(min(n-int64(len(buf)), chunk))
		buf = slices.Grow(buf, k)
		got, err := io.ReadFull(r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+got]
		if err != nil {
			return nil, fmt.Errorf("the data are cut short: %d of %d bytes", len(buf), n)
		}
	}
	var extra [1]byte
	if k, _ := io.ReadFull(r, extra[:]); k > 0 {
		return nil, fmt.Errorf("more data than the %d bytes the header declares", n)
	}
	return buf, nil
}

// NPZReader reads the arrays of a .npz archive, as numpy.savez (or
// numpy.savez_compressed) writes it.
type NPZReader struct {
	files map[string]*zip.File
	names []string
}

// NewNPZReader opens the .npz archive in r, of size bytes. Its members
// NAME.npy are the arrays; a name twice is refused.
func NewNPZReader(r io.ReaderAt, size int64) (*NPZReader, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("not a .npz file: %w", err)
	}
	z := &NPZReader{files: map[string]*zip.File{}}
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			continue
		}
		if z.files[name] != nil {
			return nil, fmt.Errorf("not a .npz file: array %q appears twice", name)
		}
		z.files[name] = f
		z.names = append(z.names, name)
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
func (z *NPZReader) Has(name string) bool { return z.files[name] != nil }

// Read decodes the array called name, as ReadNPY does; the member's
// declared size bounds what its header may claim.
func (z *NPZReader) Read(name string) (Array, error) {
	f := z.files[name]
	if f == nil {
		return Array{}, fmt.Errorf("no array %q", name)
	}
	rc, err := f.Open()
	if err != nil {
		return Array{}, fmt.Errorf("array %q: %w", name, err)
	}
	defer rc.Close()
	avail := int64(-1)
	if f.UncompressedSize64 <= math.MaxInt64 {
		avail = int64(f.UncompressedSize64)
	}
	a, err := readNPY(rc, avail)
	if err != nil {
		return Array{}, fmt.Errorf("array %q: %w", name, err)
	}
	a.Name = name
	return a, nil
}

// decode turns the raw little-endian data of h into an Array in C order.
func decode(h npyHeader, raw []byte) (Array, error) {
	a := Array{Shape: h.shape}
	var perm []int // C position → stored position, for Fortran order
	if h.fortran && len(h.shape) > 1 {
		perm = fortranIndex(h.shape)
	}
	switch h.descr {
	case "<f8":
		x := make([]float64, h.size)
		for i := range x {
			x[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			if math.IsNaN(x[i]) || math.IsInf(x[i], 0) {
				return a, fmt.Errorf("value %d is %g, want finite values", i, x[i])
			}
		}
		a.Float = permute(x, perm)
	case "<i8":
		x := make([]int64, h.size)
		for i := range x {
			x[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		a.Int = permute(x, perm)
	case "|b1":
		x := make([]bool, h.size)
		for i, c := range raw {
			if c > 1 {
				return a, fmt.Errorf("value %d is the byte %d, want a bool: 0 or 1", i, c)
			}
			x[i] = c == 1
		}
		x = permute(x, perm)
		a.BoolAt = func(i int) bool { return x[i] }
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
