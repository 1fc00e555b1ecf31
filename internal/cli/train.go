package cli

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/internal/spec"
	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/train"
)

func init() {
	register(&command{
		Name:      "train",
		UsageLine: "train [flags]",
		Short:     "train the attention layer on P sampled sequences beside the population flow; write out/train.npz and its sidecar",
		Groups:    []output.Group{output.GroupTrain},
		Out:       "out/train.npz",
		Run:       runTrain,
	})
}

// trainOutcome is what a training run produced, on its output grid.
type trainOutcome struct {
	tr          *train.Trainer
	steps       []int64   // GD: the step of each sample
	t, loss     []float64 // times t/τ and training loss
	states      []float64 // weights θ, row-major
	transitions []flow.Transition
	tEnd        float64
	stepsDone   int
	stats       *ode.Stats // the finite-data flow's (-gd=false)
	complete    bool
	status      string
	err         error
}

func (o *trainOutcome) failed(e *env, err error, what string) {
	o.complete, o.err, o.status = false, err, "incomplete: "+what
	if e.ctx.Err() != nil {
		o.status = "interrupted: " + what
	}
}

func runTrain(e *env, job *spec.Job) error {
	start := time.Now()
	cfg, err := job.TrainConfig()
	if err != nil {
		return err
	}
	if e.progress.on {
		e.progress.Show(fmt.Sprintf("drawing %d training sequences", cfg.P))
	}
	tr, err := train.New(cfg)
	if err != nil {
		return err
	}
	theta0, err := cfg.Model.FromFlow(job.Y0)
	if err != nil {
		return err
	}
	var out *trainOutcome
	if job.Spec.GD {
		out, err = trainGD(e, job, tr, theta0)
	} else {
		out, err = trainFlow(e, job, tr, theta0)
	}
	if out == nil || len(out.t) == 0 {
		return err
	}
	return e.finishTrain(job, out, start)
}

// stepsOf maps output times to gradient-descent steps (t = 2ητ·step),
// increasing and without repeats, in [0, last].
func stepsOf(tr *train.Trainer, lr float64, times []float64, last int) []int {
	unit := tr.Time(lr, 1)
	var out []int
	for _, t := range times {
		k := min(max(int(math.Round(t/unit)), 0), last)
		if len(out) == 0 || k > out[len(out)-1] {
			out = append(out, k)
		}
	}
	return out
}

// trainGD runs gradient descent and samples it on the output grid: the
// steps of -grid lin or log are known in advance; -grid drops needs the
// loss path, so the weights of every step are kept when they fit in the
// dense-output budget, and otherwise the (deterministic) descent is
// repeated with the steps chosen.
func trainGD(e *env, job *spec.Job, tr *train.Trainer, theta0 []float64) (*trainOutcome, error) {
	sp := job.Spec
	gs := train.GDSettings{LR: sp.LR, Steps: sp.Steps, Observer: func(k int, loss float64) error {
		if hook := hooks(e.ctx).step; hook != nil {
			hook(tr.Time(sp.LR, k))
		}
		if e.progress.Due() {
			e.progress.Show(fmt.Sprintf("step %d/%d (t = %.6g), loss = %.8g", k, sp.Steps, tr.Time(sp.LR, k), loss))
		}
		return nil
	}}
	T := tr.Time(sp.LR, sp.Steps)
	drops := sp.Grid == "drops" && sp.Samples >= 4
	gs.KeepAll = drops && float64(sp.Steps+1)*float64(tr.Len())*8 <= float64(denseBudget())
	if !gs.KeepAll { // the lin grid, also a drops run's fallback if it stops
		gs.Keep = stepsOf(tr, sp.LR, grids[sp.Grid].Times(T, sp.Samples, nil), sp.Steps)
	}
	res, err := tr.GD(e.ctx, theta0, gs)
	if res == nil || len(res.Kept) == 0 {
		return nil, err
	}
	out := &trainOutcome{tr: tr, complete: true, status: "done", stepsDone: res.Steps, tEnd: tr.Time(sp.LR, res.Steps)}
	path := flow.LossPath{T: make([]float64, len(res.Loss)), Loss: res.Loss}
	for k := range path.T {
		path.T[k] = tr.Time(sp.LR, k)
	}
	keep, states := res.Kept, res.States
	switch {
	case drops && gs.KeepAll:
		keep = stepsOf(tr, sp.LR, grids[sp.Grid].Times(out.tEnd, sp.Samples, &path), res.Steps)
		states = selectStates(res, keep, tr.Len())
	case drops && err == nil:
		keep = stepsOf(tr, sp.LR, grids[sp.Grid].Times(T, sp.Samples, &path), res.Steps)
		again, err2 := tr.GD(e.ctx, theta0, train.GDSettings{LR: sp.LR, Steps: sp.Steps, Keep: keep})
		if err2 != nil {
			return nil, err2
		}
		states = again.States
	}
	out.setSamples(tr, sp, keep, states, res)
	out.transitions = train.Crossings(path.T, path.Loss, job.System.Levels())
	if sp.Batch > 0 { // the path holds minibatch losses: drops from the training loss
		out.transitions = train.Crossings(out.t, out.loss, job.System.Levels())
	}
	if err != nil {
		out.failed(e, err, fmt.Sprintf("the weights up to step %d", res.Steps))
	}
	return out, nil
}

