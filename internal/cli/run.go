package cli

import (
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

// denseBudget bounds the continuous extension a run keeps so that its
// output is sampled from it rather than from a second pass, which gives
// the same output bit for bit (flow.System.Run): an eighth of the
// available memory, at least flow.DefaultDenseBytes. A D = 16 power-law run
// keeps 0.13 GB and D = 32 1.6 GB; beyond the bound the ROCK4 steps are
// thinned and only runs of explicit steps need the second pass.
func denseBudget() int {
	return max(flow.DefaultDenseBytes, int(spec.AvailableMemory()/8))
}

// samples are states of a run in the original basis, row-major.
type samples struct {
	t, loss, states []float64
}

// grids are the flow's output grids by the name of -grid.
var grids = map[string]flow.Grid{"drops": flow.GridDrops, "lin": flow.GridLinear, "log": flow.GridLog}

// solverSettings are the run settings of the job's -T, -tol, -samples,
// -grid, -method, -rtol and -atol.
func solverSettings(job *spec.Job) flow.RunSettings {
	sp := job.Spec
	return flow.RunSettings{T: sp.T, Tol: sp.Tol, Samples: sp.Samples, Grid: grids[sp.Grid],
		Method: job.Method, RTol: sp.RTol, ATol: sp.ATol, DenseBytes: denseBudget()}
}

func runFlow(e *env, job *spec.Job) error {
	start := time.Now()
	s := job.System
	rs := solverSettings(job)
	steps := 0
	rs.Observer = func(t float64, _ []float64, loss float64) error {
		steps++
		if testHookStep != nil {
			testHookStep(t)
		}
		if e.progress.Due() {
			e.progress.Show(fmt.Sprintf("t = %.6g, loss = %.8g (L_min %.8g), %d steps", t, loss, s.MinLoss(), steps))
		}
		return nil
	}
	tr, err := s.Run(e.ctx, job.Y0, rs)
	if tr == nil {
		return err
	}
	out := &runOutcome{job: job, l0: s.Loss(job.Y0), complete: true, status: tr.Status.String(),
		samples: samples{t: tr.Times, loss: tr.Loss, states: tr.States}, transitions: tr.Transitions, tEnd: tr.FinalT}
	if err != nil {
		what := "the output times reached"
		if tr.Sampling == flow.AtSteps {
			what = "samples at accepted steps of the first pass"
		}
		out.failed(err, what, tr.Status == flow.Interrupted)
	}
	return e.finish(out, tr.Stats, start)
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

func (o *runOutcome) failed(err error, what string, interrupted bool) *runOutcome {
	o.complete, o.err = false, err
	o.status = "incomplete: " + what
	if interrupted {
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
