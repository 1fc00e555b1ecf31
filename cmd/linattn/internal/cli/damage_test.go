package cli

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedCheckpoint: a run's checkpoint damaged at 100 random byte
// offsets (a random byte there, or the file cut there) is refused each
// time, in one line naming the file, before anything runs: the header,
// the spec's digest and the SHA-256 of the state catch every change.
func TestDamagedCheckpoint(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run.npz")
	args := []string{"-D", "3", "-spectrum", "power:1", "-samples", "100", "-T", "10000"}
	killedRun(t, out, 10000, args)
	ckpt := checkpointPath(out)
	good, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(46, 1))
	for i := 0; i < 100; i++ {
		bad := append([]byte(nil), good...)
		off := rng.IntN(len(bad))
		if i%10 == 9 {
			bad = bad[:off]
		} else {
			bad[off] ^= byte(1 + rng.IntN(255))
		}
		os.WriteFile(ckpt, bad, 0o644)
		code, stdout, stderr := runCLI(t, append([]string{"run", "-o", out, "-q"}, args...)...)
		if code == ExitOK || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "checkpoint "+ckpt+" ") {
			t.Fatalf("damage %d at byte %d of %d: exit %d, %q", i, off, len(bad), code, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("damage %d at byte %d: the refused run wrote its output", i, off)
		}
	}
}

// TestDamagedSidecar: an output's sidecar damaged at 100 random byte
// offsets either still reads (the damage fell in a value: the JSON holds,
// and the .npz matches its recorded SHA-256) and plot draws the output, or
// plot refuses it in one line; never a panic or a stack.
func TestDamagedSidecar(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "run.npz")
	if code, _, stderr := runCLI(t, "run", "-D", "2", "-spectrum", "power:1", "-samples", "50", "-o", out, "-q"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	side := strings.TrimSuffix(out, ".npz") + ".json"
	good, err := os.ReadFile(side)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(46, 2))
	refused := 0
	for i := 0; i < 100; i++ {
		bad := append([]byte(nil), good...)
		off := rng.IntN(len(bad))
		if i%10 == 9 {
			bad = bad[:off]
		} else {
			bad[off] = byte(rng.IntN(256))
		}
		os.WriteFile(side, bad, 0o644)
		code, _, stderr := runCLI(t, "plot", out, "-o", filepath.Join(dir, "fig.svg"))
		if code != ExitOK {
			refused++
			if strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "goroutine") {
				t.Fatalf("damage %d at byte %d: exit %d, %q", i, off, code, stderr)
			}
		}
	}
	if refused < 50 {
		t.Errorf("only %d of 100 damaged sidecars refused", refused)
	}
	t.Logf("%d of 100 damaged sidecars refused, the others read", refused)
}
