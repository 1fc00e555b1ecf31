package spec

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/linattn/linattn/export"
)

// decodeNPY reads a float64 .npy file into C order with its shape.
func decodeNPY(content []byte) ([]float64, []int, error) {
	a, err := export.ReadNPY(bytes.NewReader(content))
	if err != nil {
		return nil, nil, err
	}
	return floatData(a)
}

// floatData is a's float64 data and shape.
func floatData(a export.Array) ([]float64, []int, error) {
	if a.Float == nil {
		return nil, nil, fmt.Errorf("data type %q, want float64 ('<f8'; numpy: a.astype(numpy.float64))", a.Dtype())
	}
	return a.Float, a.Shape, nil
}

// readInit reads -init: v (H,), and K, Q (H, R, D) for the separate model
// or U (H, D, D) for the merged model, in the original coordinates.
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
	h, d, r := s.H, s.D, s.R
	want := map[string][]int{"v": {h}}
	if s.Model == "merged" {
		want["U"] = []int{h, d, d}
	} else {
		want["K"] = []int{h, r, d}
		want["Q"] = []int{h, r, d}
	}
	var names []string
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	arrays := map[string][]float64{}
	for _, name := range names {
		if !zr.Has(name) {
			return nil, fmt.Errorf("-init %s has no array %q; a %s model with H=%d, R=%d, D=%d needs %s",
				s.Init, name, s.Model, h, r, d, describeShapes(names, want))
		}
		a, err := zr.Read(name)
		if err != nil {
			return nil, fmt.Errorf("-init %s: %w", s.Init, err)
		}
		data, shape, err := floatData(a)
		if err != nil {
			return nil, fmt.Errorf("-init %s: array %q: %w", s.Init, name, err)
		}
		if !slices.Equal(shape, want[name]) {
			return nil, fmt.Errorf("-init %s: array %q has shape %v, want %v (H=%d, R=%d, D=%d)", s.Init, name, shape, want[name], h, r, d)
		}
		arrays[name] = data
	}
	return j.System.FromArrays(arrays["v"], arrays["U"], arrays["K"], arrays["Q"])
}

func describeShapes(names []string, want map[string][]int) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %v", n, want[n])
	}
	return strings.Join(parts, ", ")
}
