package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	gfloats "gonum.org/v1/gonum/floats"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/layout"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/reduced"
	"github.com/linattn/linattn/spec"
)

func init() {
	register(&command{
		Name:      "run",
		UsageLine: "run [flags]",
		Short:     "integrate the population gradient flow; write out/run.npz and its sidecar out/run.json",
		Groups:    []spec.Group{spec.GroupSolver, spec.GroupLaw},
		Out:       "out/run.npz",
		Run:       runFlow,
	})
}

// testHooks are a test's callbacks, carried by the context (withTestHooks)
// rather than package variables, so that such tests run in parallel.
type testHooks struct {
	step    func(t float64) // at every accepted step of run, every step of train
	runDone func(done int)  // after each run of a sweep, with the runs done
	// checkpointDue, if not nil, says when run saves its state instead
	// of the interval; checkpointed is called after each save.
	checkpointDue func(path string, t float64) bool
	checkpointed  func(path string)
}

type testHooksKey struct{}

func withTestHooks(ctx context.Context, h *testHooks) context.Context {
	return context.WithValue(ctx, testHooksKey{}, h)
}

// hooks returns the test hooks of ctx (none: all nil).
func hooks(ctx context.Context) *testHooks {
	if h, ok := ctx.Value(testHooksKey{}).(*testHooks); ok {
		return h
	}
	return &testHooks{}
}

func runFlow(e *env, job *spec.Job) error {
	start := time.Now()
	s := job.System
	rs := job.RunSettings()
	rs.Workers = e.workers
	steps, hook := 0, hooks(e.ctx).step
	rs.Observer = func(t float64, _ []float64, loss float64) error {
		steps++
		if hook != nil {
			hook(t)
		}
		if e.progress.Due() {
			e.progress.Show(fmt.Sprintf("t = %.6g, loss = %.8g (L_min %.8g), %d steps", t, loss, s.MinLoss(), steps))
		}
		return nil
	}
	ck, resume, err := newCheckpointer(e, job)
	if err != nil {
		return err
	}
	if ck != nil {
		e.ckpt, rs.Checkpoint, rs.Resume = ck, ck.hook, resume
	}
	rs.SamplingCheckpoint = func(p *flow.SamplingProgress) error {
		if e.progress.DueSlow() {
			sampled, total := p.Done()
			e.progress.Show(fmt.Sprintf("sampling the output times on the run's extension: %d of %d", sampled, total))
		}
		if ck == nil {
			return nil
		}
		return ck.samplingHook(p)
	}
	if resume != nil {
		if rs.SamplingResume, err = ck.readSampling(); err != nil {
			return err
		}
		samples := ""
		if rs.SamplingResume != nil {
			samples = fmt.Sprintf(", with %d of its %d samples (%s)", ck.sampled, ck.samples, ck.sampling)
		}
		fmt.Fprintf(e.stderr, "linattn %s: continuing from the checkpoint at t = %.6g (%s)%s\n", e.cmd.Name, resume.T, ck.path, samples)
	}
	tr, err := s.Run(e.ctx, job.Y0, rs)
	if tr == nil {
		return err
	}
	job.Record(tr.Resolved) // the sidecar records what the run resolved
	side := &output.Sidecar{Meta: layout.RunMeta(s, tr, err)}
	fillMeta(&side.Meta, job, start)
	pred := predictDrops(s, job.Y0, tr.Transitions)
	observed := tr.Plateaus
	if err := side.Meta.SetResult(runResult(s, job.Y0, tr, pred, observed)); err != nil {
		return err
	}
	arrays := job.RunArrays(tr)
	if err := e.save(arrays, side, job.Spec); err != nil {
		return err
	}
	if tr.Status != flow.Interrupted {
		ck.remove() // the output of a run that ended is written: its state is needed no more
	}
	e.progress.Done()
	printRunSummary(e, job, tr, side.Meta.Status, err, pred, observed, time.Since(start))
	return err
}

// predictDrops is the 1-D theory's estimate of each drop time
// (reduced.PredictDrops), NaN where there is none: under fixed tasks the
// theory does not apply.
func predictDrops(s *flow.System, y0 []float64, trans []flow.Transition) []float64 {
	if !s.Plan().PaperTheory {
		pred := make([]float64, len(trans))
		for i := range pred {
			pred[i] = math.NaN()
		}
		return pred
	}
	return reduced.PredictDrops(s, y0, trans)
}

