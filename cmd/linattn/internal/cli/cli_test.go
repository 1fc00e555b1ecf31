package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/layout"
	"github.com/linattn/linattn/output"

	"github.com/sbinet/npyio/npz"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLIContext(t, context.Background(), args...)
}

func runCLIContext(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(ctx, &out, &errb, args)
	return code, out.String(), errb.String()
}

// sidecarOf reads FILE.json beside FILE.npz.
func sidecarOf(t *testing.T, npzPath string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(output.SidecarPath(npzPath))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("sidecar is not JSON: %v\n%s", err, b)
	}
	return m
}

func readFloats(t *testing.T, r *npz.Reader, name string) []float64 {
	t.Helper()
	var x []float64
	if err := r.Read(name+".npy", &x); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return x
}

// TestDefaultRunGolden runs the README's main job (the paper's D = 4
// example) and compares its summary with testdata/run_default.golden (the
// output path and the wall time masked). The plateau levels in it are
// docs/math.md's 1, 0.64057971, 0.37737216, 0.2098046, 0.13599507; the drop
// times are those of flow.TestPaperExample.
func TestDefaultRunGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "run.npz")
	code, stdout, stderr := runCLI(t, "run", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := strings.ReplaceAll(stdout, dir, "DIR")
	got = regexp.MustCompile(`in [0-9.]+ m?s\n`).ReplaceAllString(got, "in TIME\n")
	// The golden file pins what users read (levels, drop times, final loss
	// to the digits printed), not the solver's step counts.
	got = regexp.MustCompile(`[0-9]+ steps, [0-9]+ evaluations, [0-9]+ rejected`).ReplaceAllString(got, "N steps, N evaluations, N rejected")
	golden := filepath.Join("testdata", "run_default.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("summary differs from %s (go test -run Golden -update rewrites it):\ngot:\n%s\nwant:\n%s", golden, got, want)
	}

	// Every drop is resolved: at least 50 samples between 10% and 90% of
	// the way from L(M_{m−1}) to L(M_m).
	r, err := npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	loss, pl := readFloats(t, r, "loss"), readFloats(t, r, "plateaus")
	for m := 1; m <= 4; m++ {
		hi, lo := pl[m-1]-0.1*(pl[m-1]-pl[m]), pl[m]+0.1*(pl[m-1]-pl[m])
		n := 0
		for _, l := range loss {
			if l < hi && l > lo {
				n++
			}
		}
		if n < 50 {
			t.Errorf("drop %d has %d samples, want ≥ 50", m, n)
		}
	}
}

