package cli

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linattn/linattn/spec"
	"github.com/sbinet/npyio/npz"
)

// killedRun runs args to out and saves its state once, when the run
// passes half of T (its end when uninterrupted); the checkpoint file as
// it was then is restored after the run, and its output removed: what a
// process killed right after that checkpoint leaves behind.
func killedRun(t *testing.T, out string, T float64, args []string) {
	t.Helper()
	ckpt := checkpointPath(out)
	var atKill []byte
	ctx := withTestHooks(context.Background(), &testHooks{
		checkpointDue: func(_ string, tt float64) bool { return atKill == nil && tt > T/2 },
		checkpointed: func(path string) {
			var err error
			if atKill, err = os.ReadFile(path); err != nil {
				t.Error(err)
			}
		},
	})
	if code, _, stderr := runCLIContext(t, ctx, append([]string{"run", "-o", out, "-q"}, args...)...); code != ExitOK || atKill == nil {
		t.Fatalf("exit %d, checkpoint saved: %v; %s", code, atKill != nil, stderr)
	}
	if _, err := os.Stat(ckpt); !os.IsNotExist(err) {
		t.Errorf("the finished run left its checkpoint: %v", err)
	}
	os.Remove(out)
	os.Remove(strings.TrimSuffix(out, ".npz") + ".json")
	if err := os.WriteFile(ckpt, atKill, 0o644); err != nil {
		t.Fatal(err)
	}
	// and the temporary file of a checkpoint it was writing when killed
	if err := os.WriteFile(filepath.Join(filepath.Dir(ckpt), "."+filepath.Base(ckpt)+".tmp123"), atKill[:100], 0o600); err != nil {
		t.Fatal(err)
	}
}

// savedOnceAfter returns a context under which every checkpoint file is
// saved once, when its run first asks past time after, and the bytes of
// each as saved then, by path (to read once the runs have returned).
func savedOnceAfter(t *testing.T, after float64) (context.Context, map[string][]byte) {
	var mu sync.Mutex
	atKill := map[string][]byte{}
	ctx := withTestHooks(context.Background(), &testHooks{
		checkpointDue: func(path string, tt float64) bool {
			mu.Lock()
			defer mu.Unlock()
			return atKill[path] == nil && tt > after
		},
		checkpointed: func(path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			atKill[path] = b
			mu.Unlock()
		},
	})
	return ctx, atKill
}

// TestCheckpointResume: a run killed after a checkpoint at about half
// its time and run again continues from the checkpoint and writes the
// .npz of the run that was not killed, byte for byte: under Auto (DOP853
// switching to ROCK4; D = 8) and under BDF (its block preconditioner).
// A damaged checkpoint, or one of another run, is refused in one line
// that says how to start over, and -checkpoint-restart does.
func TestCheckpointResume(t *testing.T) {
	t.Parallel()
	runs := map[string][]string{
		"Auto": {"-D", "8", "-spectrum", "power:1"},
		"BDF":  {"-D", "8", "-spectrum", "power:1", "-method", "bdf"},
	}
	dir := t.TempDir()
	ends := map[string]float64{}
	for name, args := range runs {
		want := filepath.Join(dir, name+"-full.npz")
		if code, _, stderr := runCLI(t, append([]string{"run", "-o", want, "-q"}, args...)...); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		T := sidecarOf(t, want)["meta"].(map[string]any)["solver"].(map[string]any)["t_end"].(float64)
		ends[name] = T
		out := filepath.Join(dir, name+".npz")
		killedRun(t, out, T, args)
		code, _, stderr := runCLI(t, append([]string{"run", "-o", out, "-q"}, args...)...)
		if code != ExitOK || !strings.Contains(stderr, "continuing from the checkpoint at t = ") {
			t.Fatalf("%s: the second run: exit %d, stderr %q", name, code, stderr)
		}
		sameFile(t, out, want)
		if left, _ := filepath.Glob(filepath.Join(dir, "*"+name+".ckpt*")); len(left) > 0 {
			t.Errorf("%s: the resumed run left %v", name, left)
		}
	}

	// A damaged checkpoint and a foreign one: the Auto run's state, one
	// byte changed, and beside the BDF run's output.
	out := filepath.Join(dir, "refused.npz")
	killedRun(t, out, ends["Auto"], runs["Auto"])
	good, _ := os.ReadFile(checkpointPath(out))
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 1
	for _, c := range []struct {
		name, why string
		body      []byte
		args      []string
	}{
		{"damaged", "is damaged (its checksum does not match)", bad, runs["Auto"]},
		{"cut short", "is damaged", good[:len(good)-100], runs["Auto"]},
		{"foreign", "belongs to another run", good, runs["BDF"]},
	} {
		os.WriteFile(checkpointPath(out), c.body, 0o644)
		code, stdout, stderr := runCLI(t, append([]string{"run", "-o", out, "-q"}, c.args...)...)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.why) ||
			!strings.Contains(stderr, "-checkpoint-restart") || stdout != "" {
			t.Errorf("%s: exit %d, stderr %q", c.name, code, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: a refused checkpoint ran", c.name)
		}
	}
	code, _, stderr := runCLI(t, append([]string{"run", "-o", out, "-q", "-checkpoint-restart"}, runs["BDF"]...)...)
	if code != ExitOK || strings.Contains(stderr, "continuing") {
		t.Fatalf("-checkpoint-restart: exit %d, %q", code, stderr)
	}
	sameFile(t, out, filepath.Join(dir, "BDF-full.npz"))
}