// runResult is the sidecar's result of the run tr: the drops with their
// predicted times pred, and the plateaus observed.
func runResult(s *flow.System, y0 []float64, tr *flow.Trajectory, pred, observed []float64) output.RunResult {
	res := output.RunResult{L0: s.Loss(y0), FinalLoss: tr.Loss[len(tr.Loss)-1], ObservedPlateaus: observed,
		Samples: len(tr.Times), Transitions: make([]output.TransitionMeta, len(tr.Transitions))}
	for i, tn := range tr.Transitions {
		res.Transitions[i] = output.TransitionMeta{Level: tn.Level, M: tn.M, T: tn.T}
		if !math.IsNaN(pred[i]) {
			res.Transitions[i].TPredicted = &pred[i]
		}
	}
	last := len(tr.Times) - 1
	if tr.TestICL != nil {
		res.FinalTestICL = &tr.TestICL[last]
	}
	if tr.TestIWL != nil {
		res.FinalTestIWL, res.FinalTestIDG = &tr.TestIWL[last], &tr.TestIDG[last]
	}
	return res
}

func printRunSummary(e *env, job *spec.Job, tr *flow.Trajectory, status string, runErr error, pred, observed []float64, elapsed time.Duration) {
	w := e.stdout
	s, sp := job.System, job.Spec
	stats := tr.Stats
	fmt.Fprintf(w, "linattn run: %s\n", describeJob(job))
	fmt.Fprintf(w, "integrated %s with %s (rtol %g, atol %g): %d steps, %d evaluations, %d rejected\n",
		stopRule(s, sp.T, sp.Tol, tr), job.Method.Name(), sp.RTol, sp.ATol, stats.Steps, stats.FuncEvals, stats.Rejected)
	if runErr != nil {
		fmt.Fprintf(w, "INCOMPLETE (%s): %v\n", status, runErr)
	}
	if s.Model.Layer == flow.ReducedLayer && !s.Data.InContext() {
		fmt.Fprintf(w, "note: the reduced layer cannot learn in weight: the blocks that would learn the fixed tasks (v_x, and u_y or k_y) are held at zero; -layer full trains them (docs/math.md, \"The full layer\")\n")
	}
	switch {
	case math.IsNaN(s.MinLoss()) && reachedFloor(s, job.Y0, tr, sp.Tol):
		fmt.Fprintf(w, "note: L_min has no closed form for this layer under this task law, and the run reached L_lb, the least loss over all coefficients, to %g of its fall: here L_min = L_lb\n", endTol(sp.Tol))
	case math.IsNaN(s.MinLoss()) && s.Model.Depth() > 1:
		fmt.Fprintf(w, "note: a stack's least loss is not known: L_lb = σ² is only the floor no prediction passes (every label carries the noise), so the run stops when its loss has settled (docs/math.md, \"Depth\")\n")
		if tr.Status == flow.LossSettled {
			fmt.Fprintf(w, "note: %s; -T runs to a fixed time\n", weightsMotion(s, tr, sp.Tol))
		}
	case math.IsNaN(s.MinLoss()):
		fmt.Fprintf(w, "note: L_min is not known: this layer may not reach L_lb under this task law (%s)\n", expressivityNeed(s.Model.Layer))
		if tr.Status == flow.LossSettled {
			fmt.Fprintf(w, "note: %s; -T runs to a fixed time\n", weightsMotion(s, tr, sp.Tol))
		}
	case s.ExpressivityLimited:
		fmt.Fprintf(w, "note: R·H = %d < D: the model learns at most %d eigenvectors; L_min = L(M_%d)\n",
			s.Model.R*s.Model.H, s.Model.R*s.Model.H, s.Model.R*s.Model.H)
	}
	printPlateaus(w, s, observed)
	if k := len(observed); k > 0 && k < len(tr.Transitions)+1 {
		end := tr.FinalT
		if k < len(tr.Transitions) {
			end = tr.Transitions[k].T
		}
		fmt.Fprintf(w, "note: the output times read the plateaus up to m = %d only: the next, from t = %.6g to %.6g, is shorter than their spacing (more -samples read it)\n",
			plateauIndex(s, k-1), tr.Transitions[k-1].T, end)
	}
	if len(tr.Transitions) > 0 {
		fmt.Fprintf(w, "\n%-8s %-14s %-14s %s\n", "drop", "t_m observed", "t_m predicted", predictionNote(s))
		missing := false
		for i, tn := range tr.Transitions {
			p := "—"
			if !math.IsNaN(pred[i]) {
				p = fmt.Sprintf("%.6g", pred[i])
			} else {
				missing = true
			}
			fmt.Fprintf(w, "m=%-6d %-14.6g %-14s\n", tn.M, tn.T, p)
		}
		if missing && s.Model.Kind == flow.Separate && s.Model.R == 1 && s.Plan().PaperTheory {
			fmt.Fprintf(w, "—: the 1-D theory started at t_{m−1} gives no estimate for this drop (see linattn reduced)\n")
		}
	}
	final := tr.Loss[len(tr.Loss)-1]
	fmt.Fprintf(w, "\nfinal loss %.10g", final)
	if lmin := s.MinLoss(); !math.IsNaN(lmin) {
		fmt.Fprintf(w, "; L_min = %.10g (gap %.3g)", lmin, final-lmin)
	} else if lb := s.LossFloor(); !math.IsNaN(lb) {
		fmt.Fprintf(w, "; L_lb = %.10g (gap %.3g)", lb, final-lb)
	}
	if last := len(tr.Times) - 1; tr.TestICL != nil {
		fmt.Fprintf(w, "; test loss in-context %.6g", tr.TestICL[last])
		if s.Data.HasFixed() {
			fmt.Fprintf(w, ", in-weight %.6g, in-distribution %.6g", tr.TestIWL[last], tr.TestIDG[last])
		} else {
			fmt.Fprint(w, " (no in-weight or in-distribution test: they need fixed tasks, -icl below 1 or -layer full or labelkey)")
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "wrote %s (%d samples) and %s in %s\n", e.out, len(tr.Times), output.SidecarPath(e.out), formatDuration(elapsed))
}

// printPlateaus prints the observed plateau levels, beside L(M_m) for
// in-context data.
func printPlateaus(w io.Writer, s *flow.System, observed []float64) {
	if !s.Plan().PaperTheory {
		fmt.Fprintf(w, "\n%-8s %-14s (read off the run: the plateaus L(M_m) are the theory of the paper's task on one layer alone)\n", "plateau", "observed")
		for k, l := range observed {
			fmt.Fprintf(w, "%-8d %-14.8g\n", k, l)
		}
		return
	}
	levels := s.Data.PlateauLevels()
	fmt.Fprintf(w, "\n%-8s %-14s %-14s\n", "plateau", "L(M_m)", "observed")
	for k, l := range observed {
		m := plateauIndex(s, k)
		fmt.Fprintf(w, "m=%-6d %-14.8g %-14.8g\n", m, levels[m], l)
	}
}

func predictionNote(s *flow.System) string {
	switch {
	case s.Model.Depth() > 1:
		return "(no theory for a stack's drops)"
	case !s.Plan().PaperTheory:
		return "(no theory beyond the paper's task)"
	case s.Model.Kind == flow.Merged:
		return "(reduced.MergedDropTime from the initial state)"
	case s.Model.R == 1:
		return "(1-D theory from t_{m−1}: order of magnitude; see linattn reduced)"
	}
	return "(no 1-D theory for R > 1)"
}

// describeJob is the one-line description of the problem.
func describeJob(job *spec.Job) string {
	s, sp := job.System, job.Spec
	model := fmt.Sprintf("%s key–query attention, H=%d", sp.Model, s.Model.H)
	if s.Model.Kind == flow.Separate {
		model += fmt.Sprintf(", R=%d", s.Model.R)
	}
	model += fmt.Sprintf(", τ=%g", s.Model.Tau)
	if l := s.Model.Depth(); l > 1 {
		model = fmt.Sprintf("a stack of %d layers of %s", l, model)
		if s.Model.Tied {
			model += ", tied"
		}
	}
	if sp.Given("init") {
		model += ", init from " + sp.Init
	} else {
		model += fmt.Sprintf(", w_init=%g, seed=%d", sp.WInit, sp.Seed)
	}
	if s.Model.Layer != flow.ReducedLayer || !s.Data.Standard() { // the layer by name wherever the law is not the paper's
		model += ", " + s.Model.Layer.String() + " layer"
	}
	ctx := fmt.Sprintf("N=%d", sp.N)
	switch {
	case sp.Given("nu"):
		ctx = "ν given"
	case sp.Given("ntp-max"):
		ctx = fmt.Sprintf("next-token, Nmax=%d", sp.NTPMax)
	}
	desc := fmt.Sprintf("%s\ndata: D=%d, λ=%s, eigenvectors %s%s, %s (ν=%.6g)",
		model, s.Dim(), floats(s.Data.Lambda(), "%.6g"), sp.Eigvecs, sortedEigs(sp), ctx, s.Data.Nu())
	return desc + describeLaw(job)
}

// describeLaw describes the law of the labels where it is not the paper's
// (or the layer has fixed tasks for its tests): Ω and Ω_test as given
// (eigenvalues, white or power:α, and their eigenvectors), the fraction c
// in context, the K fixed tasks, drawn (the data seed and the draw) or
// given, and the noise σ².
func describeLaw(job *spec.Job) string {
	s, sp := job.System, job.Spec
	tasks, desc := s.Data.Tasks(), ""
	w := "w ~ N(0, I)"
	if tasks.Cov != nil {
		w = "w ~ N(0, Ω), " + covarianceText(sp, "Ω", "task")
	}
	switch {
	case !tasks.InContext():
		desc += fmt.Sprintf("\ntasks: a fraction c=%g in-context (%s), the others one of K=%d fixed tasks, %s",
			tasks.Fraction(), w, len(tasks.Fixed), taskSource(job))
	case s.Data.HasFixed():
		desc += fmt.Sprintf("\ntasks: every sequence in-context (%s); K=%d fixed tasks, %s, for the in-weight and in-distribution tests",
			w, len(tasks.Fixed), taskSource(job))
	case tasks.Cov != nil:
		desc += "\ntasks: " + w
	}
	if tasks.TestCov != nil {
		desc += "\nin-context test: w ~ N(0, Ω_test), " + covarianceText(sp, "Ω_test", "test-task")
	}
	if tasks.Noise > 0 {
		desc += fmt.Sprintf("\nlabels: y = wᵀx + ε, ε ~ N(0, σ² = %g)", tasks.Noise)
	}
	return desc
}

// taskSource says where the fixed tasks came from: drawn from the data
// seed as -task-draw says, or given by -w0 or -w0-file.
func taskSource(job *spec.Job) string {
	sp := job.Spec
	switch {
	case job.DrawnTasks:
		draw := sp.TaskDraw
		if draw == "" {
			draw = "scaled"
		}
		return fmt.Sprintf("drawn from data seed %d (-task-draw %s)", sp.DataSeed, draw)
	case sp.Given("w0-file"):
		return "given by -w0-file " + sp.W0File
	}
	return "given by -w0"
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.3g s", d.Seconds())
	}
}