// TestRunArraysRoundTrip: every array of a run's .npz, read back through
// package output, equals bit for bit what the library computes for the job
// its sidecar describes (flow.System.Run with the sidecar's settings, laid
// out by layout.Run), and the sidecar records every array's shape.
func TestRunArraysRoundTrip(t *testing.T) {
	t.Parallel()
	for _, model := range []string{"separate", "merged"} {
		dir := t.TempDir()
		out := filepath.Join(dir, "r.npz")
		args := []string{"run", "-model", model, "-spectrum", "power:1", "-D", "3", "-H", "2", "-winit", "0.1",
			"-T", "3000", "-samples", "40", "-o", out}
		if model == "separate" {
			args = append(args, "-R", "2")
		}
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", model, code, stderr)
		}
		f, err := output.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := spec.Parse(f.Sidecar.Spec)
		if err != nil {
			t.Fatal(err)
		}
		job, err := spec.Resolve(sp, spec.RunGroups()...)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := job.System.Run(context.Background(), job.Y0, job.RunSettings())
		if err != nil {
			t.Fatal(err)
		}
		want := layout.Run(job.System, tr)
		if names := f.Names(); len(names) != len(want) || len(f.Sidecar.Meta.Arrays) != len(want) {
			t.Errorf("%s: arrays %v, sidecar %v, want %d", model, names, f.Sidecar.Meta.Arrays, len(want))
		}
		for _, w := range want {
			got, err := f.Array(w.Name, w.Shape...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Shape, w.Shape) || !slices.Equal(f.Sidecar.Meta.Arrays[w.Name], w.Shape) ||
				!slices.Equal(got.Float, w.Float) || !slices.Equal(got.Int, w.Int) {
				t.Errorf("%s: array %s differs (shape %v, sidecar %v, want %v)", model, w.Name, got.Shape, f.Sidecar.Meta.Arrays[w.Name], w.Shape)
			}
		}
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

// TestNumpyReadsRun proves that numpy loads every array of a run with the
// shape the sidecar records and the exact values we wrote: Python prints the
// SHA-256 of each array's little-endian bytes, which must equal ours.
// numpy comes from Debian's python3-numpy, installed by .ci/run.
func TestNumpyReadsRun(t *testing.T) {
	t.Parallel()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("numpy is not importable by %s in CI: %v", py, err)
		}
		t.Skipf("numpy not available to %s (apt-get install python3-numpy): %v", py, err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "run.npz")
	if code, _, stderr := runCLI(t, "run", "-samples", "101", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	script := `
import hashlib, json, sys
import numpy as np
d = np.load(sys.argv[1])
meta = json.load(open(sys.argv[2]))["meta"]
for name in sorted(d.files):
    a = d[name]
    assert list(a.shape) == meta["arrays"][name], (name, a.shape, meta["arrays"][name])
    assert a.dtype in (np.float64, np.int64), (name, a.dtype)
    print(name, hashlib.sha256(a.astype(a.dtype.newbyteorder("<")).tobytes()).hexdigest())
`
	cmd := exec.Command(py, "-c", script, out, output.SidecarPath(out))
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, got)
	}
	r, err := npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var want []string
	keys := r.Keys()
	sort.Strings(keys)
	for _, k := range keys {
		name := strings.TrimSuffix(k, ".npy")
		var buf bytes.Buffer
		if r.Header(k).Descr.Type == "<i8" {
			var x []int64
			if err := r.Read(k, &x); err != nil {
				t.Fatal(err)
			}
			binary.Write(&buf, binary.LittleEndian, x)
		} else {
			binary.Write(&buf, binary.LittleEndian, readFloats(t, r, name))
		}
		sum := sha256.Sum256(buf.Bytes())
		want = append(want, name+" "+hex.EncodeToString(sum[:]))
	}
	if strings.TrimSpace(string(got)) != strings.Join(want, "\n") {
		t.Errorf("numpy read\n%s\nwe wrote\n%s", got, strings.Join(want, "\n"))
	}
	if len(want) != 13 {
		t.Errorf("%d arrays, want 13", len(want))
	}
}

// TestSidecarRepeatsRun: the sidecar of a run, given back with -spec,
// repeats it bit for bit; flags still override it.
func TestSidecarRepeatsRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz"), filepath.Join(dir, "c.npz")
	args := []string{"run", "-spectrum", "power:0.5", "-D", "3", "-ntp-max", "20", "-winit", "0.05", "-seed", "11", "-samples", "300", "-method", "dp5", "-rtol", "1e-9", "-o", a}
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "run", "-spec", output.SidecarPath(a), "-o", b); code != 0 {
		t.Fatalf("repeat: exit %d: %s", code, stderr)
	}
	if !bytes.Equal(mustRead(t, a), mustRead(t, b)) {
		t.Error("the run repeated from its sidecar differs")
	}
	sa, sb := sidecarOf(t, a), sidecarOf(t, b)
	delete(sa, "meta")
	delete(sb, "meta")
	ja, _ := json.Marshal(sa)
	jb, _ := json.Marshal(sb)
	if !bytes.Equal(ja, jb) {
		t.Errorf("resolved specs differ:\n%s\n%s", ja, jb)
	}
	// A flag overrides the spec, and -N replaces the spec's -ntp-max.
	if code, _, stderr := runCLI(t, "run", "-spec", output.SidecarPath(a), "-seed", "12", "-N", "5", "-o", c); code != 0 {
		t.Fatalf("override: exit %d: %s", code, stderr)
	}
	sc := sidecarOf(t, c)
	if sc["seed"].(float64) != 12 || sc["N"].(float64) != 5 || sc["ntp-max"] != nil || sc["spectrum"] != "power:0.5" {
		t.Errorf("override: %v", sc)
	}
}