// selectStates picks the kept weights of the given steps from a descent
// that kept every step.
func selectStates(res *train.GDResult, steps []int, n int) []float64 {
	out := make([]float64, 0, len(steps)*n)
	for _, k := range steps {
		out = append(out, res.States[k*n:(k+1)*n]...)
	}
	return out
}

// setSamples records the kept steps: their times, weights and training
// loss (for SGD the full training loss, evaluated here).
func (o *trainOutcome) setSamples(tr *train.Trainer, sp *output.Spec, keep []int, states []float64, res *train.GDResult) {
	n := tr.Len()
	o.states = states
	for i, k := range keep {
		o.steps = append(o.steps, int64(k))
		o.t = append(o.t, tr.Time(sp.LR, k))
		l := res.Loss[k]
		if sp.Batch > 0 {
			l = tr.Loss(states[i*n : (i+1)*n])
		}
		o.loss = append(o.loss, l)
	}
}

// trainFlow integrates the gradient flow of the training loss to
// t = 2ητ·steps, sampled on the output grid as run samples the population
// flow: from the kept continuous extension, or a second pass.
func trainFlow(e *env, job *spec.Job, tr *train.Trainer, theta0 []float64) (*trainOutcome, error) {
	sp := job.Spec
	T := tr.Time(sp.LR, sp.Steps)
	levels := job.System.Levels()
	fs := train.FlowSettings{T: T, Method: job.Method, RTol: sp.RTol, ATol: sp.ATol}
	for _, lv := range levels {
		fs.Levels = append(fs.Levels, lv.Level)
	}
	path := &flow.LossPath{}
	fs.Observer = func(t float64, _ []float64, loss float64) error {
		path.T, path.Loss = append(path.T, t), append(path.Loss, loss)
		if e.progress.Due() {
			e.progress.Show(fmt.Sprintf("t = %.6g of %.6g, loss = %.8g", t, T, loss))
		}
		return nil
	}
	drops := sp.Grid == "drops" && sp.Samples >= 4
	if drops {
		fs.DenseBytes = denseBudget()
		path.T, path.Loss = []float64{0}, []float64{tr.Loss(theta0)}
	} else {
		fs.Times = grids[sp.Grid].Times(T, sp.Samples, nil)
	}
	res, err := tr.Flow(e.ctx, theta0, fs)
	if res == nil {
		return nil, err
	}
	out := &trainOutcome{tr: tr, complete: true, status: "done", tEnd: res.FinalT, stats: &res.Stats,
		t: res.Times, loss: res.Loss, states: res.States}
	if drops {
		times := grids[sp.Grid].Times(res.FinalT, sp.Samples, path)
		states, loss, err2 := res.Sample(times)
		switch {
		case err2 != nil && err != nil:
			// Stopped, and no continuous extension kept: what was computed
			// is the start and where it stopped (marked incomplete below).
			times, loss = []float64{0, res.FinalT}, []float64{path.Loss[0], res.FinalLoss}
			states = append(append([]float64(nil), theta0...), res.Final...)
		case err2 != nil: // no continuous extension kept: repeat with the times
			fs.Times, fs.DenseBytes, fs.Observer = times, 0, nil
			if res, err2 = tr.Flow(e.ctx, theta0, fs); err2 != nil {
				return nil, err2
			}
			times, states, loss = res.Times, res.States, res.Loss
		}
		out.t, out.loss, out.states = times, loss, states
	}
	for i, lv := range levels {
		if c := res.Crossings[i]; !math.IsNaN(c) {
			lv.T = c
			out.transitions = append(out.transitions, lv)
		}
	}
	sort.SliceStable(out.transitions, func(i, j int) bool { return out.transitions[i].T < out.transitions[j].T })
	if err != nil {
		out.failed(e, err, "the output times reached")
	}
	return out, nil
}

// comparison is the population flow from the same initial state, sampled
// at the training run's output times.
type comparison struct {
	loss        []float64
	transitions []flow.Transition
	plateaus    []float64
	err         error
}