// covarianceText names a task covariance (Ω or Ω_test, the fields of
// prefix) as given: C·I, its eigenvalues or power:α (trace D), and its
// eigenvectors but for a white one.
func covarianceText(sp *spec.Spec, name, prefix string) string {
	if sp.Given(prefix + "-white") {
		return name + " = " + sp.Text(prefix+"-white") + "·I"
	}
	vecs := ", eigenvectors " + sp.Text(prefix+"-eigvecs")
	if sp.Given(prefix + "-eigs") {
		return name + "'s eigenvalues " + strings.ReplaceAll(sp.Text(prefix+"-eigs"), ",", " ") + vecs
	}
	return name + "'s eigenvalues " + sp.Text(prefix+"-spectrum") + " (trace D)" + vecs
}

// expressivityNeed says what a layer needs to take every coefficient of
// its features (docs/math.md, "Least loss" and "The label-key layer").
func expressivityNeed(l flow.Layer) string {
	switch l {
	case flow.FullLayer:
		return "the full layer needs H ≥ D+1 and, separate, R = D"
	case flow.LabelKeyLayer:
		return "the label-key layer needs one merged head, or R·H ≥ D separate"
	}
	return "the reduced layer needs R·H ≥ D"
}

// reachedFloor reports whether the run tr from y0 ended within tol of
// its fall to the least loss over all coefficients L_lb: it converged
// (flow.Converged: L − L_lb ≤ tol·(L(0) − L_lb), the rule of a run until
// converged), or, run to -T, ended there (endTol).
func reachedFloor(s *flow.System, y0 []float64, tr *flow.Trajectory, tol float64) bool {
	lb, l0 := s.LossFloor(), s.Loss(y0)
	return tr.Status == flow.Converged || tr.FinalLoss-lb <= endTol(tol)*(l0-lb)
}