// TestBadInput: one line naming the flag and the allowed range, exit status
// 2, no stack trace and no file left behind.
func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notOrtho := filepath.Join(dir, "vecs.npy")
	writeNPY(t, notOrtho, []float64{1, 0.5, 0, 1}, 2, 2)
	badInit := filepath.Join(dir, "init.npz")
	writeNPZ(t, badInit, map[string][]float64{"v": {0.1, 0.1}, "K": make([]float64, 6), "Q": make([]float64, 6)}, map[string][]int{"v": {2}, "K": {2, 1, 3}, "Q": {2, 1, 3}})
	notDir := filepath.Join(dir, "plain")
	os.WriteFile(notDir, []byte("x"), 0o644)
	before := listDir(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-eigs", "0.4,-1"}, "-eigs: entry 2 is -1, want a finite eigenvalue > 0"},
		{[]string{"-eigs", "0.4,NaN"}, "-eigs: entry 2 is NaN"},
		{[]string{"-eigs", "0.4,x"}, `entry 2 "x" is not a number`},
		{[]string{"-eigs", "0.4,0.3", "-eigvecs", notOrtho}, "not orthonormal"},
		{[]string{"-R", "9"}, "-R = 9, want 1 ≤ R ≤ D = 4"},
		{[]string{"-H", "0"}, "-H = 0, want H ≥ 1"},
		{[]string{"-N", "0"}, "-N = 0, want a context length N ≥ 1"},
		{[]string{"-nu", "2"}, "-nu = 2, want ν = E[1/N] in (0, 1]"},
		{[]string{"-N", "3", "-nu", "0.5"}, "-N and -nu exclude each other"},
		{[]string{"-H", "2", "-init", badInit}, `array "K" has shape [2 1 3], want [2 1 4]`},
		{[]string{"-init", filepath.Join(dir, "missing.npz")}, "-init: open"},
		{[]string{"-method", "rk4"}, `-method = "rk4", want auto, bdf, rock4, rodas5p, radau5, dop853, dp5 or tsit5`},
		{[]string{"-D", "48", "-H", "48", "-spectrum", "power:1", "-method", "radau5"}, `-method = radau5 factors dense matrices of the state's size, at most 3000; here D = 48, H = 48 give 4656`},
		{[]string{"-grid", "cubic"}, "-grid"},
		{[]string{"-model", "softmax"}, "-model"},
		{[]string{"-winit", "0"}, "-winit = 0, want a finite scale > 0"},
		{[]string{"-tau", "-1"}, "-tau = -1"},
		{[]string{"-T", "-5"}, "-T = -5"},
		{[]string{"-samples", "1"}, "-samples = 1, want S ≥ 2"},
		{[]string{"-rtol", "0"}, "-rtol = 0"},
		{[]string{"-spectrum", "power:1"}, "-D is needed"},
		{[]string{"-spectrum", "zipf", "-D", "3"}, "want power:ALPHA"},
		{[]string{"-spectrum", "power:1", "-D", "200000"}, "the job needs an estimated"},
		{[]string{"-seed", "-3"}, "not an integer in [0, 2^64)"},
		{[]string{"-nosuchflag"}, "nosuchflag"},
		{[]string{"-spec", filepath.Join(dir, "none.json")}, "-spec: open"},
		{[]string{"-o", filepath.Join(notDir, "x.npz")}, "cannot create directory " + notDir + ": not a directory"},
		{[]string{"-o", filepath.Join(notDir, "sub", "x.npz")}, "not a directory"},
		{[]string{"-o", "/proc/x.npz"}, "not writable"},
		{[]string{"-o", filepath.Join(dir, "x.txt")}, "want a FILE.npz path"},
		// Issue 45, unclear cases 4 and 16.
		{[]string{"-checkpoint", "1ns"}, `-checkpoint = "1ns", want 0 (no checkpoints) or a duration of at least 1s`},
		{[]string{"-checkpoint-restart", "-checkpoint", "0"}, "-checkpoint-restart: with -checkpoint 0 the run neither reads nor saves a checkpoint"},
	} {
		args := append([]string{"run"}, tc.args...)
		if !strings.Contains(strings.Join(tc.args, " "), "-o ") {
			args = append(args, "-o", filepath.Join(dir, "out.npz"))
		}
		code, stdout, stderr := runCLI(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || !strings.Contains(stderr, tc.want) || len(lines) != 1 || strings.Contains(stderr, "goroutine") || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", tc.args, code, stderr, stdout, tc.want)
		}
	}
	if after := listDir(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("files left behind: %v, before %v", after, before)
	}
	if code, _, stderr := runCLI(t, "frobnicate"); code != 2 || !strings.Contains(stderr, "unknown command") {
		t.Errorf("unknown command: exit %d, %s", code, stderr)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error {
		names = append(names, p)
		return nil
	})
	return names
}

