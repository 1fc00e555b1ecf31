package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/output"
)

var goldenAll = flag.Bool("golden.all", false, "also run the slow golden cases (figures rank: 24 runs at D = 8)")

// goldenCase is a command sequence of the README or docs/cli.md whose
// every output is pinned bit for bit in testdata/golden/PLATFORM/NAME.txt:
// the exit codes, stdout and stderr, each sidecar (wall time and version
// masked), each .npz by its SHA-256 and each array's dtype, shape and the
// SHA-256 of its data, and each figure by its SHA-256. In the arguments DIR
// stands for a temporary directory.
type goldenCase struct {
	name  string
	setup func(t *testing.T, dir string)
	cmds  [][]string
	slow  bool // only with -golden.all
}

var goldenCases = []goldenCase{
	{name: "run", cmds: [][]string{
		{"run", "-plot", "-o", "DIR/run.npz"},
		{"run", "-spec", "DIR/run.json", "-o", "DIR/again.npz"},
		{"plot", "DIR/run.npz", "-view", "pcr", "-o", "DIR/pcr.svg"},
		{"plot", "DIR/run.npz", "-xscale", "lin", "-o", "DIR/lin.svg"},
	}},
	{name: "run_merged", cmds: [][]string{{"run", "-model", "merged", "-H", "8", "-o", "DIR/run.npz"}}},
	{name: "run_power", cmds: [][]string{{"run", "-spectrum", "power:1", "-D", "8", "-H", "9", "-R", "2", "-winit", "5e-3", "-o", "DIR/run.npz"}}},
	{name: "run_ntp", cmds: [][]string{{"run", "-ntp-max", "31", "-T", "50000", "-o", "DIR/run.npz"}}},
	{name: "run_init", setup: writeGoldenWeights, cmds: [][]string{{"run", "-init", "DIR/weights.npz", "-o", "DIR/run.npz"}}},
	{name: "run_merged_white", cmds: [][]string{
		{"run", "-model", "merged", "-white", "1", "-D", "4", "-H", "8", "-balanced", "-plot=svg", "-o", "DIR/run.npz"},
		{"run", "-model", "merged", "-white", "1", "-D", "4", "-H", "8", "-plot=svg", "-o", "DIR/unbalanced.npz"},
	}},
	{name: "run_grids", cmds: [][]string{
		{"run", "-T", "20000", "-grid", "log", "-samples", "101", "-o", "DIR/log.npz"},
		{"run", "-T", "20000", "-grid", "lin", "-samples", "101", "-o", "DIR/lin.npz"},
		{"run", "-T", "20000", "-samples", "301", "-o", "DIR/drops.npz"},
		{"run", "-samples", "3", "-o", "DIR/three.npz"},
		{"run", "-method", "dop853", "-samples", "101", "-o", "DIR/dop853.npz"},
		{"run", "-method", "rock4", "-samples", "101", "-o", "DIR/rock4.npz"},
		{"run", "-method", "rodas5p", "-samples", "101", "-o", "DIR/rodas5p.npz"},
	}},
	{name: "reduced", cmds: [][]string{
		{"reduced", "-plot=svg", "-o", "DIR/reduced.npz"},
		{"reduced", "-model", "merged", "-white", "1", "-D", "4", "-N", "31", "-H", "8", "-balanced", "-plot=svg", "-o", "DIR/merged.npz"},
		{"reduced", "-model", "merged", "-white", "1", "-D", "4", "-H", "8", "-o", "DIR/unbalanced.npz"},
		{"reduced", "-R", "2", "-H", "2", "-o", "DIR/rank2.npz"},
	}},
	{name: "landscape", cmds: [][]string{
		{"landscape", "-plot=svg", "-o", "DIR/landscape.npz"},
		{"landscape", "-model", "merged", "-o", "DIR/merged.npz"},
		{"landscape", "-R", "2", "-H", "2", "-o", "DIR/rank2.npz"},
		{"landscape", "-stability=false", "-spectrum", "power:1", "-D", "6", "-o", "DIR/table.npz"},
	}},
	{name: "sweep", setup: writeGoldenSweeps, cmds: [][]string{
		{"sweep", "-spec", "DIR/sweep.json", "-o", "DIR/sweep", "-j", "2", "-plot=svg"},
		{"sweep", "-spec", "DIR/sweep.json", "-o", "DIR/sweep", "-j", "2"},
		{"sweep", "-spec", "DIR/small.json", "-o", "DIR/shards", "-shard", "0/2"},
		{"sweep", "-spec", "DIR/small.json", "-o", "DIR/shards", "-shard", "1/2"},
		{"sweep", "-merge", "DIR/shards"},
		{"plot", "DIR/sweep/index.npz", "-by", "R", "-panels", "-o", "DIR/panels.svg"},
	}},
	{name: "train", cmds: [][]string{
		{"train", "-P", "2000", "-steps", "4000", "-samples", "201", "-plot=svg", "-o", "DIR/gd.npz"},
		{"train", "-gd=false", "-P", "1000", "-steps", "2000", "-samples", "101", "-o", "DIR/flow.npz"},
		{"train", "-batch", "100", "-P", "1000", "-steps", "500", "-samples", "51", "-grid", "lin", "-o", "DIR/sgd.npz"},
	}},
	{name: "figures", cmds: [][]string{
		{"figures", "-o", "DIR/fig", "-data", "DIR/data", "-format", "svg", "merged", "separate", "reduced", "landscape", "pcr"},
	}},
	{name: "figures_rank", slow: true, cmds: [][]string{
		{"figures", "-o", "DIR/fig", "-data", "DIR/data", "-dpi", "50", "rank"},
	}},
	{name: "help", cmds: [][]string{
		{}, {"-h"}, {"help"}, {"run", "-h"}, {"train", "-h"}, {"reduced", "-h"}, {"landscape", "-h"},
		{"sweep", "-h"}, {"plot", "-h"}, {"figures", "-h"},
	}},
	{name: "errors_law", setup: writeBadTasks, cmds: [][]string{
		{"run", "-task-eigs", "1,2,0,1", "-o", "DIR/x.npz"},
		{"run", "-task-eigs", "1,2", "-o", "DIR/x.npz"},
		{"run", "-task-eigs", "2,1,1,1", "-task-eigvecs", "DIR/tasks.npy", "-o", "DIR/x.npz"},
		{"run", "-noise", "-0.5", "-o", "DIR/x.npz"},
		{"run", "-noise", "NaN", "-o", "DIR/x.npz"},
		{"run", "-icl", "0.5", "-w0-file", "DIR/tasks.npy", "-o", "DIR/x.npz"},
		{"run", "-test-task-white", "2", "-o", "DIR/x.npz"},
		{"train", "-test-task-white", "2", "-test", "0", "-o", "DIR/x.npz"},
		{"run", "-layer", "lu", "-o", "DIR/x.npz"},
		{"run", "-tasks", "2000000", "-icl", "0", "-o", "DIR/x.npz"},
		{"reduced", "-noise", "0.1", "-o", "DIR/x.npz"},
		{"landscape", "-task-white", "2", "-o", "DIR/x.npz"},
	}},
	{name: "errors", setup: writeGoldenMistakes, cmds: [][]string{
		{"run", "-spectrum", "power:1", "-D", "0", "-o", "DIR/x.npz"},
		{"run", "-eigs", "1,-1", "-o", "DIR/x.npz"},
		{"run", "-N", "3", "-nu", "0.5", "-o", "DIR/x.npz"},
		{"run", "-samples", "1", "-o", "DIR/x.npz"},
		{"run", "-method", "rk4", "-o", "DIR/x.npz"},
		{"run", "-atol", "0", "-o", "DIR/x.npz"},
		{"train", "-nu", "0.1", "-o", "DIR/x.npz"},
		{"landscape", "-D", "30", "-spectrum", "power:1", "-o", "DIR/x.npz"},
		{"reduced", "-align", "1", "-o", "DIR/x.npz"},
		{"sweep", "-spec", "DIR/none.json"},
		{"plot", "DIR/none.npz"},
		{"frobnicate"},
		{"-q", "run"},
		{"run", "out.npz"},
		// Issue 33's mistakes: exit 2, one line that says what to do.
		{"train", "-spec", "DIR/trainT.json", "-o", "DIR/x.npz"},
		{"run", "-R", "2", "-model", "merged", "-o", "DIR/x.npz"},
		{"run", "-T", "100", "-tol", "1e-3", "-o", "DIR/x.npz"},
		{"run", "-spec", "DIR/mergedR.json", "-o", "DIR/x.npz"},
		{"run", "-winit", "1e-300", "-o", "DIR/x.npz"},
		{"run", "-winit", "1e-12", "-o", "DIR/x.npz"},
		{"landscape", "-D", "24", "-spectrum", "power:1", "-o", "DIR/x.npz"},
		{"run", "-spec", "DIR/malformed.json", "-o", "DIR/x.npz"},
		{"run", "-spec", "DIR/empty.json", "-o", "DIR/x.npz"},
		{"sweep", "-spec", "DIR/malformed.json", "-o", "DIR/x"},
		{"run", "-init", "DIR/heads6.npz", "-o", "DIR/x.npz"},
		{"run", "-init", "DIR/merged.npz", "-o", "DIR/x.npz"},
		{"run", "-init", "DIR/sampled.npz", "-o", "DIR/x.npz"},
		{"run", "-init", "DIR/extras.npz", "-o", "DIR/x.npz"},
		{"run", "-init", "DIR/vx.npz", "-layer", "full", "-o", "DIR/x.npz"},
	}},
	// Issue 45: the broken run and the 16 unclear cases of the task laws,
	// each as it now behaves (a refusal in one line naming the flag, or a
	// run that does what it says), the summary note of a run that reached
	// L_lb and the figure of a full-layer run under a task law.
	{name: "task_laws", setup: writeTaskLawInputs, cmds: [][]string{
		{"run", "-noise", "0.1", "-samples", "101", "-o", "DIR/noise.npz"},                                                                                // broken
		{"run", "-task-eigs", "2,1,1,1", "-task-eigvecs", "random", "-o", "DIR/x.npz"},                                                                    // 1
		{"run", "-task-white", "2", "-task-eigvecs", "random:5", "-o", "DIR/x.npz"},                                                                       // 2
		{"run", "-icl", "0.5", "-w0-file", "DIR/f32.npy", "-o", "DIR/x.npz"},                                                                              // 3
		{"run", "-icl", "0.5", "-w0-file", "DIR/i64.npy", "-o", "DIR/x.npz"},                                                                              // 3
		{"run", "-checkpoint", "1ns", "-o", "DIR/x.npz"},                                                                                                  // 4
		{"run", "-q", "-state-every", "1000000", "-o", "DIR/states.npz"},                                                                                  // 5
		{"sweep", "-q", "-spec", "DIR/taskeigs.json", "-o", "DIR/sweep"},                                                                                  // 6
		{"run", "-icl", "0.5", "-w0", "1,2,3,4", "-task-draw", "gaussian", "-o", "DIR/x.npz"},                                                             // 7
		{"run", "-icl", "0.5", "-w0", "1,2,3,4", "-data-seed", "7", "-o", "DIR/x.npz"},                                                                    // 8
		{"run", "-q", "-icl", "0.5", "-w0", "1,2,3,4", "-T", "10", "-samples", "11", "-o", "DIR/given.npz"},                                               // 8
		{"run", "-noise", "1e300", "-o", "DIR/x.npz"},                                                                                                     // 9
		{"run", "-task-white", "1e200", "-o", "DIR/x.npz"},                                                                                                // 10
		{"run", "-model", "merged", "-layer", "labelkey", "-init", "DIR/full.npz", "-o", "DIR/x.npz"},                                                     // 11
		{"train", "-layer", "full", "-test", "0", "-test-task-white", "2", "-o", "DIR/x.npz"},                                                             // 12
		{"run", "-q", "-model", "merged", "-layer", "labelkey", "-init", "DIR/labelkey.npz", "-T", "10", "-samples", "11", "-o", "DIR/restart.npz"},       // 13
		{"run", "-q", "-task-eigs", "4,2,1,0.5", "-task-eigvecs", "random:5", "-test-task-eigs", "4,2,1,0.5", "-samples", "101", "-o", "DIR/aligned.npz"}, // 14
		{"run", "-q", "-model", "merged", "-layer", "labelkey", "-H", "1", "-white", "0.125", "-D", "8", "-N", "80", "-noise", "0.01", "-icl", "0", "-tasks", "16", "-task-draw", "gaussian", "-samples", "101", "-o", "DIR/lu.npz"},
		{"plot", "DIR/lu.npz", "-view", "pcr", "-o", "DIR/x.svg"},             // 15
		{"run", "-checkpoint-restart", "-checkpoint", "0", "-o", "DIR/x.npz"}, // 16
		{"run", "-q", "-model", "merged", "-white", "0.25", "-D", "4", "-H", "4", "-layer", "full", "-icl", "0.5", "-samples", "101", "-o", "DIR/lb.npz"},
		{"plot", "DIR/lb.npz", "-o", "DIR/lb.svg"},
		{"run", "-q", "-layer", "full", "-noise", "0.1", "-task-eigs", "1.5,1,0.5,0.25", "-icl", "0.5", "-tasks", "4", "-samples", "201", "-plot=svg", "-o", "DIR/full-law.npz"},
	}},
	// Issue 33's valid but surprising inputs: a note, and the output.
	{name: "notes", cmds: [][]string{
		{"run", "-q", "-T", "1", "-samples", "3", "-o", "DIR/notes/run.npz"},
		{"plot", "DIR/notes/run.npz", "-by", "R", "-o", "DIR/x.svg"}, // exit 2
		{"train", "-q", "-spec", "DIR/notes/run.json", "-P", "100", "-test", "0", "-steps", "2", "-samples", "3", "-o", "DIR/notes/train.npz"},
		{"sweep", "-q", "-command", "train", "-spec", "DIR/notes/run.json", "-o", "DIR/notes/sweep"},
		{"run", "-q", "-icl", "0.5", "-T", "1", "-samples", "3", "-o", "DIR/notes/icl.npz"},
		{"run", "-q", "-eigs", "0.1,0.2,0.3,0.4", "-T", "1", "-samples", "3", "-o", "DIR/notes/eigs.npz"},
		{"run", "-q", "-method", "rodas5p", "-D", "16", "-spectrum", "power:1", "-T", "1", "-samples", "3", "-o", "DIR/notes/rodas.npz"},
	}},
}