// endTol is -tol, or its default (flow.DefaultTol) where a run to -T has
// none.
func endTol(tol float64) float64 {
	if tol > 0 {
		return tol
	}
	return flow.DefaultTol
}

// stopRule says in one phrase where a run ended by rule: at T, or until
// converged, at L_min or, where L_min is not known, at the least loss over
// all coefficients L_lb or when the loss settled (docs/math.md, "Least
// loss"), and at what time.
func stopRule(s *flow.System, T, tol float64, tr *flow.Trajectory) string {
	switch {
	case T > 0:
		return fmt.Sprintf("to T = %.6g", tr.FinalT)
	}
	unfinished := tr.Status == flow.Interrupted || tr.Status == flow.Failed // the next line says why
	if !math.IsNaN(s.MinLoss()) {
		at := "t"
		if unfinished {
			at = "ended before, at t"
		}
		return fmt.Sprintf("until L − L_min ≤ %g·(L(0) − L_min): %s = %.6g", tol, at, tr.FinalT)
	}
	how := "L reached that"
	switch {
	case tr.Status == flow.LossSettled:
		how = "the loss settled"
	case unfinished:
		how = "it ended before either"
	}
	return fmt.Sprintf("until L − L_lb ≤ %g·(L(0) − L_lb), L_lb = %.6g the least loss over all coefficients, or until L moved by less than that over a decade of time [t/10, t]: %s at t = %.6g",
		tol, s.LossFloor(), how, tr.FinalT)
}

