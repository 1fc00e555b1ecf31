package cli

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/internal/spec"
	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/reduced"
)

func init() {
	register(&command{
		Name:      "run",
		UsageLine: "run [flags]",
		Short:     "integrate the population gradient flow; write out/run.npz and its sidecar out/run.json",
		Groups:    []spec.Group{spec.Solver},
		Out:       "out/run.npz",
		Run:       runFlow,
	})
}

// testHookStep, when set by a test, is called at every accepted step;
// testHookStats with the solver statistics of every run.
var (
	testHookStep  func(t float64)
	testHookStats func(ode.Stats)
)

// denseBytes bounds the continuous extension a first pass keeps so that the
// output is sampled from it rather than from a second pass, which gives the
// same output bit for bit. Zero means an eighth of the available memory, at
// least 256 MiB. A D = 16 power-law run keeps 0.13 GB and D = 32 1.6 GB;
// beyond the bound the ROCK4 steps are thinned (ode.Settings.DenseLimit)
// and only runs of explicit steps need the second pass. A variable for the
// tests of both.
var denseBytes = 0

func denseBudget() int {
	if denseBytes > 0 {
		return denseBytes
	}
	return max(256<<20, int(spec.AvailableMemory()/8))
}

// samples are states of a run in the original basis, row-major.
type samples struct {
	t, loss, states []float64
}

// recorder keeps at most max samples of the accepted steps of a run whose
// end is unknown: when full, it drops every other sample and records half
// as often, so the samples stay spread over the whole run.
type recorder struct {
	s             *flow.System
	max, n        int
	stride, count int
	samples
}

func newRecorder(s *flow.System, max int, y0 []float64, l0 float64) *recorder {
	r := &recorder{s: s, max: max, n: s.Len(), stride: 1}
	r.t = append(make([]float64, 0, max), 0)
	r.loss = append(make([]float64, 0, max), l0)
	r.states = append(make([]float64, 0, max*r.n), y0...)
	return r
}

func (r *recorder) add(t float64, yEigen []float64, loss float64) {
	if r.count++; r.count%r.stride != 0 {
		return
	}
	r.push(t, yEigen, loss)
}

// last records the end of the run, whatever the stride.
func (r *recorder) last(t float64, yEigen []float64, loss float64) {
	if r.t[len(r.t)-1] != t {
		r.push(t, yEigen, loss)
	}
}

func (r *recorder) push(t float64, yEigen []float64, loss float64) {
	if len(r.t) == r.max {
		k := 0
		for i := 0; i < len(r.t); i += 2 {
			r.t[k], r.loss[k] = r.t[i], r.loss[i]
			copy(r.states[k*r.n:(k+1)*r.n], r.states[i*r.n:(i+1)*r.n])
			k++
		}
		r.t, r.loss, r.states = r.t[:k], r.loss[:k], r.states[:k*r.n]
		r.stride *= 2
	}
	r.t = append(r.t, t)
	r.loss = append(r.loss, loss)
	r.states = append(r.states, make([]float64, r.n)...)
	r.s.FromEigen(r.states[len(r.states)-r.n:], yEigen)
}

// solverSettings are the run settings of the job's -method, -rtol, -atol.
func solverSettings(job *spec.Job) flow.RunSettings {
	sp := job.Spec
	return flow.RunSettings{Method: job.Method, RTol: sp.RTol, ATol: sp.ATol, Tol: sp.Tol}
}

// outputTimes is the grid of -samples and -grid over [0, T]; path is the
// loss at the accepted steps of a first pass, which the drops grid needs.
func outputTimes(sp *spec.Spec, T float64, path *flow.LossPath) []float64 {
	switch sp.Grid {
	case "log":
		return flow.LogGrid(T*1e-6, T, sp.Samples-1)
	case "drops":
		if sp.Samples >= 4 && path != nil {
			return flow.DropsGrid(T, sp.Samples, *path)
		}
	}
	return flow.LinearGrid(T, sp.Samples)
}

