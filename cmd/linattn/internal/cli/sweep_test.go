package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npz"

	"github.com/linattn/linattn/output"
)

// sweepSpec is an 8-run sweep: two spectra (the paper's D = 4 example and a
// D = 2 one) × two initialization scales × two seeds.
const sweepSpec = `{"eigs": [[0.4, 0.3, 0.2, 0.1], [0.3, 0.1]], "winit": [0.03, 0.06], "seed": [1, 2], "samples": 120}`

func writeSpec(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sweep.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sweep(t *testing.T, ctx context.Context, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(ctx, &out, &errb, append([]string{"sweep", "-q"}, args...))
	return code, out.String() + errb.String()
}

// sameFiles compares the index and the run files of two sweep directories
// byte for byte.
func sameFiles(t *testing.T, a, b string, runs int) {
	t.Helper()
	names := []string{"index.json", "index.npz"}
	for i := 0; i < runs; i++ {
		names = append(names, "run-"+string(rune('0'+i))+".npz")
	}
	for _, n := range names {
		x, err1 := os.ReadFile(filepath.Join(a, n))
		y, err2 := os.ReadFile(filepath.Join(b, n))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between %s and %s (%v, %v)", n, a, b, err1, err2)
		}
	}
}

// TestSweepShardsResume: the same sweep run whole, as 3 shards merged, and
// interrupted then resumed gives identical indexes and run files.
func TestSweepShardsResume(t *testing.T) {
	t.Parallel()
	specPath := writeSpec(t, sweepSpec)
	root := t.TempDir()
	whole, shards, resumed := filepath.Join(root, "whole"), filepath.Join(root, "shards"), filepath.Join(root, "resumed")

	if code, out := sweep(t, context.Background(), "-spec", specPath, "-o", whole, "-j", "2"); code != 0 || !strings.Contains(out, "8 complete") {
		t.Fatalf("whole: exit %d\n%s", code, out)
	}
	var idx output.Index
	if err := json.Unmarshal(mustRead(t, filepath.Join(whole, "index.json")), &idx); err != nil {
		t.Fatal(err)
	}
	// Order: eigs slowest, then winit, then seed (the order of the fields).
	if idx.Runs != 8 || strings.Join(idx.Swept, ",") != "eigs,winit,seed" ||
		string(idx.Rows[5].Params["eigs"]) != "[0.3,0.1]" || string(idx.Rows[5].Params["winit"]) != "0.03" || string(idx.Rows[5].Params["seed"]) != "2" {
		t.Fatalf("index: %+v", idx)
	}
	for _, r := range idx.Rows {
		// D = 4 runs drop four times, D = 2 runs twice.
		if want := 4; r.Run >= 4 && len(r.Transitions) != 2 || r.Run < 4 && len(r.Transitions) != want {
			t.Errorf("run %d: %d transitions", r.Run, len(r.Transitions))
		}
	}

	for i := 0; i < 3; i++ {
		if code, out := sweep(t, context.Background(), "-spec", specPath, "-o", shards, "-j", "1", "-shard", string(rune('0'+i))+"/3"); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s", i, code, out)
		}
	}
	if code, out := sweep(t, context.Background(), "-merge", shards); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	sameFiles(t, whole, shards, 8)

	ctx, cancel := context.WithCancel(context.Background())
	ctx = withTestHooks(ctx, &testHooks{runDone: func(done int) {
		if done == 3 {
			cancel()
		}
	}})
	code, out := sweep(t, ctx, "-spec", specPath, "-o", resumed, "-j", "2")
	if code != ExitInterrupted || !strings.Contains(out, "not run") {
		t.Fatalf("interrupted sweep: exit %d\n%s", code, out)
	}
	code, out = sweep(t, context.Background(), "-spec", specPath, "-o", resumed, "-j", "2")
	if code != 0 || !strings.Contains(out, "8 complete") || strings.Contains(out, "(0 reused)") {
		t.Fatalf("resumed sweep: exit %d\n%s", code, out)
	}
	sameFiles(t, whole, resumed, 8)

	// A corrupt run file and a run whose sidecar spec differs are redone.
	f := filepath.Join(resumed, "run-1.npz")
	b := mustRead(t, f)
	b[len(b)/2] ^= 0xff
	os.WriteFile(f, b, 0o644)
	side := filepath.Join(resumed, "run-2.json")
	os.WriteFile(side, bytes.Replace(mustRead(t, side), []byte(`"samples": 120`), []byte(`"samples": 121`), 1), 0o644)
	code, out = sweep(t, context.Background(), "-spec", specPath, "-o", resumed, "-j", "2")
	if code != 0 || !strings.Contains(out, "(6 reused)") {
		t.Fatalf("repair: exit %d\n%s", code, out)
	}
	sameFiles(t, whole, resumed, 8)
}

