package cli

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

// TestTaskLawRuns: run with a law other than the paper's on the reduced
// layer at -icl 1, the first command a researcher types after reading
// about label noise, exits 0, prints its summary and writes a complete
// output (issue 45: it exited 1 on a NaN test_iwl and wrote nothing):
// test_icl and no in-weight or in-distribution test, which need fixed
// tasks, every number finite, and a summary that says which tests it
// computed. From Go, the run's sidecar through spec (Job.Run,
// Job.RunArrays) gives the same .npz byte for byte, as docs/cli.md says.
func TestTaskLawRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, args := range [][]string{
		{"-noise", "0.1"},
		{"-task-eigs", "2,1,1,1"},
		{"-task-white", "2"},
		{"-model", "merged", "-test-task-spectrum", "power:1", "-noise", "0.05"},
	} {
		out := filepath.Join(dir, fmt.Sprintf("run%d", i), "run.npz")
		code, stdout, stderr := runCLI(t, append([]string{"run", "-o", out}, args...)...)
		if code != ExitOK || !strings.Contains(stdout, "final loss") || !strings.Contains(stdout, "(no in-weight or in-distribution test: they need fixed tasks") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		f, err := output.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if !f.Has(output.TestICL) || f.Has(output.TestIWL) || f.Has(output.TestIDG) {
			t.Errorf("%v: arrays %v; want test_icl without test_iwl and test_idg", args, f.Names())
		}
		for _, name := range f.Names() {
			a, err := f.Read(name)
			if err != nil {
				t.Fatal(err)
			}
			for k, x := range a.Float {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("%v: %s[%d] = %g", args, name, k, x)
				}
			}
		}
		if i > 0 {
			continue
		}
		sp, err := spec.ReadFile(output.SidecarPath(out))
		if err != nil {
			t.Fatal(err)
		}
		job, err := spec.Resolve(sp, spec.RunGroups()...)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := job.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if err := export.WriteNPZ(h, job.RunArrays(tr)); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != f.Sidecar.Meta.OutputSHA256 {
			t.Errorf("%v: Job.RunArrays of the sidecar's job: SHA-256 %s, the run's %s", args, got, f.Sidecar.Meta.OutputSHA256)
		}
	}
}
