package cli

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSweepJobsSameBytes: a sweep run on one worker and on four (with
// four processors, so that the runs and the goroutines inside them share
// them) writes the same index and run files, byte for byte: the runs do
// not depend on how many run beside them. .ci/race runs it with the race
// detector.
func TestSweepJobsSameBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	specPath := writeSpec(t, sweepSpec)
	one, four := t.TempDir(), t.TempDir()
	for _, c := range []struct{ dir, j string }{{one, "1"}, {four, "4"}} {
		if code, out := sweep(t, context.Background(), "-spec", specPath, "-o", c.dir, "-j", c.j); code != 0 || !strings.Contains(out, "8 complete") {
			t.Fatalf("-j %s: exit %d\n%s", c.j, code, out)
		}
	}
	sameFiles(t, one, four, 8)
	if names, _ := filepath.Glob(filepath.Join(four, "run-*.npz")); len(names) != 8 {
		t.Errorf("%d run files, want 8", len(names))
	}
}