// TestCheckpointInterrupt: a run interrupted (Ctrl-C) saves its state
// there, says how to continue, and the same command continues it to the
// output of the run that was not interrupted, byte for byte.
func TestCheckpointInterrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want, out := filepath.Join(dir, "full.npz"), filepath.Join(dir, "run.npz")
	if code, _, stderr := runCLI(t, "run", "-o", want, "-q"); code != ExitOK {
		t.Fatal(stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = withTestHooks(ctx, &testHooks{step: func(tt float64) {
		if tt > 4000 {
			cancel()
		}
	}})
	code, _, stderr := runCLIContext(t, ctx, "run", "-o", out, "-q")
	if code != ExitInterrupted || !strings.Contains(stderr, "its state at t = ") ||
		!strings.Contains(stderr, "run.ckpt: run the same command again to continue from there") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "run", "-o", out, "-q"); code != ExitOK || !strings.Contains(stderr, "continuing") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	sameFile(t, out, want)
}

// TestSamplingCheckpoint: a run of BDF, whose extension is thinned so
// that sampling takes its steps again, saves the samples made so far
// beside its checkpoint. Killed while it sampled, or interrupted there
// (Ctrl-C), and run again, it continues from the checkpoint with those
// samples and writes the .npz of the run that was not stopped, byte for
// byte; the interrupted run says where its samples are.
func TestSamplingCheckpoint(t *testing.T) {
	t.Parallel()
	args := []string{"-D", "8", "-spectrum", "power:1", "-method", "bdf"}
	dir := t.TempDir()
	want := filepath.Join(dir, "full.npz")
	if code, _, stderr := runCLI(t, append([]string{"run", "-o", want, "-q"}, args...)...); code != ExitOK {
		t.Fatal(stderr)
	}
	T := sidecarOf(t, want)["meta"].(map[string]any)["solver"].(map[string]any)["t_end"].(float64)

	// Killed: the files as they were at the third save of the samples.
	out := filepath.Join(dir, "killed.npz")
	ckpt, sampling := checkpointPath(out), samplingPath(out)
	var atKill map[string][]byte
	saves, saved := 0, false
	ctx := withTestHooks(context.Background(), &testHooks{
		checkpointDue: func(path string, tt float64) bool {
			if path == sampling {
				saves++
				return saves <= 3
			}
			due := !saved && tt > T/2
			saved = saved || due
			return due
		},
		checkpointed: func(path string) {
			if path == sampling && saves == 3 {
				atKill = map[string][]byte{}
				for _, p := range []string{ckpt, sampling} {
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					atKill[p] = b
				}
			}
		},
	})
	if code, _, stderr := runCLIContext(t, ctx, append([]string{"run", "-o", out, "-q"}, args...)...); code != ExitOK || atKill == nil {
		t.Fatalf("exit %d, %d saves of the samples: %s", code, saves, stderr)
	}
	for _, p := range []string{ckpt, sampling} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("the finished run left %s: %v", p, err)
		}
		if err := os.WriteFile(p, atKill[p], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(out)
	code, _, stderr := runCLI(t, append([]string{"run", "-o", out, "-q"}, args...)...)
	if code != ExitOK || !strings.Contains(stderr, "continuing from the checkpoint at t = ") || !strings.Contains(stderr, "samples (") {
		t.Fatalf("the second run: exit %d, stderr %q", code, stderr)
	}
	sameFile(t, out, want)

	// Interrupted while it samples.
	out = filepath.Join(dir, "interrupted.npz")
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	saves, saved = 0, false
	cctx = withTestHooks(cctx, &testHooks{checkpointDue: func(path string, tt float64) bool {
		if path == samplingPath(out) {
			if saves++; saves == 2 {
				cancel()
			}
			return false
		}
		due := !saved && tt > T/2
		saved = saved || due
		return due
	}})
	code, _, stderr = runCLIContext(t, cctx, append([]string{"run", "-o", out, "-q"}, args...)...)
	if code != ExitInterrupted || !strings.Contains(stderr, "samples in "+samplingPath(out)) ||
		!strings.Contains(stderr, "run the same command again to continue from there") {
		t.Fatalf("interrupted: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, append([]string{"run", "-o", out, "-q"}, args...)...); code != ExitOK || !strings.Contains(stderr, "samples (") {
		t.Fatalf("after the interruption: exit %d, stderr %q", code, stderr)
	}
	sameFile(t, out, want)
}

// sameFile fails unless the files hold the same bytes.
func sameFile(t *testing.T, got, want string) {
	t.Helper()
	a, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s differs from %s (%d and %d bytes)", got, want, len(a), len(b))
	}
}

// TestStateEvery: -state-every 5 keeps at most 401 states, at least a
// third of them, at times of the run (state_t, increasing from 0 to the
// end), the first and the last those of a run that keeps every state to
// rounding (y0 and the step's end, against the extension there); the
// same output times, the loss at all of them, interpolated,
// that run's to 10⁻⁵ of its fall (both are within the integrator's error
// of the exact loss, a few 10⁻⁶ of it: flow's TestStateEvery checks the
// states and the values closely), and the figure draws it. Without the
// flag every state is kept up to D = 64 (H = D: n = D(2D+1), 132 MB),
// and every 4th at D = 128 (526 MB), within stateBudget.
func TestStateEvery(t *testing.T) {
	t.Parallel()
	if k64, k128 := spec.DefaultStateEvery(2001, 64*129), spec.DefaultStateEvery(2001, 128*257); k64 != 1 || k128 != 4 {
		t.Errorf("default -state-every: %d at D = 64, %d at D = 128; want 1 and 4", k64, k128)
	}
	dir := t.TempDir()
	all, few := filepath.Join(dir, "all.npz"), filepath.Join(dir, "few.npz")
	if code, _, stderr := runCLI(t, "run", "-D", "6", "-spectrum", "power:1", "-o", all, "-q"); code != ExitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := runCLI(t, "run", "-D", "6", "-spectrum", "power:1", "-o", few, "-q", "-state-every", "5", "-plot"); code != ExitOK {
		t.Fatal(stderr)
	}
	ra, err := npz.Open(all)
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	rf, err := npz.Open(few)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	ta, st := readFloats(t, ra, "t"), readFloats(t, rf, "state_t")
	rows := len(st)
	if rows > 401 || 3*rows < 401 || st[0] != 0 || st[rows-1] != ta[2000] || !slices.IsSorted(st) {
		t.Fatalf("state_t has %d times: %v", rows, st)
	}
	la, lf := readFloats(t, ra, "loss"), readFloats(t, rf, "loss")
	if !slices.Equal(readFloats(t, rf, "t"), ta) || len(lf) != len(la) {
		t.Fatal("t differ")
	}
	for i, l := range la {
		if math.Abs(lf[i]-l) > 1e-5*(la[0]-la[2000]) {
			t.Fatalf("loss[%d] = %v, want %v", i, lf[i], l)
		}
	}
	for _, name := range []string{"v", "K", "key_alignment", "M"} {
		va, vf := readFloats(t, ra, name), readFloats(t, rf, name)
		w := len(va) / len(ta)
		if len(vf) != rows*w || !nearlyEqual(vf[:w], va[:w], 1e-12) || !nearlyEqual(vf[(rows-1)*w:], va[2000*w:], 1e-12) {
			t.Fatalf("%s: %d values, or the first or last state differs", name, len(vf))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "few.png")); err != nil {
		t.Errorf("no figure: %v", err)
	}
	if code, _, stderr := runCLI(t, "run", "-state-every", "0", "-o", few); code != ExitUsage || !strings.Contains(stderr, "-state-every = 0, want K ≥ 1") {
		t.Errorf("-state-every 0: exit %d, %q", code, stderr)
	}
}

// TestSweepCheckpoint: each run of a sweep saves its state beside its
// output; a sweep killed after every run's checkpoint at t = 4000 (past
// the first drop of the paper's example) and run again continues each
// run from it, to the sweep's files byte for byte.
func TestSweepCheckpoint(t *testing.T) {
	t.Parallel()
	specPath := writeSpec(t, `{"seed": [1, 2], "samples": 120}`)
	whole, killed := t.TempDir(), t.TempDir()
	if code, out := sweep(t, context.Background(), "-spec", specPath, "-o", whole, "-j", "2"); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	ctx, atKill := savedOnceAfter(t, 4000)
	if code, out := sweep(t, ctx, "-spec", specPath, "-o", killed, "-j", "2"); code != 0 || len(atKill) != 2 {
		t.Fatalf("exit %d, %d checkpoints\n%s", code, len(atKill), out)
	}
	for path, b := range atKill { // the state each run had when killed, its output not written
		os.WriteFile(path, b, 0o644)
		npz := strings.TrimSuffix(path, ".ckpt") + ".npz"
		os.Remove(npz)
		os.Remove(strings.TrimSuffix(npz, ".npz") + ".json")
	}
	os.Remove(filepath.Join(killed, "index.json"))
	os.Remove(filepath.Join(killed, "index.npz"))
	var before atomic.Bool // a step before the checkpoints: a run started over
	ctx = withTestHooks(context.Background(), &testHooks{step: func(tt float64) {
		if tt <= 4000 {
			before.Store(true)
		}
	}})
	if code, out := sweep(t, ctx, "-spec", specPath, "-o", killed, "-j", "2"); code != 0 || !strings.Contains(out, "(0 reused)") || before.Load() {
		t.Fatalf("the sweep run again: exit %d, a run started over: %v\n%s", code, before.Load(), out)
	}
	for _, f := range []string{"run-0.npz", "run-1.npz", "index.npz"} {
		sameFile(t, filepath.Join(killed, f), filepath.Join(whole, f))
	}
	if left, _ := filepath.Glob(filepath.Join(killed, "*.ckpt")); len(left) > 0 {
		t.Errorf("checkpoints left: %v", left)
	}
}

// TestCheckpointMethods: a method that cannot save its state (Rodas5P,
// Radau5) is refused with -checkpoint, in one line before the run
// starts, by run and train; with -checkpoint left to its default it runs
// without checkpoints.
func TestCheckpointMethods(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run.npz")
	for _, c := range [][]string{{"run", "rodas5p"}, {"run", "radau5"}, {"train", "rodas5p"}, {"train", "radau5"}} {
		code, stdout, stderr := runCLI(t, c[0], "-method", c[1], "-gd=false", "-checkpoint", "10s", "-o", out, "-q")
		if c[0] == "run" {
			code, stdout, stderr = runCLI(t, c[0], "-method", c[1], "-checkpoint", "10s", "-o", out, "-q")
		}
		want := "linattn " + c[0] + ": -checkpoint 10s: -method " + c[1] + " cannot save its state (auto, bdf, rock4, dop853, dp5 or tsit5 can); give -checkpoint 0 to run without checkpoints\n"
		if code != ExitUsage || stderr != want || stdout != "" {
			t.Errorf("%s -method %s: exit %d, %q", c[0], c[1], code, stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote its output: %v", err)
	}
	if code, _, stderr := runCLI(t, "run", "-method", "rodas5p", "-D", "2", "-spectrum", "power:1", "-T", "100", "-o", out, "-q"); code != ExitOK || stderr != "" {
		t.Errorf("the default -checkpoint: exit %d, %q", code, stderr)
	}
}

// nearlyEqual reports whether a and b have the same length and differ by at
// most tol relative to b's largest entry.
func nearlyEqual(a, b []float64, tol float64) bool {
	scale := 0.0
	for _, x := range b {
		scale = max(scale, math.Abs(x))
	}
	for i := range b {
		if len(a) != len(b) || !(math.Abs(a[i]-b[i]) <= tol*scale) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestCheckpointSpacing: a checkpoint is due once the interval has passed
// since the last save and savingShare times as long as that save took, so
// that a run saving a large state spends at most about a tenth of its time
// on it whatever -checkpoint says (issue 45, unclear case 4: -checkpoint
// 1ns had a 2.5 s run take 100 s; below spec.MinCheckpoint it is now
// refused); an interrupted run saves at once.
func TestCheckpointSpacing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{e: &env{ctx: ctx}, every: time.Second}
	for _, tc := range []struct {
		since, cost time.Duration
		due         bool
	}{
		{2 * time.Second, 0, true},
		{500 * time.Millisecond, 0, false},
		{2 * time.Second, time.Second, false}, // the last save took 1 s: not before 9 s
		{10 * time.Second, time.Second, true},
		{30 * time.Second, 5 * time.Second, false},
	} {
		c.last, c.cost = time.Now().Add(-tc.since), tc.cost
		if got := c.due("x.ckpt", 1); got != tc.due {
			t.Errorf("%v after a save of %v: due %v, want %v", tc.since, tc.cost, got, tc.due)
		}
	}
	cancel()
	if !c.due("x.ckpt", 1) {
		t.Error("an interrupted run does not save")
	}
}
