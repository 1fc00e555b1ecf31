package export

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npz"
)

func sample() []Array {
	cube := make([]float64, 2*3*4)
	for i := range cube {
		cube[i] = float64(i) + 0.25
	}
	return []Array{
		Floats("cube", cube, 2, 3, 4),
		Floats("vector", []float64{1, -2.5, 3e-300}, 3),
		Ints("index", []int64{7, -1}, 2),
		Floats("scalar", []float64{math.Pi}),
		Floats("empty", []float64{}, 0, 5),
		Bools("flags", []bool{true, false, false, true, true, false}, 2, 3),
	}
}

// TestNPZReadByNpyio reads our archive with an independent reader
// (github.com/sbinet/npyio) and checks shapes and values.
func TestNPZReadByNpyio(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npz")
	if err := SaveNPZ(path, sample()); err != nil {
		t.Fatal(err)
	}
	r, err := npz.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, a := range sample() {
		h := r.Header(a.Name + ".npy")
		if h == nil {
			t.Fatalf("%s missing; keys %v", a.Name, r.Keys())
		}
		if len(h.Descr.Shape) != len(a.Shape) {
			t.Errorf("%s: shape %v, want %v", a.Name, h.Descr.Shape, a.Shape)
			continue
		}
		for i := range a.Shape {
			if h.Descr.Shape[i] != a.Shape[i] {
				t.Errorf("%s: shape %v, want %v", a.Name, h.Descr.Shape, a.Shape)
			}
		}
		if a.BoolAt != nil {
			var got []bool
			if err := r.Read(a.Name+".npy", &got); err != nil {
				t.Fatalf("%s: %v", a.Name, err)
			}
			for i := range got {
				if got[i] != a.BoolAt(i) {
					t.Errorf("%s[%d] = %v, want %v", a.Name, i, got[i], a.BoolAt(i))
				}
			}
		}
		if a.Float != nil && len(a.Float) > 0 && len(a.Shape) > 0 {
			var got []float64
			if err := r.Read(a.Name+".npy", &got); err != nil {
				t.Fatalf("%s: %v", a.Name, err)
			}
			for i := range got {
				if got[i] != a.Float[i] {
					t.Errorf("%s[%d] = %v, want %v", a.Name, i, got[i], a.Float[i])
				}
			}
		}
	}
}

func TestHeaderAlignment(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteNPY(&buf, Floats("x", []float64{1, 2, 3, 4, 5, 6}, 2, 3)); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	hl := int(b[8]) | int(b[9])<<8
	if (10+hl)%64 != 0 || b[10+hl-1] != '\n' || len(b) != 10+hl+48 {
		t.Errorf("header length %d, file %d bytes", hl, len(b))
	}
	if !strings.Contains(string(b[10:10+hl]), "'shape': (2, 3)") {
		t.Errorf("header %q", b[10:10+hl])
	}
}

// TestNumpyLoads proves that numpy itself reads our files with the right
// shapes, dtypes and values. numpy comes from Debian's python3-numpy, which
// .ci/run installs; outside CI the test skips when it is absent.
func TestNumpyLoads(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("numpy is not importable by %s in CI: %v", py, err)
		}
		t.Skipf("numpy not available to %s (apt-get install python3-numpy): %v", py, err)
	}
	dir := t.TempDir()
	if err := SaveNPZ(filepath.Join(dir, "a.npz"), sample()); err != nil {
		t.Fatal(err)
	}
	if err := SaveNPY(filepath.Join(dir, "c.npy"), sample()[0]); err != nil {
		t.Fatal(err)
	}
	script := `
import numpy as np, sys
d = np.load(sys.argv[1] + "/a.npz")
assert d["cube"].shape == (2, 3, 4) and d["cube"].dtype == np.float64, d["cube"].shape
assert np.array_equal(d["cube"], np.arange(24).reshape(2, 3, 4) + 0.25)
assert d["vector"].tolist() == [1, -2.5, 3e-300]
assert d["index"].dtype == np.int64 and d["index"].tolist() == [7, -1]
assert d["scalar"].shape == () and d["scalar"] == np.pi
assert d["empty"].shape == (0, 5)
assert d["flags"].dtype == np.bool_ and d["flags"].tolist() == [[True, False, False], [True, True, False]]
c = np.load(sys.argv[1] + "/c.npy")
assert np.array_equal(c, d["cube"]) and c.flags["C_CONTIGUOUS"]
print("ok")
`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
}

func TestValidation(t *testing.T) {
	for name, a := range map[string]Array{
		"NaN":        Floats("x", []float64{1, math.NaN()}, 2),
		"Inf":        Floats("x", []float64{math.Inf(-1)}, 1),
		"shape":      Floats("x", []float64{1, 2, 3}, 2, 2),
		"negative":   Floats("x", []float64{}, -1),
		"name":       Floats("a/b", []float64{1}, 1),
		"no data":    {Name: "x", Shape: []int{0}},
		"both kinds": {Name: "x", Shape: []int{1}, Float: []float64{1}, Int: []int64{1}},
	} {
		if err := a.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	dup := []Array{Floats("x", []float64{1}, 1), Floats("x", []float64{2}, 1)}
	if err := WriteNPZ(&bytes.Buffer{}, dup); err == nil {
		t.Error("duplicate names: no error")
	}
}

// TestAtomicWrite: a failing writer leaves neither the target nor a
// temporary file behind, and an existing file survives intact.
func TestAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.npz")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFileAtomic(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("target changed to %q", b)
	}
	if err := SaveNPZ(path, []Array{Floats("x", []float64{math.NaN()}, 1)}); err == nil {
		t.Error("NaN written")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the original file", len(entries))
	}
}

// TestStreamedArrays: generated arrays write the same bytes as stored ones,
// and a NaN produced mid-stream aborts the atomic write.
func TestStreamedArrays(t *testing.T) {
	data := []float64{1, 2.5, -3, 4}
	var a, b bytes.Buffer
	if err := WriteNPY(&a, Floats("x", data, 2, 2)); err != nil {
		t.Fatal(err)
	}
	if err := WriteNPY(&b, Array{Name: "x", Shape: []int{2, 2}, FloatAt: func(i int) float64 { return data[i] }}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("streamed and stored arrays differ")
	}
	path := filepath.Join(t.TempDir(), "s.npz")
	bad := Array{Name: "y", Shape: []int{5}, FloatAt: func(i int) float64 {
		if i == 3 {
			return math.NaN()
		}
		return 1
	}}
	if err := SaveNPZ(path, []Array{bad}); err == nil {
		t.Fatal("NaN streamed without error")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("partial file left behind: %v", err)
	}
}