// TestInterrupt: a canceled run writes what it computed, marked incomplete,
// and exits 130 — in the first pass (which finds T) and in the second.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"first pass", nil},
		{"output pass", []string{"-T", "20000", "-grid", "lin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "run.npz")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx = withTestHooks(ctx, &testHooks{step: func(tt float64) {
				if tt > 4000 {
					cancel()
				}
			}})
			code, stdout, stderr := runCLIContext(t, ctx, append([]string{"run", "-o", out}, tc.args...)...)
			if !strings.Contains(stderr, "interrupted") {
				t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
			}
			r := checkInterrupted(t, out, code, stdout, stderr)
			ts := readFloats(t, r, "t")
			if len(ts) < 2 || ts[0] != 0 || ts[len(ts)-1] < 4000 || ts[len(ts)-1] > 5000 {
				t.Errorf("samples from %v to %v (%d)", ts[0], ts[len(ts)-1], len(ts))
			}
			for i := 1; i < len(ts); i++ {
				if !(ts[i] > ts[i-1]) {
					t.Fatalf("t not increasing at %d", i)
				}
			}
			// The first drop (t ≈ 2754) was reached and is recorded.
			if tr := readFloats(t, r, "transitions"); len(tr) != 1 || math.Abs(tr[0]-2754.04) > 0.01 {
				t.Errorf("transitions %v", tr)
			}
		})
	}
}

// TestFailedLeavesNoFolder: a command that fails leaves none of the
// folders its output paths needed behind where it wrote nothing in them
// (issue 45: run -noise 0.1 failed and left an empty out/). reduced and
// figures interrupted before they wrote anything exit 130 and remove the
// folders they made for -o (and -data); the folder that was there stays.
func TestFailedLeavesNoFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"reduced", "-o", filepath.Join(dir, "a", "b", "reduced.npz")},
		{"figures", "-o", filepath.Join(dir, "a", "figs"), "-data", filepath.Join(dir, "c", "data"), "merged"},
	} {
		code, _, stderr := runCLIContext(t, ctx, args...)
		if code != ExitInterrupted || !strings.Contains(stderr, "before any output was written") {
			t.Errorf("%v: exit %d, want %d: %s", args, code, ExitInterrupted, stderr)
		}
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Errorf("%v: left %v behind (%v)", args, entries, err)
		}
	}
}

// TestProgress: progress lines go to stderr only on a terminal and not
// with -q.
func TestProgress(t *testing.T) {
	t.Parallel()
	var p bytes.Buffer
	pr := newProgress(&p, true)
	pr.start = pr.start.Add(-2e9) // the work has lasted two seconds
	if !pr.Due() {
		t.Fatal("not due after two seconds")
	}
	pr.Show("t = 5")
	if pr.Due() {
		t.Error("due twice within 200 ms")
	}
	pr.Done()
	if p.String() != "\r\033[Kt = 5\r\033[K" {
		t.Errorf("progress wrote %q", p.String())
	}
	quiet := newProgress(&p, false)
	quiet.start = quiet.start.Add(-2e9)
	if quiet.Due() {
		t.Error("a quiet progress is due")
	}
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
}

