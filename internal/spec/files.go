package spec

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/sbinet/npyio/npy"
	"github.com/sbinet/npyio/npz"
)

// decodeNPY reads a float64 .npy file into C order with its shape.
func decodeNPY(content []byte) ([]float64, []int, error) {
	r, err := npy.NewReader(bytes.NewReader(content))
	if err != nil {
		return nil, nil, err
	}
	var data []float64
	if err := readFloats(r.Header, func() error { return r.Read(&data) }); err != nil {
		return nil, nil, err
	}
	return finish(data, r.Header)
}

func readFloats(h npy.Header, read func() error) error {
	if h.Descr.Type != "<f8" {
		return fmt.Errorf("data type %q, want float64 ('<f8'; numpy: a.astype(numpy.float64))", h.Descr.Type)
	}
	return read()
}

// finish checks the values and converts Fortran order to C order.
func finish(data []float64, h npy.Header) ([]float64, []int, error) {
	shape := append([]int(nil), h.Descr.Shape...)
	for i, x := range data {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil, fmt.Errorf("value %d is %g, want finite values", i, x)
		}
	}
	if h.Descr.Fortran && len(shape) > 1 {
		data = fortranToC(data, shape)
	}
	return data, shape, nil
}

// fortranToC reorders column-major data of the given shape to row-major.
func fortranToC(f []float64, shape []int) []float64 {
	c := make([]float64, len(f))
	idx := make([]int, len(shape))
	for i := range c {
		// i is the C-order position of idx; its Fortran position:
		pos, stride := 0, 1
		for k := range shape {
			pos += idx[k] * stride
			stride *= shape[k]
		}
		c[i] = f[pos]
		for k := len(shape) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return c
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
	zr, err := npz.NewReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		return nil, fmt.Errorf("-init %s: not a .npz file: %w", s.Init, err)
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
	have := map[string]bool{}
	for _, k := range zr.Keys() {
		have[strings.TrimSuffix(k, ".npy")] = true
	}
	arrays := map[string][]float64{}
	for _, name := range names {
		if !have[name] {
			return nil, fmt.Errorf("-init %s has no array %q; a %s model with H=%d, R=%d, D=%d needs %s",
				s.Init, name, s.Model, h, r, d, describeShapes(names, want))
		}
		hdr := zr.Header(name + ".npy")
		var data []float64
		if err := readFloats(*hdr, func() error { return zr.Read(name+".npy", &data) }); err != nil {
			return nil, fmt.Errorf("-init %s: array %q: %w", s.Init, name, err)
		}
		data, shape, err := finish(data, *hdr)
		if err != nil {
			return nil, fmt.Errorf("-init %s: array %q: %w", s.Init, name, err)
		}
		if !equalInts(shape, want[name]) {
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

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
