package output_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/output"
)

// testSpec is a spec's JSON object as package spec writes it.
func testSpec() json.RawMessage {
	return json.RawMessage(`{"model":"separate","D":2,"eigs":[0.5,0.25],"H":2,"R":1,"seed":7,"grid":"lin","stability":true}`)
}

// TestWriteOpen: an output written with Write reads back through Open as
// it was: every array with its type and shape, the spec, and the meta Write
// completes (name, SHA-256, shapes), which Verify checks against the .npz.
func TestWriteOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.npz")
	arrays := []export.Array{
		export.Floats(output.Times, []float64{0, 1, 2}, 3),
		export.Ints(output.TransitionM, []int64{1, 2}, 2),
		export.Bools(output.OnPath, []bool{true, false, true, true}, 2, 2),
	}
	side := &output.Sidecar{Spec: testSpec(), Meta: output.Meta{Program: output.Program, Command: "run", Complete: true, Status: "converged"}}
	if err := side.Meta.SetResult(output.RunResult{L0: 1, FinalLoss: 0.5, Samples: 3}); err != nil {
		t.Fatal(err)
	}
	if err := output.Write(path, arrays, side); err != nil {
		t.Fatal(err)
	}
	f, err := output.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Command() != "run" || !slices.Equal(f.Names(), []string{output.Times, output.TransitionM, output.OnPath}) {
		t.Errorf("command %q, arrays %v", f.Command(), f.Names())
	}
	ts, _, err1 := f.Floats(output.Times, 3)
	ms, _, err2 := f.Ints(output.TransitionM, -1)
	on, err3 := f.Bools(output.OnPath, 2, 2)
	if err1 != nil || err2 != nil || err3 != nil || !slices.Equal(ts, []float64{0, 1, 2}) || !slices.Equal(ms, []int64{1, 2}) || !slices.Equal(on, []bool{true, false, true, true}) {
		t.Errorf("arrays read back: %v %v %v (%v, %v, %v)", ts, ms, on, err1, err2, err3)
	}
	if _, _, err := f.Floats(output.Times, 4); err == nil || !strings.Contains(err.Error(), "has shape [3], want (4)") {
		t.Errorf("wrong shape: %v", err)
	}
	if _, _, err := f.Floats(output.Loss, -1); err == nil || !strings.Contains(err.Error(), `has no array "loss"`) {
		t.Errorf("missing array: %v", err)
	}
	m := f.Sidecar.Meta
	var res output.RunResult
	if m.Output != "x.npz" || len(m.OutputSHA256) != 64 || !slices.Equal(m.Arrays[output.OnPath], []int{2, 2}) ||
		m.DecodeResult(&res) != nil || res.FinalLoss != 0.5 || !strings.Contains(string(f.Sidecar.Spec), `"seed":7`) || !strings.Contains(string(f.Sidecar.Spec), `"grid":"lin"`) {
		t.Errorf("sidecar read back: %+v, result %+v, spec %s", m, res, f.Sidecar.Spec)
	}
	if _, _, err := output.Verify(path); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(path, append(mustRead(t, path), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := output.Verify(path); err == nil {
		t.Error("Verify accepts an .npz that is not the one its sidecar describes")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriteFails: an array that cannot be written leaves neither file, and
// the previous output untouched.
func TestWriteFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npz")
	side := &output.Sidecar{Spec: testSpec(), Meta: output.Meta{Program: output.Program, Command: "run"}}
	if err := output.Write(path, []export.Array{export.Floats(output.Loss, []float64{1}, 1)}, side); err != nil {
		t.Fatal(err)
	}
	before, beforeSide := mustRead(t, path), mustRead(t, output.SidecarPath(path))
	err := output.Write(path, []export.Array{export.Floats(output.Loss, []float64{math.NaN()}, 1)}, side)
	if err == nil {
		t.Fatal("NaN written")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 || string(mustRead(t, path)) != string(before) || string(mustRead(t, output.SidecarPath(path))) != string(beforeSide) {
		t.Errorf("a failed write left %d files or changed the previous ones", len(entries))
	}
}

// TestOpenRefuses: what is not an output of linattn is refused, saying why.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bare := filepath.Join(dir, "bare.npz")
	if err := export.SaveNPZ(bare, []export.Array{export.Floats("x", []float64{1}, 1)}); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.npz")
	if err := export.SaveNPZ(other, []export.Array{export.Floats("x", []float64{1}, 1)}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(output.SidecarPath(other), []byte(`{"meta": {"program": "numpy"}}`), 0o644)
	for path, want := range map[string]string{
		filepath.Join(dir, "x.txt"):  "want a FILE.npz",
		filepath.Join(dir, "no.npz"): "no such file",
		bare:                         "has no sidecar",
		other:                        "is not that of a linattn output",
	} {
		if _, err := output.Open(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", filepath.Base(path), err, want)
		}
	}
}

// TestReadSidecarTrailing: a sidecar with anything but white space after
// its object is refused; trailing white space is not.
func TestReadSidecarTrailing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := `{"seed": 7, "meta": {"program": "` + output.Program + `"}}`
	for i, tc := range []struct {
		tail string
		ok   bool
	}{{"\n", true}, {" \n\t", true}, {"x", false}, {"{}", false}, {"\n]", false}} {
		npz := filepath.Join(dir, strconv.Itoa(i)+".npz")
		if err := os.WriteFile(output.SidecarPath(npz), []byte(body+tc.tail), 0o644); err != nil {
			t.Fatal(err)
		}
		sc, _, err := output.ReadSidecar(npz)
		switch {
		case tc.ok && (err != nil || string(sc.Spec) != `{"seed":7}`):
			t.Errorf("tail %q: %v, spec %s", tc.tail, err, sc.Spec)
		case !tc.ok && err == nil:
			t.Errorf("tail %q accepted", tc.tail)
		}
	}
}

// TestPrepareDir: PrepareDir creates the folders of a path as mkdir -p
// does and returns those it created, outermost first; RemoveEmptyDirs
// removes those still empty, innermost first, and keeps a folder that
// holds anything (and the folders above it), so that a command that fails
// leaves no empty folder behind and loses nothing.
func TestPrepareDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "c", "run.npz")
	created, err := output.PrepareDir(path)
	want := []string{filepath.Join(dir, "a"), filepath.Join(dir, "a", "b"), filepath.Join(dir, "a", "b", "c")}
	if err != nil || !slices.Equal(created, want) {
		t.Fatalf("PrepareDir = %v, %v; want %v", created, err, want)
	}
	if again, err := output.PrepareDir(path); err != nil || len(again) != 0 {
		t.Errorf("PrepareDir of existing folders = %v, %v; want none created", again, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "kept"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	output.RemoveEmptyDirs(created)
	entries, _ := os.ReadDir(filepath.Join(dir, "a", "b"))
	if len(entries) != 1 || entries[0].Name() != "kept" {
		t.Errorf("after RemoveEmptyDirs a/b holds %v, want only kept", entries)
	}
	os.Remove(filepath.Join(dir, "a", "b", "kept"))
	output.RemoveEmptyDirs(created)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("after RemoveEmptyDirs of empty folders %s holds %v", dir, entries)
	}
	// A folder that cannot be made (a file is in its way) is refused.
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := output.PrepareDir(filepath.Join(dir, "file", "x", "y.npz")); err == nil {
		t.Error("PrepareDir under a file: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "file")); err != nil {
		t.Error(err)
	}
}