// TestLandscape runs the landscape command on the paper's D = 4 example:
// of the 16 fixed points the full set is the minimum, the empty set and the
// three other path points are higher-order saddles and the other 11 strict
// saddles (landscape.TestPaperStability holds the details).
func TestLandscape(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "l.npz")
	code, stdout, stderr := runCLI(t, "landscape", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "classes: 1 minimum, 11 strict saddles, 4 higher-order saddles") {
		t.Errorf("output:\n%s", stdout)
	}
	r, err := npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	loss := readFloats(t, r, "loss")
	if len(loss) != 16 || math.Abs(loss[15]-0.13599507) > 1e-8 || math.Abs(loss[0]-1) > 1e-15 {
		t.Errorf("loss table %v", loss)
	}
	var subset, onPath []bool
	var class, bitmask []int64
	for name, dst := range map[string]any{"subset.npy": &subset, "on_path.npy": &onPath, "class.npy": &class, "bitmask.npy": &bitmask} {
		if err := r.Read(name, dst); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// Bit d−1 of the mask is eigenvector d: mask 5 = {1, 3}.
	if len(subset) != 64 || !subset[5*4+0] || subset[5*4+1] || !subset[5*4+2] || subset[5*4+3] || bitmask[5] != 5 {
		t.Errorf("subset row 5 = %v", subset[20:24])
	}
	// On the path: ∅, {1}, {1,2}, {1,2,3}, full = masks 0, 1, 3, 7, 15.
	for mask, on := range onPath {
		want := mask == 0 || mask == 1 || mask == 3 || mask == 7 || mask == 15
		if on != want {
			t.Errorf("on_path[%d] = %v", mask, on)
		}
	}
	if class[15] != 0 || class[0] != 2 || class[2] != 1 {
		t.Errorf("class %v", class)
	}
	if sh := r.Header("jacobian_eigenvalues.npy").Descr.Shape; len(sh) != 2 || sh[0] != 16 || sh[1] != 36 {
		t.Errorf("jacobian_eigenvalues shape %v, want (16, 36)", sh)
	}

	code, stdout, stderr = runCLI(t, "landscape", "-model", "merged", "-o", out)
	if code != 0 || !strings.Contains(stdout, "unstable at 0.188149") {
		t.Errorf("merged: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, "landscape", "-spectrum", "power:1", "-D", "25", "-stability=false", "-o", out)
	if code != 2 || !strings.Contains(stderr, "want D ≤ 24") {
		t.Errorf("D = 25: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "landscape", "-spectrum", "power:1", "-D", "11", "-o", out)
	if code != 2 || !strings.Contains(stderr, "D ≤ 10") {
		t.Errorf("stability at D = 11: exit %d, %s", code, stderr)
	}
}

// TestReduced compares each drop of the paper's example with the 1-D
// theory, with the bounds of reduced.TestCompareWithFullFlow on a coarser
// grid, and checks the merged model's drop-time predictions (reduced.
// TestMergedDropTime: the refined one within 0.5%).
func TestReduced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "red.npz")
	code, stdout, stderr := runCLI(t, "reduced", "-points", "500", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	dev, obs, pred := readFloats(t, r, "max_deviation"), readFloats(t, r, "t_observed"), readFloats(t, r, "t_predicted")
	r.Close()
	if len(dev) != 4 {
		t.Fatalf("%d drops\n%s", len(dev), stdout)
	}
	for i := range dev {
		if dev[i] > 0.02 || math.Abs(pred[i]-obs[i]) > 0.01*obs[i] {
			t.Errorf("drop %d: deviation %g, predicted %g, observed %g", i+1, dev[i], pred[i], obs[i])
		}
	}
	if code, _, stderr := runCLI(t, "reduced", "-align", "1.5", "-o", out); code != 2 || !strings.Contains(stderr, "-align = 1.5, want an alignment in (0, 1)") {
		t.Errorf("-align 1.5: exit %d, %s", code, stderr)
	}

	code, stdout, stderr = runCLI(t, "reduced", "-model", "merged", "-winit", "1e-3", "-o", out)
	if code != 0 {
		t.Fatalf("merged: exit %d: %s", code, stderr)
	}
	r, err = npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	refined, observed := readFloats(t, r, "t_drop_refined"), readFloats(t, r, "t_drop_observed")
	if math.Abs(refined[0]-observed[0]) > 0.005*observed[0] {
		t.Errorf("merged drop: refined %g, observed %g\n%s", refined[0], observed[0], stdout)
	}
}

// TestReducedWhiteClosedForm: for white Λ and a balanced, aligned
// initialization the merged closed form (paper eq. attnM-solution) is the
// flow itself, so loss_closed_form equals loss to integration accuracy.
func TestReducedWhiteClosedForm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, err := law.NewData(law.White(3, 0.5), nil, law.Lengths{Nu: 1.0 / 10})
	if err != nil {
		t.Fatal(err)
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Merged, H: 2, Tau: 1})
	if err != nil {
		t.Fatal(err)
	}
	y0, err := s.BalancedAligned([]float64{0.01, 0.02})
	if err != nil {
		t.Fatal(err)
	}
	h, d := 2, 3
	init := filepath.Join(dir, "init.npz")
	writeNPZ(t, init, map[string][]float64{"v": y0[:h], "U": y0[h:]}, map[string][]int{"v": {h}, "U": {h, d, d}})
	out := filepath.Join(dir, "w.npz")
	code, stdout, stderr := runCLI(t, "reduced", "-model", "merged", "-white", "0.5", "-D", "3", "-H", "2", "-N", "10",
		"-eigvecs", "identity", "-init", init, "-grid", "lin", "-samples", "200", "-rtol", "1e-11", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	loss, cf := readFloats(t, r, "loss"), readFloats(t, r, "loss_closed_form")
	for i := range loss { // the flow is integrated to rtol 1e-11
		if math.Abs(loss[i]-cf[i]) > 1e-8 {
			t.Fatalf("sample %d: flow %v, closed form %v\n%s", i, loss[i], cf[i], stdout)
		}
	}
}

// TestHelp: -h lists every flag a command reads, with its type, and exits 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	for cmd, groups := range map[string][]spec.Group{"run": {spec.GroupProblem, spec.GroupSolver, spec.GroupLaw}, "landscape": {spec.GroupProblem, spec.GroupLandscape}, "reduced": {spec.GroupProblem, spec.GroupSolver, spec.GroupReduced}, "train": {spec.GroupProblem, spec.GroupTrain, spec.GroupLaw}} {
		code, stdout, _ := runCLI(t, cmd, "-h")
		if code != 0 {
			t.Errorf("%s -h: exit %d", cmd, code)
		}
		for _, f := range spec.Fields() {
			listed := strings.Contains(stdout, "\n  -"+f.Name+" ") || strings.Contains(stdout, "\n  -"+f.Name+"\n")
			if want := f.ReadBy(groups); listed != want {
				t.Errorf("%s -h: -%s listed %v, want %v", cmd, f.Name, listed, want)
			}
		}
	}
	// The flags of the flag package's own types are listed with them.
	code, stdout, _ := runCLI(t, "sweep", "-h")
	for _, want := range []string{"\n  -j int\n", "\n  -o string\n", "\n  -q\n"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("sweep -h: exit %d, want %q in\n%s", code, want, stdout)
		}
	}
}