// TestSweepFailures: a run with bad parameters is recorded with its error
// and the others go on; bad sweep input is refused.
func TestSweepFailures(t *testing.T) {
	t.Parallel()
	specPath := writeSpec(t, `{"H": [0, 2], "eigs": [0.3, 0.1], "samples": 50}`)
	dir := t.TempDir()
	code, out := sweep(t, context.Background(), "-spec", specPath, "-o", dir)
	if code != ExitFailure || !strings.Contains(out, "1 complete") || !strings.Contains(out, "run 0 failed: -H = 0, want H ≥ 1") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var idx output.Index
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "index.json")), &idx); err != nil {
		t.Fatal(err)
	}
	if idx.Rows[0].Status != "failed" || !strings.Contains(idx.Rows[0].Error, "-H = 0") || idx.Rows[1].Status != "complete" {
		t.Errorf("rows %+v", idx.Rows)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-spec", writeSpec(t, `{"seed": []}`), "-o", dir}, "empty list"},
		{[]string{"-spec", writeSpec(t, `{"sead": [1]}`), "-o", dir}, `unknown field "sead"`},
		{[]string{"-spec", specPath, "-shard", "3/3", "-o", dir}, "-shard"},
		{[]string{"-spec", specPath, "-j", "0", "-o", dir}, "-j = 0"},
		{[]string{"-o", dir}, "-spec FILE.json is required"},
		{[]string{"-merge", dir}, "no shard index"},
	} {
		if code, out := sweep(t, context.Background(), tc.args...); code != ExitUsage || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, out, tc.want)
		}
	}
	// A missing shard is refused.
	shards := t.TempDir()
	if code, out := sweep(t, context.Background(), "-spec", specPath, "-o", shards, "-shard", "0/2"); code != ExitFailure {
		t.Fatalf("shard 0/2: exit %d\n%s", code, out)
	}
	if code, out := sweep(t, context.Background(), "-merge", shards); code != ExitUsage || !strings.Contains(out, "found 1 of the 2 shards") {
		t.Errorf("merge with a missing shard: exit %d, %s", code, out)
	}
}

// TestSweepIgnoredFields: a field that another makes meaningless is
// refused in a sweep whose every run makes it so, and noted with the
// number of runs that drop it where only some do (issue 45: inside sweeps
// R with the merged model and tol with a final time T were dropped
// silently), as run refuses them (checkIgnored).
func TestSweepIgnoredFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		spec string
		code int
		want string
	}{
		{`{"model": "merged", "R": [1, 2]}`, ExitUsage, `field "R" is the rank of the separate model's keys and queries, which the merged model has not, and every run of the sweep has model "merged": leave R out`},
		{`{"T": 100, "tol": 1e-3}`, ExitUsage, `field "tol" is the convergence test of a run until converged (T 0), which a run to a final time T > 0 has not, and every run of the sweep has T 100: leave tol out`},
		{`{"model": ["separate", "merged"], "R": 2, "H": 2, "T": 10, "samples": 5}`, ExitOK, "note: R is the rank of the separate model's keys and queries, which the merged model has not: it is dropped in the 1 of the 2 runs whose model makes it so"},
		{`{"T": [0, 10], "tol": 0.5, "samples": 5}`, ExitOK, "note: tol is the convergence test of a run until converged (T 0), which a run to a final time T > 0 has not: it is dropped in the 1 of the 2 runs whose T makes it so"},
	} {
		out := filepath.Join(dir, "sweep")
		code, text := sweep(t, context.Background(), "-spec", writeSpec(t, tc.spec), "-o", out)
		if code != tc.code || !strings.Contains(text, tc.want) {
			t.Errorf("%s: exit %d, %q; want %d and %q", tc.spec, code, text, tc.code, tc.want)
		}
		os.RemoveAll(out)
	}
}

// TestSweepIndexDrops: index.npz holds each run's drops by their order,
// the k-th in column k − 1, with their m in transition_m beside them: the
// merged model's one drop (m = D = 4) in the first column (issue 45: the
// index stored it as of column m = D, and index.npz had no m).
func TestSweepIndexDrops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if code, out := sweep(t, context.Background(), "-spec", writeSpec(t, `{"model": "merged", "H": 8, "seed": [1, 2], "samples": 51}`), "-o", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	r, err := npz.Open(filepath.Join(dir, "index.npz"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ts, ms := readFloats(t, r, "transitions"), readInts(t, r, "transition_m")
	var idx output.Index
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "index.json")), &idx); err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || len(ms) != 2 || ms[0] != 4 || ms[1] != 4 || ts[0] != idx.Rows[0].Transitions[0] || ts[1] != idx.Rows[1].Transitions[0] {
		t.Errorf("transitions %v, transition_m %v; index.json rows %+v", ts, ms, idx.Rows)
	}
}
