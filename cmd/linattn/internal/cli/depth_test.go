package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linattn/linattn/export"
)

// TestDepthBadInput: a stack's bad input exits 2 with one line naming the
// flag and what it wants, and writes nothing: L beyond 1 … 4, -tie on one
// layer, a stack of the full or label-key layer, -nu, reduced and
// landscape (of one layer), -init files whose layer axis disagrees or is
// missing, and -unrestricted with a separate model or ties.
func TestDepthBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	three := filepath.Join(dir, "three.npz") // a stack of three layers' heads, H = 4, R = 1, D = 4
	writeNPZ(t, three, map[string][]float64{"v": make([]float64, 12), "K": make([]float64, 48), "Q": make([]float64, 48)},
		map[string][]int{"v": {3, 4}, "K": {3, 4, 1, 4}, "Q": {3, 4, 1, 4}})
	one := filepath.Join(dir, "one.npz") // one layer's
	writeNPZ(t, one, map[string][]float64{"v": make([]float64, 4), "K": make([]float64, 16), "Q": make([]float64, 16)},
		map[string][]int{"v": {4}, "K": {4, 1, 4}, "Q": {4, 1, 4}})
	before := listDir(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-layers", "0"}, "-layers = 0, want 1 ≤ L ≤ 4"},
		{[]string{"run", "-layers", "5"}, "-layers = 5, want 1 ≤ L ≤ 4"},
		{[]string{"run", "-tie"}, "-tie with -layers 1"},
		{[]string{"run", "-layers", "2", "-layer", "full"}, "-layers 2 with -layer full: a stack is of reduced layers"},
		{[]string{"run", "-layers", "2", "-layer", "labelkey"}, "-layers 2 with -layer labelkey"},
		{[]string{"run", "-layers", "2", "-nu", "0.1"}, "-layers 2 with -nu"},
		{[]string{"reduced", "-layers", "2"}, "-layers 2: linattn reduced is the 1-D theory of one layer"},
		{[]string{"landscape", "-layers", "3"}, "-layers 3: linattn landscape enumerates one layer's fixed points"},
		{[]string{"run", "-layers", "2", "-init", three}, `its layer axis holds 3 layers, give -layers 3`},
		{[]string{"run", "-layers", "2", "-init", one}, "it has no layer axis"},
		{[]string{"run", "-init", three}, "give -layers 3"},
		{[]string{"train", "-layers", "2", "-unrestricted"}, "-unrestricted: the transformer's heads are merged"},
		{[]string{"train", "-model", "merged", "-layers", "2", "-tie", "-unrestricted"}, "-unrestricted with -tie"},
	} {
		args := append(tc.args, "-o", filepath.Join(dir, "out.npz"))
		code, stdout, stderr := runCLI(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || !strings.Contains(stderr, tc.want) || len(lines) != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	if after := listDir(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("files left behind: %v, before %v", after, before)
	}
}

// TestDepthRun: a stack's run writes the heads with their layer axis (a
// tied one without), its summary names the stack and reads its drops off
// the run, and its own final state restarts it with -init (the same loss
// at t = 0 as the run's end).
func TestDepthRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "run.npz")
	code, stdout, stderr := runCLI(t, "run", "-layers", "2", "-T", "3000", "-samples", "21", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"a stack of 2 layers of separate key–query attention", "(no theory for a stack's drops)", "read off the run"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
	arrays := loadArrays(t, out)
	for name, shape := range map[string][]int{"v": {21, 2, 4}, "K": {21, 2, 4, 1, 4}, "key_alignment": {21, 2, 4, 1, 4}, "M": {21, 2, 4, 4}} {
		if got := arrays[name].Shape; !slices.Equal(got, shape) {
			t.Errorf("%s has shape %v, want %v", name, got, shape)
		}
	}
	// The final state as -init, with the layer axis.
	last := map[string][]float64{}
	shapes := map[string][]int{"v": {2, 4}, "K": {2, 4, 1, 4}, "Q": {2, 4, 1, 4}}
	for name, shape := range shapes {
		all := arrays[name].Float
		n := 1
		for _, s := range shape {
			n *= s
		}
		last[name] = all[len(all)-n:]
	}
	init := filepath.Join(dir, "last.npz")
	writeNPZ(t, init, last, shapes)
	again := filepath.Join(dir, "again.npz")
	if code, _, stderr := runCLI(t, "run", "-layers", "2", "-init", init, "-T", "1", "-samples", "2", "-o", again); code != 0 {
		t.Fatalf("restart: exit %d: %s", code, stderr)
	}
	loss, start := arrays["loss"].Float, loadArrays(t, again)["loss"].Float
	if end := loss[len(loss)-1]; start[0] != end {
		t.Errorf("restarted from the final state at loss %.17g, the run ended at %.17g", start[0], end)
	}
	tied := filepath.Join(dir, "tied.npz")
	if code, _, stderr := runCLI(t, "run", "-model", "merged", "-H", "1", "-layers", "3", "-tie", "-T", "100", "-samples", "5", "-o", tied); code != 0 {
		t.Fatalf("tied: exit %d: %s", code, stderr)
	}
	if got := loadArrays(t, tied)["U"].Shape; !slices.Equal(got, []int{5, 1, 4, 4}) {
		t.Errorf("a tied stack's U has shape %v, want [5 1 4 4] (one set of heads)", got)
	}
}

// loadArrays reads every array of an output file.
func loadArrays(t *testing.T, path string) map[string]export.Array {
	t.Helper()
	z, err := export.LoadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]export.Array{}
	for _, name := range z.Names() {
		if out[name], err = z.Read(name); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