// TestInitFile: weights given with -init reproduce the run they came from:
// the initial state of a run, fed back as -init, gives the same loss curve.
// The written state at t = 0 has been rotated to the eigenbasis and back, so
// it equals the seeded one to rounding only, and the escape from the
// saddles amplifies that rounding (to 4e-10 in the loss by t = 2000): the
// curves agree to 1e-6. The state read from -init is the file's, bit for bit.
func TestInitFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz")
	args := []string{"run", "-R", "2", "-H", "3", "-T", "2000", "-grid", "lin", "-samples", "30"}
	if code, _, stderr := runCLI(t, append(args, "-o", a)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := npz.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	v, k, q := readFloats(t, r, "v"), readFloats(t, r, "K"), readFloats(t, r, "Q")
	lossA := readFloats(t, r, "loss")
	r.Close()
	init := filepath.Join(dir, "init.npz")
	hrd := 3 * 2 * 4
	writeNPZ(t, init, map[string][]float64{"v": v[:3], "K": k[:hrd], "Q": q[:hrd]}, map[string][]int{"v": {3}, "K": {3, 2, 4}, "Q": {3, 2, 4}})
	if code, _, stderr := runCLI(t, append(args, "-init", init, "-o", b)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err = npz.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lossB := readFloats(t, r, "loss")
	for i := range lossA {
		if math.Abs(lossA[i]-lossB[i]) > 1e-6 {
			t.Fatalf("loss[%d]: %v from the seed, %v from -init", i, lossA[i], lossB[i])
		}
	}
	given, err := spec.Parse(mustRead(t, output.SidecarPath(b)))
	if err != nil {
		t.Fatal(err)
	}
	job, err := spec.Resolve(given, spec.RunGroups()...)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]float64{}, v[:3]...), k[:hrd]...), q[:hrd]...)
	for i, y := range job.Y0 {
		if y != want[i] {
			t.Fatalf("state %d read from -init is %v, the file holds %v", i, y, want[i])
		}
	}
	if in := sidecarOf(t, b)["meta"].(map[string]any)["inputs"].(map[string]any)["init"].(map[string]any); in["path"] != init || len(in["sha256"].(string)) != 64 {
		t.Errorf("inputs %v", in)
	}
}

