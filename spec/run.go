package spec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/layout"
	"github.com/linattn/linattn/output"
)

// RunGroups are the groups of fields linattn run reads besides the
// problem's: the solver and the law.
func RunGroups() []Group { return []Group{GroupSolver, GroupLaw} }

// ReadFile reads a spec file, or the sidecar of an earlier output (its
// meta is not part of the spec), with its relative input paths taken from
// the file's folder.
func ReadFile(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sp, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sp.Rebase(filepath.Dir(path))
	return sp, nil
}

// ReadJob reads a spec file or the sidecar of an earlier output
// (ReadFile) and resolves it for the command that reads groups (Resolve;
// RunGroups for run): a sidecar's job, ready to run again.
func ReadJob(path string, groups ...Group) (*Job, error) {
	sp, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	job, err := Resolve(sp, groups...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return job, nil
}

// RunSettings returns the flow's settings of the job: -T, -tol,
// -samples, -grid, -method, -rtol, -atol and -state-every where given, and
// zero, the flow's defaults (flow.Plan.Resolve: the exact test losses
// where the layer or the law go beyond the paper's), elsewhere; the
// states within stateBudget unless -state-every is given; and a
// continuous extension of at most an eighth of the available memory
// (DenseBudget).
func (j *Job) RunSettings() flow.RunSettings {
	sp := j.Spec
	grid, _ := gridByName(sp.Grid)
	rs := flow.RunSettings{T: sp.T, Tol: sp.Tol, Samples: sp.Samples, Grid: grid,
		Method: j.Method, RTol: sp.RTol, ATol: sp.ATol, DenseBytes: DenseBudget(),
		StateEvery: sp.StateEvery}
	if !sp.Given("state-every") {
		rs.StateBytes = stateBudget
	}
	return rs
}

// Resolved returns the settings a run of the job resolves
// (flow.System.Settings of RunSettings), before it runs.
func (j *Job) Resolved() flow.Resolved { return j.System.Settings(j.Y0, j.RunSettings()).Resolved() }

// Record sets the solver's fields that the command reads and that were
// not given (-T, -tol, -samples, -grid, -method, -rtol, -atol) to what a
// run resolved, r (flow.Trajectory.Resolved; Job.Resolved before a run), so that the sidecar records the values the run used; Method
// becomes r's.
func (j *Job) Record(r flow.Resolved) {
	record(j.Spec, j.groups, r)
	j.Method = r.Method
}

// Filled returns a copy of the spec with the solver's fields as the flow
// resolves them (Job.Resolved): the spec the job's sidecar records.
func (j *Job) Filled() *Spec {
	sp := j.Spec.Clone()
	record(sp, j.groups, j.Resolved())
	return sp
}

// record sets the fields of sp that groups read and that were not given
// to the run's resolved settings r.
func record(sp *Spec, groups []Group, r flow.Resolved) {
	for _, v := range []struct {
		name string
		set  func()
		ok   bool
	}{
		{"T", func() { sp.T = r.T }, true},
		{"tol", func() { sp.Tol = r.Tol }, r.T == 0},
		{"samples", func() { sp.Samples = r.Samples }, r.Samples > 0},
		{"grid", func() { sp.Grid = gridName(r.Grid) }, true},
		{"method", func() { sp.Method = methodName(r.Method) }, r.Method != nil},
		{"rtol", func() { sp.RTol = r.RTol }, true},
		{"atol", func() { sp.ATol = r.ATol }, true},
	} {
		if f, _ := Lookup(v.name); v.ok && !sp.Given(v.name) && f.ReadBy(groups) {
			v.set()
			sp.Mark(v.name)
		}
	}
}

// stateBudget is the memory the output states of a run take at most
// when -state-every is not given: 2001 states at D = 64 (132 MB) are all
// kept, at D = 128 (526 MB) every 4th, so that the run stays under 1 GB.
const stateBudget = 160 << 20

// DefaultStateEvery is the least K ≥ 1 that keeps the states (n values
// each) of every K-th of samples output times within stateBudget, the
// stride a run takes without -state-every (flow.StateStride).
func DefaultStateEvery(samples, n int) int { return flow.StateStride(samples, n, stateBudget) }

// stateEveryNote is -state-every's default as its usage states it, with
// the largest D at which the separate model's reduced layer at H = D,
// R = 1 (n = D(2D + 1)) keeps every state of the default samples, and
// the stride at D = 128.
func stateEveryNote() string {
	n := func(d int) int { return (flow.Model{Kind: flow.Separate, H: d, R: 1}).StateLen(d) }
	d := 1
	for DefaultStateEvery(flow.DefaultSamples, n(d+1)) == 1 {
		d++
	}
	return ": 1 while the states of all output times take at most " + strconv.Itoa(stateBudget>>20) +
		" MB, else the least K within it; for the separate model's reduced layer at H = D and R = 1, 1 up to D = " +
		strconv.Itoa(d) + " and " + strconv.Itoa(DefaultStateEvery(flow.DefaultSamples, n(128))) + " at D = 128"
}

// gridNames are the -grid names of the flow's output grids, in order.
func gridNames() [3]string { return [3]string{"drops", "lin", "log"} }

// GridByName returns the output grid of -grid (drops, lin or log; the
// flow's default, drops, for any other name).
func GridByName(name string) flow.Grid {
	g, _ := gridByName(name)
	return g
}

// gridByName returns the output grid called name and whether there is one.
func gridByName(name string) (flow.Grid, bool) {
	for i, n := range gridNames() {
		if n == name {
			return flow.GridDrops + flow.Grid(i), true
		}
	}
	return flow.GridDrops, false
}

// gridName returns the -grid name of g.
func gridName(g flow.Grid) string { return gridNames()[g-flow.GridDrops] }

// DenseBudget bounds the continuous extension a run keeps so that its
// output is sampled from it rather than from a second pass, which gives
// the same output bit for bit (flow.System.Run): an eighth of the
// available memory, at least flow.DefaultDenseBytes. A D = 16 power-law run
// keeps 0.13 GB and D = 32 1.6 GB under Auto; beyond the bound the ROCK4
// steps are thinned and only runs of explicit steps need the second pass.
// BDF's runs keep less (flow.BDFKeptStates).
func DenseBudget() int { return denseBudget(AvailableMemory()) }

// denseBudget is DenseBudget with available bytes of memory.
func denseBudget(available float64) int {
	return max(flow.DefaultDenseBytes, int(available/8))
}

// RunArrays returns the arrays linattn run writes for the run tr of the
// job (layout.Run, and the merged model's closed form with white Λ:
// layout.ClosedForm), so that a rerun of a sidecar writes the same .npz,
// byte for byte.
func (j *Job) RunArrays(tr *flow.Trajectory) []export.Array {
	return append(layout.Run(j.System, tr), layout.ClosedForm(j.System, tr.Times, tr.States)...)
}

// Run integrates the job's flow from its initial state with its settings
// (RunSettings), as linattn run does.
func (j *Job) Run(ctx context.Context) (*flow.Trajectory, error) {
	return j.System.Run(ctx, j.Y0, j.RunSettings())
}

// RunFile is the output linattn run writes for the run tr of s that
// returned err, in memory (output.NewFile): the arrays of layout.Run, and
// a sidecar whose spec gives the model (model, D, eigs, H, R, tau, layers
// and tie of a stack) and whose meta is layout.RunMeta's.
func RunFile(s *flow.System, tr *flow.Trajectory, err error) *output.File {
	sp := &Spec{Model: s.Model.Kind, D: s.Dim(), Eigs: s.Data.Lambda(), H: s.Model.H, R: s.Model.R, Tau: s.Model.Tau,
		Layers: s.Model.Depth(), Tie: s.Model.Tied}
	for _, name := range []string{"model", "D", "eigs", "H", "R", "tau", "layers", "tie"} {
		if name != "R" || s.Model.Kind == flow.Separate {
			sp.Mark(name)
		}
	}
	raw, _ := sp.MarshalJSON() // numbers of a valid System: no error
	return output.NewFile(&output.Sidecar{Spec: raw, Meta: layout.RunMeta(s, tr, err)}, layout.Run(s, tr))
}