// writeGoldenMistakes writes the inputs of the errors case: spec files
// and -init files with the mistakes of issue 33.
func writeGoldenMistakes(t *testing.T, dir string) {
	for name, body := range map[string]string{
		"trainT.json":    `{"T": 100}`,
		"mergedR.json":   `{"model": "merged", "R": 2}`,
		"malformed.json": `{"seed": 5,}`,
		"empty.json":     "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = 0.01 * float64(i%7-3)
		}
		return x
	}
	for name, arrays := range map[string][]export.Array{
		"heads6.npz":  {export.Floats("v", w(6), 6), export.Floats("K", w(24), 6, 1, 4), export.Floats("Q", w(24), 6, 1, 4)},
		"merged.npz":  {export.Floats("v", w(4), 4), export.Floats("U", w(64), 4, 4, 4)},
		"sampled.npz": {export.Floats("v", w(12), 3, 4), export.Floats("K", w(48), 3, 4, 1, 4), export.Floats("Q", w(48), 3, 4, 1, 4)},
		"extras.npz": {export.Floats("v", w(4), 4), export.Floats("K", w(16), 4, 1, 4), export.Floats("Q", w(16), 4, 1, 4),
			export.Floats("v_x", w(16), 4, 4), export.Floats("k_y", w(4), 4, 1)},
		"vx.npz": {export.Floats("v", w(4), 4), export.Floats("K", w(16), 4, 1, 4), export.Floats("Q", w(16), 4, 1, 4),
			export.Floats("v_x", w(16), 4, 4)},
	} {
		if err := export.SaveNPZ(filepath.Join(dir, name), arrays); err != nil {
			t.Fatal(err)
		}
	}
}