func runFlow(e *env, job *spec.Job) error {
	start := time.Now()
	s, sp := job.System, job.Spec
	out := &runOutcome{job: job, l0: s.Loss(job.Y0), complete: true, status: "reached T"}
	obs := &runObserver{e: e, s: s}
	rs := solverSettings(job)
	rs.Observer = obs.observe
	var stats ode.Stats
	T := sp.T
	var path *flow.LossPath
	if T == 0 || sp.Grid == "drops" {
		final, err := firstPass(e, job, &rs, obs, out, &stats)
		if err != nil || final {
			if err == nil {
				err = e.finish(out, stats, start)
			}
			return err
		}
		T, path = out.tEnd, obs.path
	}
	// The second pass repeats the first (until converged, or to -T) with the
	// output times: it takes the same steps, so its output is, bit for bit,
	// what sampling the first pass's dense output gives.
	obs.rec, obs.path = nil, nil
	rs.T, rs.Times, rs.DenseBytes = sp.T, outputTimes(sp, T, path), 0
	tr, err := s.Run(e.ctx, job.Y0, rs)
	if tr == nil {
		return err
	}
	stats.Add(tr.Stats)
	out.samples = samples{t: tr.Times, loss: tr.Loss, states: tr.States}
	out.transitions, out.tEnd = tr.Transitions, tr.FinalT
	if err != nil {
		out.failed(err, "the output times reached")
	}
	return e.finish(out, stats, start)
}

// runObserver counts the steps and shows progress; during a first pass it
// also records thinned samples (the output should the pass fail) and the
// loss path for the drops grid.
type runObserver struct {
	e       *env
	s       *flow.System
	steps   int
	rec     *recorder
	path    *flow.LossPath
	pathTol float64
}

func (o *runObserver) observe(t float64, y []float64, loss float64) error {
	o.steps++
	if testHookStep != nil {
		testHookStep(t)
	}
	if o.rec != nil {
		o.rec.add(t, y, loss)
		if math.Abs(loss-o.path.Loss[len(o.path.Loss)-1]) >= o.pathTol {
			o.path.T, o.path.Loss = append(o.path.T, t), append(o.path.Loss, loss)
		}
	}
	if o.e.progress.Due() {
		o.e.progress.Show(fmt.Sprintf("t = %.6g, loss = %.8g (L_min %.8g), %d steps", t, loss, o.s.MinLoss(), o.steps))
	}
	return nil
}

// firstPass finds T (integrating until L − L_min ≤ tol·(L(0) − L_min), or
// to -T) and the loss path for the drops grid, keeping the continuous
// extension. It reports whether out is final: the output sampled from the
// extension, or the recorded samples of a pass that failed. Otherwise
// out.tEnd is the end of the run and a second pass must sample it.
func firstPass(e *env, job *spec.Job, rs *flow.RunSettings, obs *runObserver, out *runOutcome, stats *ode.Stats) (final bool, err error) {
	s, sp := job.System, job.Spec
	// The loss path keeps a step only when the loss has moved by pathTol
	// since the last one kept: enough to place the drops grid, and bounded
	// however long the plateaus are.
	obs.rec = newRecorder(s, sp.Samples, job.Y0, out.l0)
	obs.path = &flow.LossPath{T: []float64{0}, Loss: []float64{out.l0}}
	obs.pathTol = 1e-6 * math.Abs(out.l0-s.MinLoss())
	rs.T, rs.Times, rs.DenseBytes = sp.T, []float64{0}, denseBudget()
	if job.Method == ode.BDF {
		// A BDF step keeps its whole Nordsieck history (up to 7 states) and
		// cannot be taken again alone, so its extension is not thinned: at
		// D = 32 it would outgrow any budget and be dropped. Two passes
		// instead, each in memory independent of the steps.
		rs.DenseBytes = 0
	}
	tr, err := s.Run(e.ctx, job.Y0, *rs)
	if tr == nil {
		return false, err
	}
	stats.Add(tr.Stats)
	path := obs.path
	if last := len(path.T) - 1; path.T[last] != tr.FinalT {
		path.T, path.Loss = append(path.T, tr.FinalT), append(path.Loss, tr.FinalLoss)
	}
	out.transitions, out.tEnd = tr.Transitions, tr.FinalT
	if err != nil {
		obs.rec.last(tr.FinalT, s.ToEigen(nil, tr.Final), tr.FinalLoss)
		out.samples = obs.rec.samples
		out.failed(err, "samples at accepted steps of the first pass")
		return true, nil
	}
	T := sp.T
	if T == 0 {
		T = tr.FinalT
		out.status = "converged"
	}
	out.tEnd = T
	if !tr.Dense() {
		return false, nil
	}
	// One pass: the output times are sampled from the kept continuous
	// extension.
	times := outputTimes(sp, T, path)
	states, loss, err := tr.Sample(times)
	if err != nil {
		return false, err
	}
	out.samples = samples{t: times, loss: loss, states: states}
	out.tEnd = tr.FinalT
	return true, nil
}

