package spec

import (
	"context"
	"strings"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/ode"
)

// TestFullLayerLargeD: the merged full layer at D = H = 64 under a task
// mixture (c = 0.5, K = 4), with the default 2001 samples, is accepted in
// 4 GB (issue 30), and its estimate is within a factor 2 of what the run
// holds, counted here from the sizes flow allocates: the state
// n = H + H·D² + 2H·D = 270 400 (flow.Model.StateLen); the states of every
// 26th of the 2001 output times and the last, 78, within 160 MB
// (flow.StateStride: ⌈2001·n·8/160 MiB⌉ = 26), and as many recorded by the
// first pass; BDF (flow.Plan: the full layer under a task law) keeps
// its continuous extension within flow.BDFKeptStates = 2 times the states
// kept, holds the deflation preconditioner's flow.DeflateStepsMerged + 1
// = 61 vectors (its structured deflation is a few MB), GMRES's 2·20 + 1 = 41 (ode's gmres with the deflation's Krylov
// space of 20) and its own 22 (the Nordsieck array's 6, 5 for its dense
// output, 11 of Newton's); the moments (flow.MomentBytes); and linattn's
// arrays, a copy of each state kept with its map M (D²). A memory too
// small is refused naming the memory needed.
func TestFullLayerLargeD(t *testing.T) {
	t.Parallel()
	flags := []string{"model", "merged", "layer", "full", "icl", "0.5", "tasks", "4", "D", "64", "H", "64",
		"spectrum", "power:1", "N", "31"}
	job, err := resolve(parseFlags(t, flags...), 4e9, GroupSolver, GroupLaw)
	if err != nil {
		t.Fatalf("D = 64 full layer: %v", err)
	}
	const n, kept, d = 270400, 78, 64
	vectors := float64(kept + kept + 2*kept + 61 + 41 + 22)
	held := 8*(vectors*n+kept*(n+d*d)) + flow.MomentBytes(flow.FullLayer, d)
	if b := job.MemoryBytes; b > 4e9 || b < held/2 || b > 2*held {
		t.Errorf("D = 64 full layer: estimated %.3g bytes, want below 4 GB and within a factor 2 of the %.3g the run holds", b, held)
	}
	t.Logf("D = 64 full layer: estimated %.3g bytes, the run holds %.3g", job.MemoryBytes, held)
	_, err = resolve(parseFlags(t, flags...), 5e8, GroupSolver, GroupLaw)
	if err == nil || !strings.Contains(err.Error(), "needs an estimated") || !strings.Contains(err.Error(), "500 MB available") {
		t.Errorf("in 500 MB: %v, want a refusal naming the memory needed", err)
	}
}

// TestJobResolvesAsRun: the job resolves the settings its run resolves
// (Job.Resolved, what the sidecar of a train or reduced command records),
// also where the run of the full layer is the reduced flow: under the
// in-context law with label noise, the plan picks BDF for the full layer
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
