package figure

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/linattn/linattn/export"
)

// file is an output of linattn: the arrays of FILE.npz and the sidecar
// FILE.json beside it, which says which command wrote it.
type file struct {
	path    string
	kind    string // run, reduced, landscape or index (a sweep)
	trained bool   // a run written by linattn train
	z       *export.NPZReader
	side    sidecar
	idx     index
}

// sidecar is the part of a sidecar the figures read: the resolved spec's
// fields and the meta member (internal/cli writes it).
type sidecar struct {
	Model    string  `json:"model"`
	D        int     `json:"D"`
	N        int     `json:"N"`
	H        int     `json:"H"`
	R        int     `json:"R"`
	Tau      float64 `json:"tau"`
	Balanced bool    `json:"balanced"`
	White    float64 `json:"white"`
	WInit    float64 `json:"winit"`
	Seed     uint64  `json:"seed"`
	Meta     struct {
		Program  string `json:"program"`
		Command  string `json:"command"`
		Complete bool   `json:"complete"`
		Status   string `json:"status"`
		Problem  struct {
			Nu float64 `json:"nu"`
		} `json:"problem"`
		Result struct {
			ClosedFormExact *bool `json:"closed_form_exact"`
		} `json:"result"`
	} `json:"meta"`
}

// index is the part of a sweep's index.json the figures read.
type index struct {
	Swept       []string                     `json:"swept"`
	ParamValues map[string][]json.RawMessage `json:"param_values"`
	Rows        []struct {
		Run    int                        `json:"run"`
		File   string                     `json:"file"`
		Params map[string]json.RawMessage `json:"params"`
		Status string                     `json:"status"`
	} `json:"rows"`
}

// sidecarPath is FILE.json for FILE.npz.
func sidecarPath(npz string) string { return strings.TrimSuffix(npz, ".npz") + ".json" }

// open reads the arrays and the sidecar of the output file at path.
func open(path string) (*file, error) {
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
	f := &file{path: path, z: z}
	side, err := os.ReadFile(sidecarPath(path))
	if err != nil {
		return nil, fmt.Errorf("%s has no sidecar %s: not an output of linattn (%w)", path, sidecarPath(path), err)
	}
	if json.Unmarshal(side, &f.side) == nil && f.side.Meta.Program == "linattn" {
		switch c := f.side.Meta.Command; c {
		case "run", "reduced", "landscape":
			f.kind = c
			return f, nil
		case "train":
			// A training run writes the arrays of a run, and its loss
			// beside the population flow's (flow_loss): drawn as a run.
			f.kind, f.trained = "run", true
			return f, nil
		default:
			return nil, fmt.Errorf("%s was written by linattn %s, which has no figure (plot reads run, train, reduced, landscape and sweep output)", path, c)
		}
	}
	if json.Unmarshal(side, &f.idx) == nil && f.idx.Rows != nil && z.Has("status") {
		f.kind = "index"
		return f, nil
	}
	return nil, fmt.Errorf("%s: its sidecar %s is not that of a linattn output (no meta.program \"linattn\", nor a sweep index)", path, sidecarPath(path))
}

// array returns the array called name, whose shape must have len(dims)
// axes with dims[k] elements along axis k (−1: any number).
func (f *file) array(name string, dims ...int) (export.Array, error) {
	if !f.z.Has(name) {
		return export.Array{}, fmt.Errorf("%s has no array %q, which the output of linattn %s has", f.path, name, f.command())
	}
	a, err := f.z.Read(name)
	if err != nil {
		return a, fmt.Errorf("%s: %w", f.path, err)
	}
	ok := len(a.Shape) == len(dims)
	for k := 0; ok && k < len(dims); k++ {
		ok = dims[k] < 0 || a.Shape[k] == dims[k]
	}
	if !ok {
		return a, fmt.Errorf("%s: array %q has shape %v, want %s", f.path, name, a.Shape, shapeText(dims))
	}
	return a, nil
}

// floats returns a float64 array (see array).
func (f *file) floats(name string, dims ...int) ([]float64, []int, error) {
	a, err := f.array(name, dims...)
	if err != nil {
		return nil, nil, err
	}
	if a.Float == nil {
		return nil, nil, fmt.Errorf("%s: array %q has data type %s, want float64", f.path, name, a.Dtype())
	}
	return a.Float, a.Shape, nil
}

// ints returns an int64 array (see array).
func (f *file) ints(name string, dims ...int) ([]int64, []int, error) {
	a, err := f.array(name, dims...)
	if err != nil {
		return nil, nil, err
	}
	if a.Int == nil {
		return nil, nil, fmt.Errorf("%s: array %q has data type %s, want int64", f.path, name, a.Dtype())
	}
	return a.Int, a.Shape, nil
}

// bools returns a bool array (see array).
func (f *file) bools(name string, dims ...int) ([]bool, error) {
	a, err := f.array(name, dims...)
	if err != nil {
		return nil, err
	}
	if a.BoolAt == nil {
		return nil, fmt.Errorf("%s: array %q has data type %s, want bool", f.path, name, a.Dtype())
	}
	out := make([]bool, a.Size())
	for i := range out {
		out[i] = a.BoolAt(i)
	}
	return out, nil
}

func (f *file) command() string {
	if f.kind == "index" {
		return "sweep (index)"
	}
	return f.kind
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

// vectors reads several one-axis float64 arrays at once: dst[i] receives
// the array called names[i]. Shapes needing more checks use floats.
func (f *file) vectors(names []string, dst ...*[]float64) error {
	for i, name := range names {
		x, _, err := f.floats(name, -1)
		if err != nil {
			return err
		}
		*dst[i] = x
	}
	return nil
}
