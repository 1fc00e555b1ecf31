package spec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/output"
)

// decodeNPY reads a float64 .npy file into C order with its shape.
func decodeNPY(content []byte) ([]float64, []int, error) {
	a, err := export.ReadNPY(bytes.NewReader(content))
	var de *export.DtypeError
	switch {
	case errors.As(err, &de):
		return nil, nil, wantFloat64(de.Type)
	case err != nil:
		return nil, nil, err
	}
	return floatData(a)
}

// floatData is a's float64 data and shape.
func floatData(a export.Array) ([]float64, []int, error) {
	if a.Float == nil {
		return nil, nil, wantFloat64(a.Dtype())
	}
	return a.Float, a.Shape, nil
}

// wantFloat64 is the error of an input array of numpy type dtype: the
// inputs are float64, whatever else the reader takes (one message for
// float32, int64, …).
func wantFloat64(dtype string) error {
	return fmt.Errorf("data type %q, want float64 ('<f8'; numpy: a.astype(numpy.float64))", dtype)
}

// readInit reads -init: v (H,), and K, Q (H, R, D) for the separate model
// or U (H, D, D) for the merged model, in the original coordinates; and,
// for the full layer, its extra blocks v_x (H, D) and u_y (H, D, merged) or
// k_y (H, R, separate) if the file holds them, else zero (docs/training.md,
// "The full layer"), for the label-key layer u_y or k_y. A layer refuses
// extra blocks it lacks that are not zero, which it would drop.
func (j *Job) readInit() ([]float64, error) {
	s := j.Spec
	content, err := os.ReadFile(s.Init)
	if err != nil {
		return nil, fmt.Errorf("-init: %w", err)
	}
	abs, err := j.record("init", s.Init, content)
	if err != nil {
		return nil, err
	}
	s.Init = abs
	zr, err := export.NewNPZReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		return nil, fmt.Errorf("-init %s: %w", s.Init, err)
	}
	in := &initFile{zr: zr, path: s.Init, spec: s}
	need, extras := in.shapes()
	arrays := map[string][]float64{}
	for _, name := range sortedKeys(need) {
		if !zr.Has(name) {
			return nil, in.missing(name, need)
		}
		if arrays[name], err = in.read(name, need[name]); err != nil {
			return nil, err
		}
	}
	y, err := j.System.FromArrays(arrays["v"], arrays["U"], arrays["K"], arrays["Q"])
	if err != nil {
		return nil, fmt.Errorf("-init %s: %w", s.Init, err)
	}
	if err := in.setExtras(j.System, y, extras); err != nil {
		return nil, err
	}
	return y, nil
}

// initFile is an -init file being read.
type initFile struct {
	zr   *export.NPZReader
	path string
	spec *Spec
}

// shapes returns the shapes of the arrays the model needs and of the full
// layer's extra blocks, by name.
// An untied stack's arrays have a leading layer axis, as run writes them.
func (in *initFile) shapes() (need, extras map[string][]int) {
	h, d, r := in.spec.H, in.spec.D, in.spec.R
	layer := func(dims ...int) []int {
		if in.spec.Layers > 1 && !in.spec.Tie {
			return append([]int{in.spec.Layers}, dims...)
		}
		return dims
	}
	need = map[string][]int{"v": layer(h)}
	extras = map[string][]int{output.ValueX: {h, d}}
	if in.spec.Model == flow.Merged {
		need["U"] = layer(h, d, d)
		extras[output.LabelKQ] = []int{h, d}
	} else {
		need["K"] = layer(h, r, d)
		need["Q"] = layer(h, r, d)
		extras[output.KeyLabel] = []int{h, r}
	}
	return need, extras
}

// read returns the float64 array name, which must have the shape want.
func (in *initFile) read(name string, want []int) ([]float64, error) {
	a, err := in.zr.Read(name)
	var de *export.DtypeError
	switch {
	case errors.As(err, &de):
		return nil, fmt.Errorf("-init %s: array %q: %w", in.path, name, wantFloat64(de.Type))
	case err != nil:
		return nil, fmt.Errorf("-init %s: %w", in.path, err)
	}
	data, shape, err := floatData(a)
	if err != nil {
		return nil, fmt.Errorf("-init %s: array %q: %w", in.path, name, err)
	}
	if !slices.Equal(shape, want) {
		s := in.spec
		depth := ""
		if s.Layers > 1 {
			depth = fmt.Sprintf(", %d layers", s.Layers)
			if s.Tie {
				depth += " tied"
			}
		}
		return nil, fmt.Errorf("-init %s: array %q has shape %v, want %v (H=%d, R=%d, D=%d%s)%s",
			in.path, name, shape, want, s.H, s.R, s.D, depth, in.layerHint(shape, want))
	}
	return data, nil
}