// runOutcome is what a run produced.
type runOutcome struct {
	job         *spec.Job
	l0          float64
	samples     samples
	transitions []flow.Transition
	tEnd        float64
	complete    bool
	status      string
	err         error
}

func (o *runOutcome) failed(err error, what string) *runOutcome {
	o.complete, o.err = false, err
	o.status = "incomplete: " + what
	var oe *ode.Error
	if errors.As(err, &oe) && oe.Status == ode.Canceled {
		o.status = "interrupted: " + what
	}
	return o
}

// finish writes the arrays and the sidecar, prints the summary and returns
// the run's error.
func (e *env) finish(o *runOutcome, stats ode.Stats, start time.Time) error {
	if testHookStats != nil {
		testHookStats(stats)
	}
	job := o.job
	s, sp := job.System, job.Spec
	arrays := runArrays(s, o.samples, o.transitions)
	m := newMeta(e, job, start)
	m.Complete, m.Status = o.complete, o.status
	if o.err != nil {
		m.Error = o.err.Error()
	}
	m.Solver = &solverMeta{Method: job.Method.Name(), RTol: sp.RTol, ATol: sp.ATol,
		Steps: stats.Steps, FuncEvals: stats.FuncEvals, Rejected: stats.Rejected, TEnd: o.tEnd,
		ByMethod: byMethod(stats.PerMethod), Switches: stats.Switches}
	pred := reduced.PredictDrops(job.System, job.Y0, o.transitions)
	tr := make([]map[string]any, len(o.transitions))
	for i, tn := range o.transitions {
		tr[i] = map[string]any{"m": tn.M, "t": tn.T, "level": tn.Level}
		if !math.IsNaN(pred[i]) {
			tr[i]["t_predicted"] = pred[i]
		}
	}
	final := o.samples.loss[len(o.samples.loss)-1]
	observed := flow.ObservedPlateaus(o.samples.t, o.samples.loss, o.transitions, o.tEnd)
	m.Result = map[string]any{
		"samples": len(o.samples.t), "L0": o.l0, "final_loss": final, "transitions": tr,
		"observed_plateaus": observed,
	}
	if err := e.save(job, arrays, m); err != nil {
		return err
	}
	e.progress.Done()
	printRunSummary(e, o, stats, pred, observed, time.Since(start))
	return o.err
}

// runArrays lays the samples out as arrays with real shapes: t (S), loss
// (S), v (S, H), K and Q (S, H, R, D) or U (S, H, D, D), M (S, D, D),
// key_alignment (S, H, R, D), the data arrays and the transitions.
func runArrays(s *flow.System, smp samples, trans []flow.Transition) []export.Array {
	nt, n := len(smp.t), s.Len()
	d, h, r := s.Dim(), s.Model.H, s.Model.R
	hrd := h * r * d
	v := make([]float64, 0, nt*h)
	mOrig := make([]float64, nt*d*d)
	var u, k, q, ka []float64 // U (merged); K, Q, key alignment (separate)
	if s.Model.Kind == flow.Merged {
		u = make([]float64, 0, nt*(n-h))
	} else {
		k, q, ka = make([]float64, 0, nt*hrd), make([]float64, 0, nt*hrd), make([]float64, 0, nt*hrd)
	}
	ye := make([]float64, n)
	for i := 0; i < nt; i++ {
		y := smp.states[i*n : (i+1)*n]
		v = append(v, y[:h]...)
		s.ToEigen(ye, y) // once per sample, for M and the alignment
		s.MapOfEigenTo(mOrig[i*d*d:(i+1)*d*d], ye)
		if s.Model.Kind == flow.Merged {
			u = append(u, y[h:]...)
			continue
		}
		k = append(k, y[h:h+hrd]...)
		q = append(q, y[h+hrd:]...)
		keys, _ := s.AlignmentEigen(ye)
		ka = append(ka, keys...)
	}
	ms := make([]int64, len(trans))
	ts := make([]float64, len(trans))
	for i, tn := range trans {
		ms[i], ts[i] = int64(tn.M), tn.T
	}
	arrays := []export.Array{
		export.Floats("t", smp.t, nt),
		export.Floats("loss", smp.loss, nt),
		export.Floats("v", v, nt, h),
	}
	if s.Model.Kind == flow.Merged {
		arrays = append(arrays, export.Floats("U", u, nt, h, d, d))
	} else {
		arrays = append(arrays,
			export.Floats("K", k, nt, h, r, d),
			export.Floats("Q", q, nt, h, r, d),
			export.Floats("key_alignment", ka, nt, h, r, d))
	}
	arrays = append(arrays, export.Floats("M", mOrig, nt, d, d))
	arrays = append(arrays, dataArrays(s.Data)...)
	return append(arrays,
		export.Floats("transitions", ts, len(ts)),
		export.Ints("transition_m", ms, len(ms)))
}