func writeGoldenWeights(t *testing.T, dir string) {
	v := []float64{0.01, -0.02, 0.015, 0.005}
	k, q := make([]float64, 16), make([]float64, 16)
	for i := range k {
		k[i], q[i] = 0.01*float64(i%5-2), 0.01*float64((3*i)%7-3)
	}
	err := export.SaveNPZ(filepath.Join(dir, "weights.npz"), []export.Array{
		export.Floats("v", v, 4), export.Floats("K", k, 4, 1, 4), export.Floats("Q", q, 4, 1, 4)})
	if err != nil {
		t.Fatal(err)
	}
}

// writeTaskLawInputs writes the inputs of the task_laws case: (2, 4)
// tasks as float32 and as int64 (f32.npy, i64.npy); a sweep spec whose
// task-eigs is one spectrum (taskeigs.json); the merged model's state at
// D = 4, H = 4 as the full layer has it, v_x nonzero (full.npz), and as
// the label-key layer has it, v, U and u_y (labelkey.npz).
func writeTaskLawInputs(t *testing.T, dir string) {
	header := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }"
	header += strings.Repeat(" ", 128-10-len(header)-1) + "\n"
	raw := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), 0)
	if err := os.WriteFile(filepath.Join(dir, "f32.npy"), append(append(raw, header...), make([]byte, 32)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := export.SaveNPY(filepath.Join(dir, "i64.npy"), export.Ints("w", make([]int64, 8), 2, 4)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "taskeigs.json"), []byte(`{"task-eigs": [1.5, 1, 0.5, 0.25], "T": 100, "samples": 11}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := func(n int, scale float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = scale * float64(i%7-3)
		}
		return x
	}
	v, u, uy := export.Floats("v", w(4, 0.01), 4), export.Floats("U", w(64, 0.01), 4, 4, 4), export.Floats("u_y", w(16, 0.001), 4, 4)
	for name, arrays := range map[string][]export.Array{
		"full.npz":     {v, u, uy, export.Floats("v_x", w(16, 0.002), 4, 4)},
		"labelkey.npz": {v, u, uy},
	} {
		if err := export.SaveNPZ(filepath.Join(dir, name), arrays); err != nil {
			t.Fatal(err)
		}
	}
}

// writeBadTasks writes tasks.npy, a (3, 5) array: the wrong shape for the
// default D = 4 as tasks and as eigenvectors.
func writeBadTasks(t *testing.T, dir string) {
	if err := export.SaveNPY(filepath.Join(dir, "tasks.npy"), export.Floats("tasks", make([]float64, 15), 3, 5)); err != nil {
		t.Fatal(err)
	}
}

func writeGoldenSweeps(t *testing.T, dir string) {
	for name, body := range map[string]string{
		"sweep.json": `{"seed": [1, 2, 3, 4, 5, 6], "winit": [0.01, 0.001], "R": [1, 2], "samples": 1001}`,
		"small.json": `{"seed": [1, 2, 3], "samples": 101}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGolden runs the golden cases and compares their outputs with
// testdata/golden/PLATFORM; go test -run Golden -update rewrites them. The
// arithmetic of the flow's matrix products depends on the processor's
// kernels (flow/internal/gemm), so each kernel set has its own files; on a
// platform without them the cases run for their round trips alone
// (checkRoundTrip).
func TestGolden(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "golden", goldenPlatform())
	_, err := os.Stat(dir)
	compare := err == nil || *update
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			t.Parallel()
			if gc.slow && !*goldenAll {
				t.Skip("slow: go test -run Golden -golden.all")
			}
			got := runGolden(t, gc)
			path := filepath.Join(dir, gc.name+".txt")
			if !compare {
				return
			}
			if *update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("outputs differ from %s (go test -run Golden -update rewrites it):\n%s", path, lineDiff(string(want), got))
			}
		})
	}
}