// weightsMotion says how far the weights of a run whose loss settled moved
// over its last decade of time [t/10, t]: the norm of the state, and of
// the value weights v, at the first state kept at or after t/10
// (Trajectory.StateTime) and at t. Near a nondegenerate minimum L − L*
// grows as ‖Δθ‖², so weights that settled with the loss to tol have moved
// by about √tol: more is "not the weights".
func weightsMotion(s *flow.System, tr *flow.Trajectory, tol float64) string {
	n, h := s.Len(), s.Model.H
	rows := len(tr.States) / n
	k, last := sort.Search(rows, func(r int) bool { return tr.StateTime(r) >= tr.FinalT/10 }), rows-1
	if k >= last {
		return "the loss settled; the output has no state in [t/10, t] to say whether the weights did"
	}
	a, b := tr.States[k*n:(k+1)*n], tr.States[last*n:(last+1)*n]
	moved := gfloats.Distance(a, b, 2) / gfloats.Norm(b, 2)
	what := "the loss settled, and the weights too"
	if moved > math.Sqrt(tol) {
		what = "the loss settled, not the weights"
	}
	return fmt.Sprintf("%s: from t = %.4g to %.4g, ‖θ‖ went from %.4g to %.4g and ‖v‖ from %.4g to %.4g (‖Δθ‖/‖θ‖ = %.3g)",
		what, tr.StateTime(k), tr.FinalT, gfloats.Norm(a, 2), gfloats.Norm(b, 2), gfloats.Norm(a[:h], 2), gfloats.Norm(b[:h], 2), moved)
}

// sortedEigs says, when -eigs were not given in decreasing order, that
// they were sorted and which column of the eigenvectors each λ kept
// (flow.NewData pairs the d-th eigenvalue given with the d-th column, and
// sorts the pairs): empty otherwise.
func sortedEigs(sp *spec.Spec) string {
	if !sp.Given("eigs") || sort.IsSorted(sort.Reverse(sort.Float64Slice(sp.Eigs))) {
		return ""
	}
	order := make([]int, len(sp.Eigs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return sp.Eigs[order[i]] > sp.Eigs[order[j]] })
	cols := make([]string, len(order))
	for k, i := range order {
		cols[k] = fmt.Sprint(i + 1)
	}
	given := make([]string, len(sp.Eigs))
	for i, l := range sp.Eigs {
		given[i] = fmt.Sprintf("%g", l)
	}
	return fmt.Sprintf(" (λ sorted from -eigs %s, each keeping its column: e_1..e_%d are columns %s)",
		strings.Join(given, ","), len(order), strings.Join(cols, ","))
}