func compareFlow(e *env, job *spec.Job, o *trainOutcome) comparison {
	if !(o.tEnd > 0) {
		return comparison{err: errors.New("the training run reached no time > 0")}
	}
	sp := job.Spec
	tr, err := job.System.Run(e.ctx, job.Y0, flow.RunSettings{T: o.tEnd, Times: o.t, Method: job.Method, RTol: sp.RTol, ATol: sp.ATol})
	if err != nil {
		return comparison{err: err}
	}
	return comparison{loss: tr.Loss, transitions: tr.Transitions,
		plateaus: flow.ObservedPlateaus(o.t, tr.Loss, tr.Transitions, o.tEnd)}
}

// plateauIndex is the level m of the k-th observed plateau: k, or D after
// the merged model's single drop.
func plateauIndex(s *flow.System, k int) int {
	if s.Model.Kind == flow.Merged && k > 0 {
		return s.Dim()
	}
	return k
}

// compareTable is the compare array: one row per plateau level m = 0..D,
// columns m, L(M_m), the training run's observed plateau, the flow's, the
// training run's drop time t_m and the flow's; −1 where there is none.
func compareTable(s *flow.System, observed []float64, trans []flow.Transition, c comparison) []float64 {
	d := s.Dim()
	levels := s.Data.PlateauLevels()
	rows := make([]float64, 0, (d+1)*6)
	for m := 0; m <= d; m++ {
		rows = append(rows, float64(m), levels[m], -1, -1, -1, -1)
	}
	set := func(m, col int, v float64) { rows[m*6+col] = v }
	for k, l := range observed {
		set(plateauIndex(s, k), 2, l)
	}
	for k, l := range c.plateaus {
		set(plateauIndex(s, k), 3, l)
	}
	for _, tn := range trans {
		set(tn.M, 4, tn.T)
	}
	for _, tn := range c.transitions {
		set(tn.M, 5, tn.T)
	}
	return rows
}

// trainArrays are run's arrays of the flow-state part of the weights, and
// the training run's own: step, the extra blocks, the test losses, the
// flow's loss and the comparison.
func trainArrays(job *spec.Job, o *trainOutcome, test [2][]float64, c comparison, table []float64) []export.Array {
	s, cfg := job.System, o.tr.Config()
	m := cfg.Model
	n, nf, ns := m.Len(), m.FlowLen(), len(o.t)
	flowStates := make([]float64, 0, ns*nf)
	var extras []float64
	for i := 0; i < ns; i++ {
		th := o.states[i*n : (i+1)*n]
		flowStates = append(flowStates, m.Flow(th)...)
		extras = append(extras, m.Extras(th)...)
	}
	arrays := output.RunArrays(s, &flow.Trajectory{Times: o.t, Loss: o.loss, States: flowStates, Transitions: o.transitions})
	arrays = append(arrays, closedForm(s, o.t, flowStates)...)
	if o.steps != nil {
		arrays = append(arrays, export.Ints(output.Step, o.steps, ns))
	}
	if m.Layer == flow.FullLayer {
		h, d := m.H, m.D
		split := h * d
		ex := n - nf
		vx, other := make([]float64, 0, ns*split), make([]float64, 0, ns*(ex-split))
		for i := 0; i < ns; i++ {
			vx = append(vx, extras[i*ex:i*ex+split]...)
			other = append(other, extras[i*ex+split:(i+1)*ex]...)
		}
		arrays = append(arrays, export.Floats(output.ValueX, vx, ns, h, d))
		if m.Kind == flow.Merged {
			arrays = append(arrays, export.Floats(output.LabelKQ, other, ns, h, d))
		} else {
			arrays = append(arrays, export.Floats(output.KeyLabel, other, ns, h, m.R))
		}
	}
	if test[0] != nil {
		arrays = append(arrays, export.Floats(output.TestICL, test[0], ns), export.Floats(output.TestIWL, test[1], ns))
	}
	if c.err == nil {
		arrays = append(arrays, export.Floats(output.FlowLoss, c.loss, ns))
	}
	return append(arrays, export.Floats(output.Compare, table, s.Dim()+1, len(output.CompareColumns)))
}

// testLosses evaluates the test sets at every sample (nil without them).
func testLosses(o *trainOutcome) [2][]float64 {
	if o.tr.Config().Test == 0 {
		return [2][]float64{}
	}
	n := o.tr.Len()
	icl, iwl := make([]float64, len(o.t)), make([]float64, len(o.t))
	for i := range o.t {
		icl[i], iwl[i] = o.tr.TestLosses(o.states[i*n : (i+1)*n])
	}
	return [2][]float64{icl, iwl}
}