// TestReadmePythonSnippet runs the README's Python snippet, as written, on
// the output of the default run, with matplotlib's Agg backend, and checks
// that it draws the figure (saved after the snippet). matplotlib and numpy
// come from Debian's python3-matplotlib and python3-numpy, which .ci/run
// installs.
func TestReadmePythonSnippet(t *testing.T) {
	t.Parallel()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy, matplotlib").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("numpy and matplotlib are not importable by %s in CI: %v", py, err)
		}
		t.Skipf("matplotlib not available to %s (apt-get install python3-matplotlib): %v", py, err)
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```python\n")
	snippet, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no ```python block")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "run", "-q", "-o", filepath.Join(dir, "out", "run.npz")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	script := filepath.Join(dir, "snippet.py")
	if err := os.WriteFile(script, []byte(snippet+"plt.savefig('figure.png')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MPLBACKEND=Agg")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README snippet fails: %v\n%s", err, out)
	}
	if fi, err := os.Stat(filepath.Join(dir, "figure.png")); err != nil || fi.Size() < 10000 {
		t.Fatalf("no figure drawn: %v", err)
	}
}

// TestReducedMergedBalanced: with a white Λ the merged closed form is exact
// only from a balanced, aligned start. From the random start the command
// says so and records the distance; with -balanced the flow follows the
// closed form to the integration tolerance.
func TestReducedMergedBalanced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"reduced", "-model", "merged", "-white", "0.5", "-D", "3", "-H", "2", "-N", "10", "-eigvecs", "identity", "-q"}
	result := func(extra ...string) (map[string]any, string) {
		out := filepath.Join(dir, fmt.Sprintf("r%d.npz", len(extra)))
		code, stdout, stderr := runCLI(t, append(append(args, "-o", out), extra...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(output.SidecarPath(out))
		if err != nil {
			t.Fatal(err)
		}
		var side struct {
			Meta struct{ Result map[string]any } `json:"meta"`
		}
		if err := json.Unmarshal(b, &side); err != nil {
			t.Fatal(err)
		}
		return side.Meta.Result, stdout
	}
	random, stdout := result()
	if random["closed_form_exact"] != false || random["start_distance_from_balanced"].(float64) < 0.1 || !strings.Contains(stdout, "-balanced") {
		t.Errorf("random start: result %v, summary %q; want the closed form flagged as not exact", random, stdout)
	}
	balanced, _ := result("-balanced")
	if balanced["closed_form_exact"] != true || balanced["closed_form_max_deviation"].(float64) > 1e-7 {
		t.Errorf("-balanced: result %v; want the closed form exact to 1e-7", balanced)
	}
	code, _, stderr := runCLI(t, "run", "-balanced", "-o", filepath.Join(dir, "x.npz"))
	if code != 2 || !strings.Contains(stderr, "-balanced is for the merged model") {
		t.Errorf("-balanced with the separate model: exit %d, %q", code, stderr)
	}
}

// TestLandscapeRankSummary: with R = 2 the landscape analyzes the packed
// configuration training visits, says which plateaus are long, and writes
// the one-per-head realization beside it (the paper's D = 4 example, H = 5:
// S = {1,2} is a higher-order saddle packed, a strict saddle with 4
// positive eigenvalues one per head).
func TestLandscapeRankSummary(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "l.npz")
	code, stdout, stderr := runCLI(t, "landscape", "-H", "5", "-R", "2", "-q", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "the plateaus after m = [2] learned are long (higher-order saddles), after m = [1 3] short") {
		t.Errorf("summary lacks the rank line:\n%s", stdout)
	}
	r, err := npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ints := func(name string) []int64 {
		var x []int64
		if err := r.Read(name+".npy", &x); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return x
	}
	class, altClass, altPos := ints("class"), ints("alt_class"), ints("alt_n_positive")
	if class[0b0011] != 2 || altClass[0b0011] != 1 || altPos[0b0011] != 4 {
		t.Errorf("S = {1,2}: class %v, alternative class %v with %v positive; want 2, 1, 4", class[3], altClass[3], altPos[3])
	}
}

// checkInterrupted checks what an interrupted command leaves: exit 130,
// INCOMPLETE in its summary, a sidecar marked incomplete and interrupted,
// and the file out, which it returns open (closed at the test's end).
func checkInterrupted(t *testing.T, out string, code int, stdout, stderr string) *npz.Reader {
	t.Helper()
	if code != ExitInterrupted || !strings.Contains(stdout, "INCOMPLETE") {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	meta := sidecarOf(t, out)["meta"].(map[string]any)
	if meta["complete"] != false || !strings.HasPrefix(meta["status"].(string), "interrupted") {
		t.Errorf("sidecar: complete %v, status %v", meta["complete"], meta["status"])
	}
	r, err := npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
