package output

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/linattn/linattn/export"
)

// File is an output read back: the arrays of FILE.npz and the sidecar
// FILE.json beside it, or for a sweep's index.npz its index.json.
type File struct {
	Path string
	// Sidecar is the file's sidecar; nil for a sweep index.
	Sidecar *Sidecar
	// Index is a sweep's index; nil for other outputs.
	Index *Index

	names []string
	read  func(name string) (export.Array, error)
}

// Open reads the output file at path: FILE.npz as linattn run, train,
// reduced, landscape or sweep (DIR/index.npz) wrote it, with its sidecar.
// Its errors say why a file is not such an output.
func Open(path string) (*File, error) {
	if !strings.HasSuffix(path, ".npz") {
		return nil, fmt.Errorf("%s: want a FILE.npz written by linattn run, train, reduced, landscape or sweep", path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, err // names the path
	}
	z, err := export.LoadNPZ(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &File{Path: path, names: z.Names(), read: z.Read}
	side, err := os.ReadFile(SidecarPath(path))
	if err != nil {
		return nil, fmt.Errorf("%s has no sidecar %s: not an output of linattn (%w)", path, SidecarPath(path), err)
	}
	if sc, err := parseSidecar(side); err == nil {
		f.Sidecar = sc
		return f, nil
	}
	var idx Index
	if json.Unmarshal(side, &idx) == nil && idx.Rows != nil && f.Has(IndexStatus) {
		f.Index = &idx
		return f, nil
	}
	return nil, fmt.Errorf("%s: its sidecar %s is not that of a linattn output (no meta.program %q, nor a sweep index)", path, SidecarPath(path), Program)
}

// Command is the command that wrote the file: run, train, reduced,
// landscape, or sweep for a sweep's index.
func (f *File) Command() string {
	if f.Index != nil {
		return "sweep"
	}
	return f.Sidecar.Meta.Command
}

// NewFile returns an output in memory, as Open returns one from disk:
// the arrays, and the sidecar, whose Meta.Arrays it fills in. Path is
// empty.
func NewFile(side *Sidecar, arrays []export.Array) *File {
	f := &File{Sidecar: side, read: func(name string) (export.Array, error) {
		for _, a := range arrays {
			if a.Name == name {
				return a, nil
			}
		}
		return export.Array{}, fmt.Errorf("no array %q", name)
	}}
	side.Meta.Arrays = map[string][]int{}
	for _, a := range arrays {
		f.names = append(f.names, a.Name)
		side.Meta.Arrays[a.Name] = a.Shape
	}
	return f
}

// Names lists the arrays of the file in its order.
func (f *File) Names() []string { return append([]string(nil), f.names...) }

// Has reports whether the file holds the array called name.
func (f *File) Has(name string) bool { return slices.Contains(f.names, name) }

// Read returns the array called name, whatever its shape: its data in C
// order (Float, Int or, for bools, BoolAt) and its Shape.
func (f *File) Read(name string) (export.Array, error) {
	if !f.Has(name) {
		return export.Array{}, fmt.Errorf("%s has no array %q, which the output of linattn %s has", f.Path, name, f.what())
	}
	a, err := f.read(name)
	if err != nil {
		return a, fmt.Errorf("%s: %w", f.Path, err)
	}
	return a, nil
}

// Array returns the array called name, whose shape must have len(dims)
// axes with dims[k] elements along axis k (−1: any number).
func (f *File) Array(name string, dims ...int) (export.Array, error) {
	a, err := f.Read(name)
	if err != nil {
		return a, err
	}
	ok := len(a.Shape) == len(dims)
	for k := 0; ok && k < len(dims); k++ {
		ok = dims[k] < 0 || a.Shape[k] == dims[k]
	}
	if !ok {
		return a, fmt.Errorf("%s: array %q has shape %v, want %s", f.Path, name, a.Shape, shapeText(dims))
	}
	return a, nil
}

// Floats returns a float64 array and its shape (see Array).
func (f *File) Floats(name string, dims ...int) ([]float64, []int, error) {
	a, err := f.Array(name, dims...)
	if err != nil {
		return nil, nil, err
	}
	if a.Float == nil {
		return nil, nil, fmt.Errorf("%s: array %q has data type %s, want float64", f.Path, name, a.Dtype())
	}
	return a.Float, a.Shape, nil
}

// Ints returns an int64 array and its shape (see Array).
func (f *File) Ints(name string, dims ...int) ([]int64, []int, error) {
	a, err := f.Array(name, dims...)
	if err != nil {
		return nil, nil, err
	}
	if a.Int == nil {
		return nil, nil, fmt.Errorf("%s: array %q has data type %s, want int64", f.Path, name, a.Dtype())
	}
	return a.Int, a.Shape, nil
}

// Bools returns a bool array (see Array).
func (f *File) Bools(name string, dims ...int) ([]bool, error) {
	a, err := f.Array(name, dims...)
	if err != nil {
		return nil, err
	}
	if a.BoolAt == nil {
		return nil, fmt.Errorf("%s: array %q has data type %s, want bool", f.Path, name, a.Dtype())
	}
	out := make([]bool, a.Size())
	for i := range out {
		out[i] = a.BoolAt(i)
	}
	return out, nil
}

// what names the command in messages: a sweep's index is "sweep (index)".
func (f *File) what() string {
	if f.Index != nil {
		return "sweep (index)"
	}
	return f.Command()
}

func shapeText(dims []int) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = fmt.Sprint(d)
		if d < 0 {
			parts[i] = "any"
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Verify reads the sidecar of the output npz and checks that the .npz is
// the file it describes (its SHA-256 is Meta.OutputSHA256).
func Verify(npz string) (*Sidecar, []byte, error) {
	side, raw, err := ReadSidecar(npz)
	if err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(npz)
	if err != nil {
		return nil, nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != side.Meta.OutputSHA256 {
		return nil, nil, fmt.Errorf("%s does not have the SHA-256 its sidecar records", npz)
	}
	return side, raw, nil
}
