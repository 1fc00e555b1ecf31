// Package export writes arrays as NumPy .npy and .npz files with their real
// shapes, and metadata as JSON, atomically: each file is written to a
// temporary file in the destination directory, synced and renamed, so a
// reader never sees a partial file. It also reads such files back
// (ReadNPY, NPZReader): the one reader of arrays in the module.
//
// The .npy format is version 1.0 of numpy.lib.format (NEP 1): the magic
// string, a little-endian header length, a Python dict literal giving
// 'descr', 'fortran_order' and 'shape', padded so the data starts at a
// multiple of 64 bytes, then the data in C order. A .npz is a zip archive of
// such files, as numpy.savez writes it. Load with
//
//	d = numpy.load("run.npz"); d["loss"], d["K"].shape
package export

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Array is a named array in C order. Exactly one of Float, Int, FloatAt,
// IntAt and BoolAt holds the data, whose length is the product of Shape (an
// empty Shape is a scalar). Float and FloatAt are float64 ('<f8'), Int and
// IntAt int64 ('<i8'), BoolAt numpy's bool ('|b1'). The ...At functions
// generate element i on demand, so an array larger than memory is streamed
// to the file; a non-finite generated value aborts the write.
type Array struct {
	Name    string
	Shape   []int
	Float   []float64
	Int     []int64
	FloatAt func(i int) float64
	IntAt   func(i int) int64
	BoolAt  func(i int) bool
}

// Size returns the number of elements, the product of Shape.
func (a Array) Size() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// Floats returns a float64 array.
func Floats(name string, data []float64, shape ...int) Array {
	return Array{Name: name, Shape: shape, Float: data}
}

// Ints returns an int64 array.
func Ints(name string, data []int64, shape ...int) Array {
	return Array{Name: name, Shape: shape, Int: data}
}

// Bools returns a bool array; len(data) must be the product of shape.
func Bools(name string, data []bool, shape ...int) Array {
	return Array{Name: name, Shape: shape, BoolAt: func(i int) bool { return data[i] }}
}

var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks the name, the shape against the data and that every value
// is finite.
func (a Array) Validate() error {
	if !validName.MatchString(a.Name) {
		return fmt.Errorf("export: array name %q must be an identifier ([A-Za-z_][A-Za-z0-9_]*)", a.Name)
	}
	kinds := 0
	for _, set := range []bool{a.Float != nil, a.Int != nil, a.FloatAt != nil, a.IntAt != nil, a.BoolAt != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("export: array %q must hold exactly one kind of data", a.Name)
	}
	for i, d := range a.Shape {
		if d < 0 {
			return fmt.Errorf("export: array %q: shape[%d] = %d, want ≥ 0", a.Name, i, d)
		}
	}
	size := a.Size()
	if a.Float != nil || a.Int != nil {
		if n := len(a.Float) + len(a.Int); n != size {
			return fmt.Errorf("export: array %q has %d values, its shape %v needs %d", a.Name, n, a.Shape, size)
		}
	}
	for i, v := range a.Float {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("export: array %q: value %d is %g, want finite values", a.Name, i, v)
		}
	}
	return nil
}