// runGolden runs the commands of gc in a new directory and describes
// everything they printed and wrote.
func runGolden(t *testing.T, gc goldenCase) string {
	dir := t.TempDir()
	if gc.setup != nil {
		gc.setup(t, dir)
	}
	inputs := map[string]bool{}
	for _, f := range listFiles(t, dir) {
		inputs[f] = true
	}
	var b strings.Builder
	for _, args := range gc.cmds {
		args = append([]string(nil), args...)
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "DIR", dir)
		}
		code, stdout, stderr := runCLIContext(t, context.Background(), args...)
		fmt.Fprintf(&b, "$ linattn %s\nexit %d\n", strings.Join(args, " "), code)
		if stdout != "" {
			fmt.Fprintf(&b, "--- stdout\n%s", stdout)
		}
		if stderr != "" {
			fmt.Fprintf(&b, "--- stderr\n%s", stderr)
		}
	}
	for _, f := range listFiles(t, dir) {
		if !inputs[f] {
			describeFile(t, &b, filepath.Join(dir, f), f)
		}
		if strings.HasSuffix(f, ".npz") && !inputs[f] {
			checkRoundTrip(t, filepath.Join(dir, f))
		}
	}
	return normalizeGolden(b.String(), dir)
}

// checkRoundTrip reads an output back through package output: Open knows
// it, each array has the shape the sidecar records, the sidecar holds the
// .npz's SHA-256 (Verify), and written again it gives the same bytes.
func checkRoundTrip(t *testing.T, path string) {
	f, err := output.Open(path)
	if err != nil {
		t.Errorf("output.Open: %v", err)
		return
	}
	if f.Index != nil {
		if len(f.Index.Rows) != f.Index.Runs && f.Index.Shard == "" {
			t.Errorf("%s: %d rows of %d runs", path, len(f.Index.Rows), f.Index.Runs)
		}
		return
	}
	if _, _, err := output.Verify(path); err != nil {
		t.Error(err)
	}
	shapes := f.Sidecar.Meta.Arrays
	if len(shapes) != len(f.Names()) {
		t.Errorf("%s: %d arrays, the sidecar lists %d", path, len(f.Names()), len(shapes))
	}
	for _, name := range f.Names() {
		if _, err := f.Array(name, shapes[name]...); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	again, err := f.Sidecar.MarshalJSON()
	if err != nil || string(again) != string(mustRead(t, output.SidecarPath(path))) {
		t.Errorf("%s: the sidecar read and written again differs (%v)", path, err)
	}
}

func listFiles(t *testing.T, dir string) []string {
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// describeFile writes a sidecar or index in full, the arrays of a .npz by
// dtype, shape and hash, and other files by their hash.
func describeFile(t *testing.T, b *strings.Builder, path, rel string) {
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	switch filepath.Ext(path) {
	case ".json":
		fmt.Fprintf(b, "--- file %s\n%s", rel, content)
	case ".npz":
		fmt.Fprintf(b, "--- file %s %x\n", rel, sum)
		z, err := export.NewNPZReader(bytes.NewReader(content), int64(len(content)))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, name := range z.Names() {
			a, err := z.Read(name)
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			fmt.Fprintf(b, "%s %s %v %s\n", name, a.Dtype(), a.Shape, arrayHash(a))
		}
	default:
		fmt.Fprintf(b, "--- file %s %x\n", rel, sum)
	}
}

// arrayHash is the SHA-256 of an array's values, little-endian (numpy's
// a.tobytes()).
func arrayHash(a export.Array) string {
	h := sha256.New()
	switch {
	case a.Float != nil:
		binary.Write(h, binary.LittleEndian, a.Float)
	case a.Int != nil:
		binary.Write(h, binary.LittleEndian, a.Int)
	case a.BoolAt != nil:
		for i := 0; i < a.Size(); i++ {
			c := byte(0)
			if a.BoolAt(i) {
				c = 1
			}
			h.Write([]byte{c})
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

var goldenMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"wall_seconds": [0-9.e+-]+`), `"wall_seconds": 0`},
	{regexp.MustCompile(`"version": "[^"]*"`), `"version": "VERSION"`},
	{regexp.MustCompile(`in [0-9.]+ (ms|s|µs)\n`), "in TIME\n"},
	{regexp.MustCompile(`[0-9.]+ runs/s, ~[0-9]+ s left`), "RATE"},
}

// normalizeGolden replaces the directory, wall times and the version.
func normalizeGolden(s, dir string) string {
	s = strings.ReplaceAll(s, dir, "DIR")
	for _, m := range goldenMasks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return s
}

// lineDiff lists the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for i := 0; i < max(len(w), len(g)) && len(out) < 40; i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			out = append(out, fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, a, b))
		}
	}
	return strings.Join(out, "\n")
}