// layerHint names the flag a shape asks for: -layers for an array with a
// layer axis of another length, or with one more or one fewer axis than a
// stack's; else shapeHint's.
func (in *initFile) layerHint(got, want []int) string {
	s := in.spec
	stacked := s.Layers > 1 && !s.Tie
	switch {
	case stacked && len(got) == len(want) && got[0] != want[0] && slices.Equal(got[1:], want[1:]):
		return fmt.Sprintf(": its layer axis holds %d layers, give -layers %d", got[0], got[0])
	case stacked && len(got) == len(want)-1 && slices.Equal(got, want[1:]):
		return ": it has no layer axis, one layer's heads: give -tie to share them between the layers, or -layers 1"
	case !stacked && len(got) == len(want)+1 && slices.Equal(got[1:], want) && got[0] >= 2 && got[0] <= law.MaxStackLayers:
		return shapeHint(got, want, s.Model == flow.Separate) + fmt.Sprintf("; or, if they are a stack's %d layers, give -layers %d", got[0], got[0])
	}
	return shapeHint(got, want, s.Model == flow.Separate)
}

// missing is the error for a needed array name the file lacks.
func (in *initFile) missing(name string, need map[string][]int) error {
	s := in.spec
	hint := ""
	switch {
	case s.Model == flow.Separate && in.zr.Has("U"):
		hint = "; it holds U: -model merged"
	case s.Model == flow.Merged && in.zr.Has("K") && in.zr.Has("Q"):
		hint = "; it holds K and Q: -model separate"
	}
	return fmt.Errorf("-init %s has no array %q; a %s model with H=%d, R=%d, D=%d needs %s%s",
		s.Init, name, s.Model, s.H, s.R, s.D, describeShapes(sortedKeys(need), need), hint)
}

// setExtras sets the layer's extra blocks of y from the file: the full
// layer's v_x and u_y (or k_y), both or neither; the label-key layer's u_y
// (or k_y). It refuses the other model's block, and a block the layer
// lacks unless it is zero, naming the layer that has it: a label-key run's
// own final state (v, U, u_y) restarts it (issue 45).
func (in *initFile) setExtras(sys *flow.System, y []float64, extras map[string][]int) error {
	s := in.spec
	label := output.LabelKQ
	if s.Model == flow.Separate {
		label = output.KeyLabel
	}
	for _, other := range []string{output.LabelKQ, output.KeyLabel} {
		if other != label && in.zr.Has(other) {
			return fmt.Errorf("-init %s holds %q, a block of the other model; the %s model's extra blocks are %s and %s",
				in.path, other, s.Model, label, output.ValueX)
		}
	}
	got := map[string][]float64{}
	for _, name := range []string{label, output.ValueX} {
		if in.zr.Has(name) {
			data, err := in.read(name, extras[name])
			if err != nil {
				return err
			}
			got[name] = data
		}
	}
	var nonzero []string // the blocks the layer lacks that are not zero
	lacks := map[flow.Layer][]string{flow.ReducedLayer: {label, output.ValueX}, flow.LabelKeyLayer: {output.ValueX}}[s.Layer]
	for _, name := range lacks {
		if slices.ContainsFunc(got[name], func(v float64) bool { return v != 0 }) {
			nonzero = append(nonzero, name)
		}
	}
	if len(nonzero) > 0 {
		to := "-layer full to start from them (or leave them out of the file)"
		if !slices.Contains(nonzero, output.ValueX) {
			to = "-layer labelkey or full to start from it (or leave it out of the file)"
		} else if len(nonzero) == 1 {
			to = "-layer full to start from it (or leave it out of the file)"
		}
		return fmt.Errorf("-init %s holds nonzero %s, which the %s layer lacks: %s",
			in.path, strings.Join(nonzero, " and "), s.Layer, to)
	}
	switch {
	case s.Layer == flow.ReducedLayer || len(got) == 0:
		return nil
	case s.Layer == flow.LabelKeyLayer:
		if got[label] == nil {
			return nil
		}
		got[output.ValueX] = nil // zero: checked above
	case got[label] == nil || got[output.ValueX] == nil:
		return fmt.Errorf("-init %s holds one of the full layer's extra blocks %s and %s but not the other: give both (zeros for a block that starts at zero), or neither for zero extra blocks",
			in.path, label, output.ValueX)
	}
	if err := sys.SetExtras(y, got[output.ValueX], got[label]); err != nil {
		return fmt.Errorf("-init %s: %w", in.path, err)
	}
	return nil
}

// shapeHint says which flag makes an array of shape got the wanted one:
// -H for another number of heads, -R for another rank, and for one more
// leading axis that a run's output has S samples; keys says the arrays are
// separate keys or queries, of shape (H, R, D).
func shapeHint(got, want []int, keys bool) string {
	switch {
	case len(got) == len(want)+1 && slices.Equal(got[1:], want):
		return fmt.Sprintf("; it has %d samples, as a run's output: save one of them, e.g. numpy.savez(\"w.npz\", v=r[\"v\"][-1], …)", got[0])
	case len(got) != len(want):
		return ""
	case got[0] != want[0] && slices.Equal(got[1:], want[1:]):
		return fmt.Sprintf(": the file has %d heads, give -H %d", got[0], got[0])
	case keys && len(got) == 3 && got[0] == want[0] && got[1] != want[1] && got[2] == want[2]:
		return fmt.Sprintf(": the file has rank %d, give -R %d", got[1], got[1])
	}
	return ""
}

func sortedKeys(m map[string][]int) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func describeShapes(names []string, want map[string][]int) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %v", n, want[n])
	}
	return strings.Join(parts, ", ")
}
