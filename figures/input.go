package figures

import (
	"fmt"

	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

// file is an output as the figures read it (package output): its arrays,
// its sidecar's spec (package spec) and meta, and which figure draws it.
type file struct {
	*output.File
	path    string
	kind    string // run, reduced, landscape or index (a sweep)
	trained bool   // a run written by linattn train
	spec    *spec.Spec
	meta    *output.Meta
	idx     *output.Index
}

// open reads the output file at path.
func open(path string) (*file, error) {
	of, err := output.Open(path)
	if err != nil {
		return nil, err
	}
	return newFile(of)
}

// newFile tells which figure draws the output of.
func newFile(of *output.File) (*file, error) {
	f := &file{File: of, path: of.Path, idx: of.Index}
	if of.Index != nil {
		f.kind = "index"
		return f, nil
	}
	sp, err := spec.Parse(of.Sidecar.Spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", of.Path, err)
	}
	f.spec, f.meta = sp, &of.Sidecar.Meta
	switch c := f.meta.Command; c {
	case "run", "reduced", "landscape":
		f.kind = c
	case "train":
		// A training run writes the arrays of a run, and its loss beside
		// the population flow's (FlowLoss): drawn as a run.
		f.kind, f.trained = "run", true
	default:
		return nil, fmt.Errorf("%s was written by linattn %s, which has no figure (plot reads run, train, reduced, landscape and sweep output)", of.Path, c)
	}
	return f, nil
}

func (f *file) command() string {
	if f.kind == "index" {
		return "sweep (index)"
	}
	return f.kind
}

// vectors reads several one-axis float64 arrays at once: dst[i] receives
// the array called names[i]. Shapes needing more checks use Floats.
func (f *file) vectors(names []string, dst ...*[]float64) error {
	for i, name := range names {
		x, _, err := f.Floats(name, -1)
		if err != nil {
			return err
		}
		*dst[i] = x
	}
	return nil
}