func (e *env) finishTrain(job *spec.Job, o *trainOutcome, start time.Time) error {
	s, sp := job.System, job.Spec
	test := testLosses(o)
	c := compareFlow(e, job, o)
	observed := flow.ObservedPlateaus(o.t, o.loss, o.transitions, o.tEnd)
	table := compareTable(s, observed, o.transitions, c)
	arrays := trainArrays(job, o, test, c, table)
	side := newSidecar(e, job, start)
	m := &side.Meta
	m.Complete, m.Status = o.complete, o.status
	if o.err != nil {
		m.Error = o.err.Error()
	}
	if o.stats != nil {
		m.Solver = output.NewSolverMeta(job.Method, sp.RTol, sp.ATol, *o.stats, o.tEnd)
	}
	if err := m.SetResult(trainResult(o, test, c, observed)); err != nil {
		return err
	}
	if err := e.save(arrays, side); err != nil {
		return err
	}
	e.progress.Done()
	printTrainSummary(e, job, o, test, table, time.Since(start))
	return o.err
}

func trainResult(o *trainOutcome, test [2][]float64, c comparison, observed []float64) map[string]any {
	cfg := o.tr.Config()
	tr := make([]map[string]any, len(o.transitions))
	for i, tn := range o.transitions {
		tr[i] = map[string]any{"m": tn.M, "t": tn.T, "level": tn.Level}
	}
	last := len(o.loss) - 1
	res := map[string]any{
		"samples": len(o.t), "L0": o.loss[0], "final_loss": o.loss[last], "t_end": o.tEnd,
		"path": o.tr.Path().String(), "features": o.tr.Features(), "weights": cfg.Model.Len(),
		"transitions": tr, "observed_plateaus": observed, "compare_columns": output.CompareColumns,
	}
	if o.steps != nil {
		res["steps_done"] = o.stepsDone
	}
	if test[0] != nil {
		res["final_test_icl"], res["final_test_iwl"] = test[0][last], test[1][last]
	}
	if c.err != nil {
		res["flow_error"] = c.err.Error()
	} else {
		ft := make([]map[string]any, len(c.transitions))
		for i, tn := range c.transitions {
			ft[i] = map[string]any{"m": tn.M, "t": tn.T, "level": tn.Level}
		}
		res["flow_transitions"], res["flow_observed_plateaus"] = ft, c.plateaus
	}
	return res
}

func printTrainSummary(e *env, job *spec.Job, o *trainOutcome, test [2][]float64, table []float64, elapsed time.Duration) {
	w, sp, cfg := e.stdout, job.Spec, o.tr.Config()
	fmt.Fprintf(w, "linattn train: %s\n", describeJob(job))
	fmt.Fprintf(w, "training: %s attention, %s layer (%d weights), P = %d sequences, path %s (%d features)\n",
		sp.Attention, sp.Layer, cfg.Model.Len(), sp.P, o.tr.Path(), o.tr.Features())
	switch {
	case !sp.GD:
		st := o.stats
		fmt.Fprintf(w, "gradient flow of the training loss to t = %.6g with %s (rtol %g, atol %g): %d steps, %d evaluations\n",
			o.tEnd, job.Method.Name(), sp.RTol, sp.ATol, st.Steps, st.FuncEvals)
	case sp.Batch > 0:
		fmt.Fprintf(w, "SGD, batch %d, η = %g: %d of %d steps, t = %.6g\n", sp.Batch, sp.LR, o.stepsDone, sp.Steps, o.tEnd)
	default:
		fmt.Fprintf(w, "full-batch gradient descent, η = %g: %d of %d steps, t = %.6g\n", sp.LR, o.stepsDone, sp.Steps, o.tEnd)
	}
	if !o.complete {
		fmt.Fprintf(w, "INCOMPLETE (%s): %v\n", o.status, o.err)
	}
	fmt.Fprintf(w, "\n%-8s %-12s %-12s %-12s %-12s %-12s\n", "plateau", "L(M_m)", "train", "flow", "t_m train", "t_m flow")
	cell := func(v float64, f string) string {
		if v < 0 {
			return "—"
		}
		return fmt.Sprintf(f, v)
	}
	for m := 0; m*6 < len(table); m++ {
		r := table[m*6 : (m+1)*6]
		if r[2] < 0 && r[3] < 0 && r[4] < 0 && r[5] < 0 {
			continue
		}
		fmt.Fprintf(w, "m=%-6d %-12.8g %-12s %-12s %-12s %-12s\n", m, r[1], cell(r[2], "%.8g"), cell(r[3], "%.8g"), cell(r[4], "%.6g"), cell(r[5], "%.6g"))
	}
	last := len(o.loss) - 1
	fmt.Fprintf(w, "\nfinal training loss %.10g", o.loss[last])
	if test[0] != nil {
		fmt.Fprintf(w, "; test loss in-context %.6g, in-weight %.6g", test[0][last], test[1][last])
	}
	fmt.Fprintf(w, "\nwrote %s (%d samples) and %s in %s\n", e.out, len(o.t), output.SidecarPath(e.out), formatDuration(elapsed))
}