// WriteNPY encodes a in the .npy format.
func WriteNPY(w io.Writer, a Array) error {
	if err := a.Validate(); err != nil {
		return err
	}
	descr := a.Dtype()
	shape := make([]string, len(a.Shape))
	for i, d := range a.Shape {
		shape[i] = strconv.Itoa(d)
	}
	tuple := "(" + strings.Join(shape, ", ")
	if len(a.Shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	// magic (6) + version (2) + header length (2) + dict + padding + '\n'
	// is a multiple of 64.
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	header := dict + strings.Repeat(" ", pad) + "\n"
	if len(header) > math.MaxUint16 {
		return fmt.Errorf("export: array %q: header too long", a.Name)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("\x93NUMPY\x01\x00")
	var hl [2]byte
	binary.LittleEndian.PutUint16(hl[:], uint16(len(header)))
	bw.Write(hl[:])
	bw.WriteString(header)
	var b [8]byte
	// Values in chunks of 512: one Write per 4 KiB.
	var chunk [4096]byte
	for off := 0; off < len(a.Float); off += len(chunk) / 8 {
		vals := a.Float[off:min(off+len(chunk)/8, len(a.Float))]
		for i, v := range vals {
			binary.LittleEndian.PutUint64(chunk[8*i:], math.Float64bits(v))
		}
		bw.Write(chunk[:8*len(vals)])
	}
	for _, v := range a.Int {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		bw.Write(b[:])
	}
	if a.BoolAt != nil {
		for i, n := 0, a.Size(); i < n; i++ {
			var c byte
			if a.BoolAt(i) {
				c = 1
			}
			if err := bw.WriteByte(c); err != nil {
				return err
			}
		}
	}
	if a.FloatAt != nil || a.IntAt != nil {
		for i, n := 0, a.Size(); i < n; i++ {
			var bits uint64
			if a.FloatAt != nil {
				v := a.FloatAt(i)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("export: array %q: value %d is %g, want finite values", a.Name, i, v)
				}
				bits = math.Float64bits(v)
			} else {
				bits = uint64(a.IntAt(i))
			}
			binary.LittleEndian.PutUint64(b[:], bits)
			if _, err := bw.Write(b[:]); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// WriteNPZ encodes the arrays as a .npz archive (uncompressed, like
// numpy.savez). Names must be distinct.
func WriteNPZ(w io.Writer, arrays []Array) error {
	seen := map[string]bool{}
	for _, a := range arrays {
		if err := a.Validate(); err != nil {
			return err
		}
		if seen[a.Name] {
			return fmt.Errorf("export: array name %q appears twice", a.Name)
		}
		seen[a.Name] = true
	}
	zw := zip.NewWriter(w)
	for _, a := range arrays {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: zip.Store})
		if err != nil {
			return err
		}
		if err := WriteNPY(f, a); err != nil {
			return err
		}
	}
	return zw.Close()
}

// SaveNPY writes a to path atomically.
func SaveNPY(path string, a Array) error {
	if err := a.Validate(); err != nil {
		return err
	}
	return WriteFileAtomic(path, func(w io.Writer) error { return WriteNPY(w, a) })
}

// SaveNPZ writes the arrays to path atomically.
func SaveNPZ(path string, arrays []Array) error {
	return WriteFileAtomic(path, func(w io.Writer) error { return WriteNPZ(w, arrays) })
}

// SaveJSON writes v as indented JSON to path atomically.
func SaveJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("export: encode %s: %w", path, err)
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}

// WriteFileAtomic writes path through write: into a temporary file in the
// same directory, synced, closed and renamed over path. On any error the
// temporary file is removed and path is untouched.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	p, err := CreatePending(path, write)
	if err != nil {
		return err
	}
	return p.Commit()
}

// PendingFile is a file written and synced under a temporary name in its
// directory, not yet in place: Commit renames it over its path, Abort
// removes it. Several files can be written and synced at once and then put
// in place in a chosen order.
type PendingFile struct {
	tmp, path string
}

// CreatePending writes a PendingFile for path through write.
func CreatePending(path string, write func(io.Writer) error) (*PendingFile, error) {
	return createPending(path, write, nil)
}

// createPending is CreatePending with the writes to the temporary file
// passed through wrap (nil: none), which a test makes fail as a full disk
// does.
func createPending(path string, write func(io.Writer) error, wrap func(io.Writer) io.Writer) (_ *PendingFile, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("export: create temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	var file io.Writer = tmp
	if wrap != nil {
		file = wrap(tmp)
	}
	bw := bufio.NewWriterSize(file, 1<<16) // few system calls for large arrays
	if err = write(bw); err != nil {
		return nil, fmt.Errorf("export: write %s: %w", path, cause(err))
	}
	if err = bw.Flush(); err != nil {
		return nil, fmt.Errorf("export: write %s: %w", path, cause(err))
	}
	if err = tmp.Sync(); err != nil {
		return nil, fmt.Errorf("export: sync %s: %w", path, cause(err))
	}
	if err = tmp.Close(); err != nil {
		return nil, fmt.Errorf("export: close %s: %w", path, cause(err))
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return nil, fmt.Errorf("export: chmod %s: %w", path, err)
	}
	return &PendingFile{tmp: tmp.Name(), path: path}, nil
}

// cause is the error of a system call on the temporary file without the
// temporary file's name, which the user never sees: "no space left on
// device" for a full file system.
func cause(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Commit renames the file into place.
func (p *PendingFile) Commit() error {
	if err := os.Rename(p.tmp, p.path); err != nil {
		os.Remove(p.tmp)
		return fmt.Errorf("export: rename to %s: %w", p.path, err)
	}
	return nil
}

// Abort removes the temporary file.
func (p *PendingFile) Abort() { os.Remove(p.tmp) }
