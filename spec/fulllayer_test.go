package spec

import (
	"context"
	"strings"
	"testing"

	"github.com/linattn/linattn/ode"
)

// TestFullLayerLargeD: the full layer at D = H = 64 under a task law is
// accepted (its moments are contracted, not formed: flow.FullLayerBytes),
// and a job too large for the memory still names the memory it needs.
// The estimate is dominated by the samples: 201 samples of the state
// n = H + H·D² + 2H·D = 270 400 take 0.87 GB, and BDF's deflation
// preconditioner DeflateSteps + 1 = 91 more states, 0.20 GB.
func TestFullLayerLargeD(t *testing.T) {
	flags := []string{"model", "merged", "layer", "full", "icl", "0.5", "tasks", "4", "D", "64", "H", "64",
		"spectrum", "power:1", "N", "31", "samples", "201"}
	job, err := resolve(parseFlags(t, flags...), 4e9, GroupSolver, GroupLaw)
	if err != nil {
		t.Fatalf("D = 64 full layer: %v", err)
	}
	if b := job.MemoryBytes; b < 0.9e9 || b > 1.2e9 {
		t.Errorf("D = 64 full layer, 201 samples: estimated %.3g bytes, want about 1.07 GB", b)
	}
	_, err = resolve(parseFlags(t, append(flags[:len(flags)-2], "samples", "2001")...), 4e9, GroupSolver, GroupLaw)
	if err == nil || !strings.Contains(err.Error(), "needs an estimated 9.0") || !strings.Contains(err.Error(), "4 GB available") {
		t.Errorf("2001 samples in 4 GB: %v, want a refusal naming the memory needed", err)
	}
}

// TestJobResolvesAsRun: the job resolves the settings its run resolves
// (Job.Resolved, what the sidecar of a train or reduced command records),
// also where the run of the full layer is the reduced flow: under the
// in-context law with label noise, MethodFor picks BDF for the full layer
// but the run integrates the reduced layer, with Auto.
func TestJobResolvesAsRun(t *testing.T) {
	t.Parallel()
	job, err := resolve(parseFlags(t, "layer", "full", "noise", "0.1", "T", "500", "samples", "11"), 1e12, RunGroups()...)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := job.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := job.Resolved(); got != tr.Resolved || got.Method.Name() != ode.Auto.Name() {
		t.Errorf("the job resolves %+v (%s), its run %+v (%s), want Auto", got, got.Method.Name(), tr.Resolved, tr.Resolved.Method.Name())
	}
}
