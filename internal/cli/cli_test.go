package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npz"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(&out, &errb, args)
	return code, out.String(), errb.String()
}

// TestDefaultRun runs the README's main job (the paper's D = 4 example) and
// checks the printed summary and the written arrays against the plateau
// levels of the paper (MATH.md: 1, 0.64057971, 0.37737216, 0.2098046,
// 0.13599507).
func TestDefaultRun(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "-out", dir, "-points", "301")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"plateau levels L(M_m), m=0..4: [1 0.64057971 0.37737216 0.2098046 0.13599507]", "drop m=4", "trajectory.npz"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	r, err := npz.Open(filepath.Join(dir, "trajectory.npz"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if sh := r.Header("keys.npy").Descr.Shape; len(sh) != 4 || sh[0] != 301 || sh[1] != 4 || sh[2] != 1 || sh[3] != 4 {
		t.Errorf("keys shape %v, want (301, 4, 1, 4)", sh)
	}
	var loss []float64
	if err := r.Read("loss.npy", &loss); err != nil {
		t.Fatal(err)
	}
	if len(loss) != 301 || math.Abs(loss[0]-1) > 1e-4 || math.Abs(loss[300]-0.13599507-1e-6) > 1e-8 {
		t.Errorf("loss from %v to %v", loss[0], loss[len(loss)-1])
	}
	for i := 1; i < len(loss); i++ {
		if loss[i] > loss[i-1]+1e-15 {
			t.Fatalf("loss increases at %d: %v → %v", i, loss[i-1], loss[i])
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if tr, ok := meta["transitions"].([]any); !ok || len(tr) != 4 {
		t.Errorf("metadata transitions: %v", meta["transitions"])
	}
}

func TestMergedRun(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "run", "-model", "merged", "-heads", "3", "-out", dir, "-points", "50", "-grid", "log")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Count(out, "drop m=") != 1 {
		t.Errorf("merged model should drop once:\n%s", out)
	}
	r, err := npz.Open(filepath.Join(dir, "trajectory.npz"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if sh := r.Header("U.npy").Descr.Shape; len(sh) != 4 || sh[0] != 50 || sh[1] != 3 {
		t.Errorf("U shape %v", sh)
	}
}

// TestUsageErrors: bad input exits with code 2, names the flag and the
// allowed range, and writes nothing.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-lambda", "0.4,-1"}, "lambda[1] = -1"},
		{[]string{"-lambda", "0.4,x"}, "-lambda entry 2"},
		{[]string{"-heads", "-1"}, "H = -1"},
		{[]string{"-rank", "9"}, "R = 9, want 1 ≤ R ≤ D = 4"},
		{[]string{"-context", "0"}, "N = 0"},
		{[]string{"-model", "softmax"}, "-model"},
		{[]string{"-method", "rk4"}, "-method"},
		{[]string{"-winit", "-1"}, "w_init = -1"},
		{[]string{"-tau", "0"}, "Tau = 0"},
		{[]string{"-t", "0"}, "-t = 0"},
		{[]string{"-grid", "cubic"}, "-grid"},
		{[]string{"-nosuchflag"}, "nosuchflag"},
		{[]string{"frobnicate"}, "unknown command"},
	} {
		dir := t.TempDir()
		code, _, errs := runCLI(t, append(tc.args, "-out", dir)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: wrote %d files", tc.args, len(entries))
		}
	}
}

// TestLandscape runs the landscape command on the paper's D = 4 example: of
// the 16 fixed points the full set is the minimum, the empty set and the
// three other path points are higher-order saddles and the other 11 are
// strict saddles (landscape.TestPaperStability holds the details).
func TestLandscape(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "landscape", "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "classes: 1 minimum, 11 strict saddles, 4 higher-order saddles") {
		t.Errorf("output:\n%s", out)
	}
	r, err := npz.Open(filepath.Join(dir, "landscape.npz"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var loss []float64
	if err := r.Read("loss.npy", &loss); err != nil {
		t.Fatal(err)
	}
	if len(loss) != 16 || math.Abs(loss[15]-0.13599507) > 1e-8 || math.Abs(loss[0]-1) > 1e-15 {
		t.Errorf("loss table %v", loss)
	}
	if sh := r.Header("jacobian_eigenvalues.npy").Descr.Shape; len(sh) != 2 || sh[0] != 16 || sh[1] != 36 {
		t.Errorf("jacobian_eigenvalues shape %v, want (16, 36)", sh)
	}

	code, out, errs = runCLI(t, "landscape", "-model", "merged", "-out", dir)
	if code != 0 || !strings.Contains(out, "unstable at 0.188149") {
		t.Errorf("merged: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = runCLI(t, "landscape", "-powerlaw", "1", "-dim", "25", "-stability=false", "-out", dir)
	if code != 2 || !strings.Contains(errs, "D ≤ 24") {
		t.Errorf("D = 25: exit %d, %s", code, errs)
	}
	code, _, errs = runCLI(t, "landscape", "-powerlaw", "1", "-dim", "11", "-out", dir)
	if code != 2 || !strings.Contains(errs, "D ≤ 10") {
		t.Errorf("stability at D = 11: exit %d, %s", code, errs)
	}
}

func TestReduce(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "reduce", "-points", "500", "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Count(out, "\n") < 7 {
		t.Errorf("output:\n%s", out)
	}
	r, err := npz.Open(filepath.Join(dir, "reduced.npz"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var dev, obs, pred []float64
	for name, dst := range map[string]*[]float64{"max_deviation.npy": &dev, "t_observed.npy": &obs, "t_predicted.npy": &pred} {
		if err := r.Read(name, dst); err != nil {
			t.Fatal(err)
		}
	}
	if len(dev) != 4 {
		t.Fatalf("%d drops", len(dev))
	}
	// The bounds of reduced.TestCompareWithFullFlow, on a coarser grid.
	for i := range dev {
		if dev[i] > 0.02 || math.Abs(pred[i]-obs[i]) > 0.01*obs[i] {
			t.Errorf("drop %d: deviation %g, predicted %g, observed %g", i+1, dev[i], pred[i], obs[i])
		}
	}
	if code, _, errs := runCLI(t, "reduce", "-align", "1.5", "-out", dir); code != 2 || !strings.Contains(errs, "align") {
		t.Errorf("-align 1.5: exit %d, %s", code, errs)
	}
}
