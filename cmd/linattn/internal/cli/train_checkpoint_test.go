package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// trainArgs are a small training (D = 3, P = 2000, to t = 2·0.5·2000):
// gradient descent, or the gradient flow of the training loss (BDF).
var trainArgs = map[string][]string{
	"GD":   {"-D", "3", "-spectrum", "power:1", "-P", "2000", "-steps", "2000", "-samples", "100"},
	"flow": {"-D", "3", "-spectrum", "power:1", "-P", "2000", "-steps", "2000", "-samples", "100", "-gd=false", "-method", "bdf"},
}

// TestTrainCheckpoint: a training killed after the checkpoints of its
// population flow and of its training at about half their time (the
// files as they were then restored, its output removed, a temporary file
// of a checkpoint half written beside them) and run again continues both
// from them and writes the .npz of the training that was not killed, byte
// for byte, and leaves no checkpoint. A damaged checkpoint, or a run's,
// is refused in one line that says how to start over.
func TestTrainCheckpoint(t *testing.T) {
	t.Parallel()
	for name, args := range trainArgs {
		dir := t.TempDir()
		whole, out := filepath.Join(dir, "whole.npz"), filepath.Join(dir, "killed.npz")
		if code, _, stderr := runCLI(t, append([]string{"train", "-o", whole, "-q"}, args...)...); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		ctx, atKill := savedOnceAfter(t, 1000)
		if code, _, stderr := runCLIContext(t, ctx, append([]string{"train", "-o", out, "-q"}, args...)...); code != ExitOK || len(atKill) != 2 {
			t.Fatalf("%s: exit %d, %d checkpoints saved, want 2: %s", name, code, len(atKill), stderr)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*ckpt*")); len(left) > 0 {
			t.Errorf("%s: the finished training left %v", name, left)
		}
		os.Remove(out)
		os.Remove(strings.TrimSuffix(out, ".npz") + ".json")
		for path, b := range atKill {
			os.WriteFile(path, b, 0o644)
		}
		ckpt := checkpointPath(out)
		os.WriteFile(filepath.Join(dir, "."+filepath.Base(ckpt)+".tmp7"), atKill[ckpt][:50], 0o600)
		code, _, stderr := runCLI(t, append([]string{"train", "-o", out, "-q"}, args...)...)
		if code != ExitOK || !strings.Contains(stderr, "continuing the population flow from its checkpoint at t = ") ||
			!strings.Contains(stderr, "continuing the training from its checkpoint at t = ") {
			t.Fatalf("%s: resumed: exit %d, %q", name, code, stderr)
		}
		sameFile(t, out, whole)
		if left, _ := filepath.Glob(filepath.Join(dir, "*ckpt*")); len(left) > 0 {
			t.Errorf("%s: the resumed training left %v", name, left)
		}
		if name != "GD" {
			continue
		}
		// Refused: damaged, cut short, and the checkpoint of a run.
		damaged := append([]byte(nil), atKill[ckpt]...)
		damaged[len(damaged)/2] ^= 1
		runCkpt := filepath.Join(t.TempDir(), "run.npz")
		killedRun(t, runCkpt, 5000, []string{"-D", "3", "-spectrum", "power:1", "-samples", "100", "-T", "10000"})
		foreign, _ := os.ReadFile(checkpointPath(runCkpt))
		for what, body := range map[string][]byte{"damaged": damaged, "cut": atKill[ckpt][:len(atKill[ckpt])-70], "a run's": foreign} {
			os.WriteFile(ckpt, body, 0o644)
			code, stdout, stderr := runCLI(t, append([]string{"train", "-o", out, "-q"}, args...)...)
			if code == ExitOK || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, ckpt) || !strings.Contains(stderr, "-checkpoint-restart") || stdout != "" {
				t.Errorf("%s checkpoint: exit %d, %q", what, code, stderr)
			}
		}
		if code, _, stderr := runCLI(t, append([]string{"train", "-o", out, "-q", "-checkpoint-restart"}, args...)...); code != ExitOK {
			t.Errorf("-checkpoint-restart: exit %d, %q", code, stderr)
		}
		sameFile(t, out, whole)
	}
}

// TestSweepTrainCheckpoint: a sweep of train runs killed after each run's
// checkpoints at about half its time (the files as they were then, the
// outputs and index removed) and run again continues every run from them,
// to the sweep's files byte for byte, and leaves no checkpoint.
func TestSweepTrainCheckpoint(t *testing.T) {
	t.Parallel()
	specPath := writeSpec(t, `{"D": 3, "spectrum": "power:1", "P": 500, "steps": 1000, "samples": 60, "seed": [1, 2]}`)
	whole, killed := t.TempDir(), t.TempDir()
	if code, out := sweep(t, context.Background(), "-command", "train", "-spec", specPath, "-o", whole, "-j", "2"); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	ctx, atKill := savedOnceAfter(t, 500)
	if code, out := sweep(t, ctx, "-command", "train", "-spec", specPath, "-o", killed, "-j", "2"); code != 0 || len(atKill) != 4 {
		t.Fatalf("exit %d, %d checkpoints, want 4\n%s", code, len(atKill), out)
	}
	for path, b := range atKill {
		os.WriteFile(path, b, 0o644)
	}
	for _, f := range []string{"train-0.npz", "train-0.json", "train-1.npz", "train-1.json", "index.json", "index.npz"} {
		os.Remove(filepath.Join(killed, f))
	}
	var before atomic.Bool // a step before the checkpoints: a training started over
	ctx = withTestHooks(context.Background(), &testHooks{step: func(tt float64) {
		if tt <= 500 {
			before.Store(true)
		}
	}})
	if code, out := sweep(t, ctx, "-command", "train", "-spec", specPath, "-o", killed, "-j", "2"); code != 0 || !strings.Contains(out, "(0 reused)") || before.Load() {
		t.Fatalf("the sweep run again: exit %d, a training started over: %v\n%s", code, before.Load(), out)
	}
	for _, f := range []string{"train-0.npz", "train-1.npz", "index.npz"} {
		sameFile(t, filepath.Join(killed, f), filepath.Join(whole, f))
	}
	if left, _ := filepath.Glob(filepath.Join(killed, "*ckpt*")); len(left) > 0 {
		t.Errorf("checkpoints left: %v", left)
	}
}