func printRunSummary(e *env, o *runOutcome, stats ode.Stats, pred, observed []float64, elapsed time.Duration) {
	w := e.stdout
	job := o.job
	s, sp := job.System, job.Spec
	fmt.Fprintf(w, "linattn run: %s\n", describeJob(job))
	how := fmt.Sprintf("to T = %.6g", o.tEnd)
	if sp.T == 0 {
		how = fmt.Sprintf("until L − L_min ≤ %g·(L(0) − L_min): t = %.6g", sp.Tol, o.tEnd)
	}
	fmt.Fprintf(w, "integrated %s with %s (rtol %g, atol %g): %d steps, %d evaluations, %d rejected\n",
		how, job.Method.Name(), sp.RTol, sp.ATol, stats.Steps, stats.FuncEvals, stats.Rejected)
	if !o.complete {
		fmt.Fprintf(w, "INCOMPLETE (%s): %v\n", o.status, o.err)
	}
	if s.ExpressivityLimited {
		fmt.Fprintf(w, "note: R·H = %d < D: the model learns at most %d eigenvectors; L_min = L(M_%d)\n",
			s.Model.R*s.Model.H, s.Model.R*s.Model.H, s.Model.R*s.Model.H)
	}
	levels := s.Data.PlateauLevels()
	fmt.Fprintf(w, "\n%-8s %-14s %-14s\n", "plateau", "L(M_m)", "observed")
	plateauIndex := func(k int) int { // the level the k-th observed plateau sits on
		if s.Model.Kind == flow.Merged && k > 0 {
			return s.Dim()
		}
		return k
	}
	for k, l := range observed {
		fmt.Fprintf(w, "m=%-6d %-14.8g %-14.8g\n", plateauIndex(k), levels[plateauIndex(k)], l)
	}
	if len(o.transitions) > 0 {
		fmt.Fprintf(w, "\n%-8s %-14s %-14s %s\n", "drop", "t_m observed", "t_m predicted", predictionNote(s))
		missing := false
		for i, tn := range o.transitions {
			p := "—"
			if !math.IsNaN(pred[i]) {
				p = fmt.Sprintf("%.6g", pred[i])
			} else {
				missing = true
			}
			fmt.Fprintf(w, "m=%-6d %-14.6g %-14s\n", tn.M, tn.T, p)
		}
		if missing && s.Model.Kind == flow.Separate && s.Model.R == 1 {
			fmt.Fprintf(w, "—: the 1-D theory started at t_{m−1} gives no estimate for this drop (see linattn reduced)\n")
		}
	}
	final := o.samples.loss[len(o.samples.loss)-1]
	fmt.Fprintf(w, "\nfinal loss %.10g; L_min = %.10g (gap %.3g)\n", final, s.MinLoss(), final-s.MinLoss())
	fmt.Fprintf(w, "wrote %s (%d samples) and %s in %s\n", e.out, len(o.samples.t), sidecarPath(e.out), formatDuration(elapsed))
}

func predictionNote(s *flow.System) string {
	switch {
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
	if sp.Given("init") {
		model += ", init from " + sp.Init
	} else {
		model += fmt.Sprintf(", w_init=%g, seed=%d", sp.WInit, sp.Seed)
	}
	ctx := fmt.Sprintf("N=%d", sp.N)
	switch {
	case sp.Given("nu"):
		ctx = "ν given"
	case sp.Given("ntp-max"):
		ctx = fmt.Sprintf("next-token, Nmax=%d", sp.NTPMax)
	}
	return fmt.Sprintf("%s\ndata: D=%d, λ=%s, eigenvectors %s, %s (ν=%.6g)",
		model, s.Dim(), floats(s.Data.Lambda(), "%.6g"), sp.Eigvecs, ctx, s.Data.Nu())
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.3g s", d.Seconds())
	}
}
