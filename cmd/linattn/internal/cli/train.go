package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/layout"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
	"github.com/linattn/linattn/train"
)

func init() {
	register(&command{
		Name:      "train",
		UsageLine: "train [flags]",
		Short:     "train the attention layer on P sampled sequences beside the population flow; write out/train.npz and its sidecar",
		Groups:    []spec.Group{spec.GroupTrain, spec.GroupLaw},
		Out:       "out/train.npz",
		Run:       runTrain,
	})
}

// runTrain integrates the exact population flow of the job's layer and
// task law to the training's final time (its drops are the levels the
// training's drops cross), trains on the sampled sequences, and sets the
// two side by side at the training's output times.
func runTrain(e *env, job *spec.Job) error {
	start := time.Now()
	job.Record(job.Resolved()) // the flow's integrator for the three runs below
	cfg := job.TrainConfig()
	if e.progress.on {
		e.progress.Show(fmt.Sprintf("drawing %d training sequences", cfg.P))
	}
	tr, err := train.New(cfg)
	if err != nil {
		return err
	}
	sp := job.Spec
	ck, err := newTrainCheckpoints(e, job)
	if err != nil {
		return err
	}
	if ck != nil {
		e.ckpt = ck.train
	}
	popRS := flow.RunSettings{T: tr.Time(sp.LR, sp.Steps), Method: job.Method, RTol: sp.RTol, ATol: sp.ATol, DenseBytes: spec.DenseBudget(), Workers: e.workers}
	ck.population(&popRS)
	pop, popErr := job.System.Run(e.ctx, job.Y0, popRS)
	levels := job.System.Levels()
	if levels == nil && popErr == nil { // fixed tasks: the exact flow's drops
		for _, tn := range pop.Transitions {
			levels = append(levels, flow.Transition{M: tn.M, Level: tn.Level})
		}
	}
	theta0 := job.Y0
	if cfg.Model.Unrestricted { // its own start; job.Y0 is the flow's beside it
		if theta0, err = cfg.Model.InitUnrestricted(sp.WInit, sp.Seed); err != nil {
			return err
		}
	}
	var res *flow.Trajectory
	hook, resume := ck.training()
	if sp.GD {
		res, err = trainGD(e, job, tr, theta0, levels, hook, resume)
	} else {
		res, err = trainFlow(e, job, tr, theta0, levels, hook, resume)
	}
	if res == nil || len(res.Times) == 0 {
		return err
	}
	err = e.finishTrain(job, tr, res, err, compareFlow(e.ctx, job, pop, popErr, res, e.workers), start)
	if e.saved && e.ctx.Err() == nil {
		ck.remove() // the output of a training that ended is written: its states are needed no more
	}
	return err
}

// trainGD runs gradient descent sampled on the output grid.
func trainGD(e *env, job *spec.Job, tr *train.Trainer, theta0 []float64, levels []flow.Transition, hook func(*train.Checkpoint) error, resume *train.Resume) (*flow.Trajectory, error) {
	sp := job.Spec
	gs := train.GDSettings{LR: sp.LR, Steps: sp.Steps, Samples: sp.Samples, Grid: spec.GridByName(sp.Grid),
		KeepBytes: spec.DenseBudget(), Levels: levels, Checkpoint: hook, Resume: resume, Observer: func(k int, loss float64) error {
			if hook := hooks(e.ctx).step; hook != nil {
				hook(tr.Time(sp.LR, k))
			}
			if e.progress.Due() {
				e.progress.Show(fmt.Sprintf("step %d/%d (t = %.6g), loss = %.8g", k, sp.Steps, tr.Time(sp.LR, k), loss))
			}
			return nil
		}}
	return tr.GD(e.ctx, theta0, gs)
}

// trainFlow integrates the gradient flow of the training loss to
// t = 2ητ·steps, sampled on the output grid as run samples the population
// flow.
func trainFlow(e *env, job *spec.Job, tr *train.Trainer, theta0 []float64, levels []flow.Transition, hook func(*train.Checkpoint) error, resume *train.Resume) (*flow.Trajectory, error) {
	sp := job.Spec
	T := tr.Time(sp.LR, sp.Steps)
	fs := train.FlowSettings{T: T, Samples: sp.Samples, Grid: spec.GridByName(sp.Grid), DenseBytes: spec.DenseBudget(),
		Method: job.Method, RTol: sp.RTol, ATol: sp.ATol, Levels: levels, Checkpoint: hook, Resume: resume,
		Observer: func(t float64, _ []float64, loss float64) error {
			if e.progress.Due() {
				e.progress.Show(fmt.Sprintf("t = %.6g of %.6g, loss = %.8g", t, T, loss))
			}
			return nil
		}}
	return tr.Flow(e.ctx, theta0, fs)
}

// comparison is the population flow from the same initial state at the
// training run's output times: its loss, drops, plateaus and, for the
// full layer or fixed tasks, its exact test losses.
type comparison struct {
	loss, testICL, testIWL, testIDG []float64
	transitions                     []flow.Transition
	plateaus                        []float64
	err                             error
}

// compareFlow samples the population flow pop (integrated to the
// training's final time) at the training's output times, from its
// continuous extension or, without one, a second run to those times on
// workers processors.
func compareFlow(ctx context.Context, job *spec.Job, pop *flow.Trajectory, popErr error, res *flow.Trajectory, workers int) comparison {
	s, sp := job.System, job.Spec
	if popErr != nil {
		return comparison{err: popErr}
	}
	if !(res.FinalT > 0) {
		return comparison{err: errors.New("the training run reached no time > 0")}
	}
	var states []float64
	c := comparison{}
	if pop.Dense() {
		states, c.loss, c.err = pop.Sample(res.Times)
	} else {
		var again *flow.Trajectory
		again, c.err = s.Run(ctx, job.Y0, flow.RunSettings{T: res.FinalT, Times: res.Times, Method: job.Method, RTol: sp.RTol, ATol: sp.ATol, Workers: workers})
		if again != nil {
			states, c.loss = again.States, again.Loss
		}
	}
	if c.err != nil {
		return c
	}
	for _, tn := range pop.Transitions {
		if tn.T <= res.FinalT {
			c.transitions = append(c.transitions, tn)
		}
	}
	c.plateaus = pop.Plateaus
	if s.Plan().PaperTheory {
		c.plateaus = flow.ObservedPlateaus(res.Times, c.loss, c.transitions, res.FinalT)
	}
	// Without test sets and without fixed tasks there is no in-weight
	// test: the flow's test losses are those of train's test sets.
	if s.Plan().Tests.Any() && (sp.Test > 0 || !s.Data.InContext()) {
		n := s.Len()
		ns := len(res.Times)
		c.testICL, c.testIWL, c.testIDG = make([]float64, ns), make([]float64, ns), make([]float64, ns)
		for i := range res.Times {
			c.testICL[i], c.testIWL[i], c.testIDG[i] = s.TestLosses(states[i*n : (i+1)*n])
		}
	}
	return c
}

// plateauIndex is the level m of the k-th observed plateau: k, or D after
// the merged model's single drop.
func plateauIndex(s *flow.System, k int) int {
	if s.Model.Kind == flow.Merged && k > 0 {
		return s.Dim()
	}
	return k
}

// compareTable is the compare array: one row per plateau level, columns
// m, the reference level (L(M_m) for in-context data, m = 0..D; else the
// exact flow's plateaus read off it), the training run's observed plateau,
// the flow's, the training run's drop time t_m and the flow's; −1 where
// there is none.
func compareTable(s *flow.System, observed []float64, trans []flow.Transition, c comparison) []float64 {
	levels := s.Data.PlateauLevels()
	if !s.Plan().PaperTheory {
		levels = c.plateaus
	}
	rows := make([]float64, 0, len(levels)*6)
	for m, l := range levels {
		rows = append(rows, float64(m), l, -1, -1, -1, -1)
	}
	set := func(m, col int, v float64) {
		if m*6 < len(rows) {
			rows[m*6+col] = v
		}
	}
	index := func(k int) int {
		if s.Plan().PaperTheory {
			return plateauIndex(s, k)
		}
		return k
	}
	for k, l := range observed {
		set(index(k), 2, l)
	}
	for k, l := range c.plateaus {
		set(index(k), 3, l)
	}
	for _, tn := range trans {
		set(tn.M, 4, tn.T)
	}
	for _, tn := range c.transitions {
		set(tn.M, 5, tn.T)
	}
	return rows
}

// trainArrays are run's arrays of the weights (the flow's state layout),
// and the training run's own: step, the test losses, the flow's loss and
// test losses, and the comparison.
func trainArrays(job *spec.Job, tr *train.Trainer, res *flow.Trajectory, test [3][]float64, c comparison, table []float64) []export.Array {
	s, sp, ns := job.System, job.Spec, len(res.Times)
	var arrays []export.Array
	if tr.Config().Model.Unrestricted {
		arrays = transformerArrays(job, tr, res, c)
	} else {
		arrays = layout.Run(s, &flow.Trajectory{Times: res.Times, Loss: res.Loss, States: res.States,
			Transitions: res.Transitions, Plateaus: c.plateaus, TestIWL: test[1]})
		arrays = append(arrays, layout.ClosedForm(s, res.Times, res.States)...)
	}
	if sp.GD {
		steps := make([]int64, ns)
		for i, t := range res.Times {
			steps[i] = int64(math.Round(t / tr.Time(sp.LR, 1)))
		}
		arrays = append(arrays, export.Ints(output.Step, steps, ns))
	}
	if test[0] != nil {
		arrays = append(arrays, export.Floats(output.TestICL, test[0], ns))
		if s.Data.HasFixed() { // as layout.Run: the tests fixed tasks define
			arrays = append(arrays, export.Floats(output.TestIWL, test[1], ns), export.Floats(output.TestIDG, test[2], ns))
		}
	}
	if c.err == nil {
		arrays = append(arrays, export.Floats(output.FlowLoss, c.loss, ns))
	}
	if c.testICL != nil {
		arrays = append(arrays, export.Floats(output.FlowTestICL, c.testICL, ns))
		if s.Data.HasFixed() {
			arrays = append(arrays, export.Floats(output.FlowTestIWL, c.testIWL, ns), export.Floats(output.FlowTestIDG, c.testIDG, ns))
		}
	}
	return append(arrays, export.Floats(output.Compare, table, len(table)/6, len(output.CompareColumns())))
}

// transformerArrays are the unrestricted transformer's arrays in place of
// a flow state's: the times and the loss, its weights W_V and W_KQ
// (S, L, H, D+1, D+1), their part in the gradient-descent form (gd_form,
// S × L: train.Model.GDForm), the law, and the drops.
func transformerArrays(job *spec.Job, tr *train.Trainer, res *flow.Trajectory, c comparison) []export.Array {
	m := tr.Config().Model
	ns, n, l, h, d1 := len(res.Times), m.Len(), m.Depth(), m.H, m.D+1
	wv, wkq := make([]float64, 0, ns*n/2), make([]float64, 0, ns*n/2)
	form := make([]float64, 0, ns*l)
	for i := 0; i < ns; i++ {
		theta := res.States[i*n : (i+1)*n]
		for k := 0; k < l; k++ {
			for hd := 0; hd < h; hd++ {
				v, kq := m.TransformerWeights(theta, k, hd)
				wv, wkq = append(wv, v...), append(wkq, kq...)
			}
		}
		form = append(form, m.GDForm(theta)...)
	}
	arrays := []export.Array{
		export.Floats(output.Times, res.Times, ns), export.Floats(output.Loss, res.Loss, ns),
		export.Floats(output.TransformerValue, wv, ns, l, h, d1, d1), export.Floats(output.TransformerKeyQuery, wkq, ns, l, h, d1, d1),
		export.Floats(output.GDForm, form, ns, l),
	}
	arrays = append(arrays, layout.LawWithPlateaus(job.System.Data, c.plateaus)...)
	return append(arrays, layout.Transitions(res.Transitions)...)
}

// testLosses evaluates the test sets at every sample (nil without them).
func testLosses(tr *train.Trainer, res *flow.Trajectory) [3][]float64 {
	if tr.Config().Test == 0 {
		return [3][]float64{}
	}
	n, ns := tr.Len(), len(res.Times)
	icl, iwl, idg := make([]float64, ns), make([]float64, ns), make([]float64, ns)
	for i := range res.Times {
		icl[i], iwl[i], idg[i] = tr.TestLosses(res.States[i*n : (i+1)*n])
	}
	return [3][]float64{icl, iwl, idg}
}

// trainStatus is the sidecar's status of a training run that ended with
// err.
func trainStatus(e *env, sp *spec.Spec, res *flow.Trajectory, err error) string {
	if err == nil {
		return "done"
	}
	what := "the output times reached"
	if sp.GD {
		what = fmt.Sprintf("the weights up to step %d", res.Stats.Steps)
	}
	return layout.Incomplete(e.ctx.Err() != nil) + what
}

func (e *env) finishTrain(job *spec.Job, tr *train.Trainer, res *flow.Trajectory, runErr error, c comparison, start time.Time) error {
	s, sp := job.System, job.Spec
	runErr = diverged(res, runErr, sp.P, tr.Features())
	test := testLosses(tr, res)
	observed := flow.ObservedPlateaus(res.Times, res.Loss, res.Transitions, res.FinalT)
	table := compareTable(s, observed, res.Transitions, c)
	side := newSidecar(e, job, start)
	m := &side.Meta
	m.Complete, m.Status = runErr == nil, trainStatus(e, sp, res, runErr)
	if runErr != nil {
		m.Error = runErr.Error()
	}
	if !sp.GD {
		m.Solver = layout.Solver(res)
	}
	if err := m.SetResult(trainResult(tr, sp.GD, res, test, c, observed)); err != nil {
		return err
	}
	if err := e.save(trainArrays(job, tr, res, test, c, table), side, job.Spec); err != nil {
		return err
	}
	e.progress.Done()
	printTrainSummary(e, job, tr, res, m.Status, runErr, test, table, time.Since(start))
	return runErr
}

func trainResult(tr *train.Trainer, gd bool, res *flow.Trajectory, test [3][]float64, c comparison, observed []float64) map[string]any {
	drops := func(trans []flow.Transition) []map[string]any {
		out := make([]map[string]any, len(trans))
		for i, tn := range trans {
			out[i] = map[string]any{"m": tn.M, "t": tn.T, "level": tn.Level}
		}
		return out
	}
	last := len(res.Loss) - 1
	r := map[string]any{
		"samples": len(res.Times), "L0": res.Loss[0], "final_loss": res.Loss[last], "t_end": res.FinalT,
		"path": tr.Path().String(), "features": tr.Features(), "weights": tr.Len(),
		"transitions": drops(res.Transitions), "observed_plateaus": observed, "compare_columns": output.CompareColumns(),
	}
	if gd {
		r["steps_done"] = res.Stats.Steps
	}
	if test[0] != nil {
		r["final_test_icl"], r["final_test_iwl"], r["final_test_idg"] = test[0][last], test[1][last], test[2][last]
	}
	if c.err != nil {
		r["flow_error"] = c.err.Error()
		return r
	}
	r["flow_transitions"], r["flow_observed_plateaus"] = drops(c.transitions), c.plateaus
	if c.testICL != nil {
		r["flow_final_test_icl"], r["flow_final_test_iwl"] = c.testICL[last], c.testIWL[last]
		if !math.IsNaN(c.testIDG[last]) {
			r["flow_final_test_idg"] = c.testIDG[last]
		}
	}
	return r
}

func printTrainSummary(e *env, job *spec.Job, tr *train.Trainer, res *flow.Trajectory, status string, runErr error, test [3][]float64, table []float64, elapsed time.Duration) {
	w, sp, cfg := e.stdout, job.Spec, tr.Config()
	fmt.Fprintf(w, "linattn train: %s\n", describeJob(job))
	fmt.Fprintf(w, "training: %s attention, %s layer (%d weights), P = %d sequences, path %s (%d features)\n",
		sp.Attention, sp.Layer, cfg.Model.Len(), sp.P, tr.Path(), tr.Features())
	switch {
	case !sp.GD:
		fmt.Fprintf(w, "gradient flow of the training loss to t = %.6g with %s (rtol %g, atol %g): %d steps, %d evaluations\n",
			res.FinalT, job.Method.Name(), sp.RTol, sp.ATol, res.Stats.Steps, res.Stats.FuncEvals)
	case sp.Batch > 0:
		fmt.Fprintf(w, "SGD, batch %d, η = %g: %d of %d steps, t = %.6g\n", sp.Batch, sp.LR, res.Stats.Steps, sp.Steps, res.FinalT)
	default:
		fmt.Fprintf(w, "full-batch gradient descent, η = %g: %d of %d steps, t = %.6g\n", sp.LR, res.Stats.Steps, sp.Steps, res.FinalT)
	}
	if runErr != nil {
		fmt.Fprintf(w, "INCOMPLETE (%s): %v\n", status, runErr)
	}
	ref := "L(M_m)"
	if !job.System.Plan().PaperTheory {
		ref = "flow level"
	}
	fmt.Fprintf(w, "\n%-8s %-12s %-12s %-12s %-12s %-12s\n", "plateau", ref, "train", "flow", "t_m train", "t_m flow")
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
	last := len(res.Loss) - 1
	fmt.Fprintf(w, "\nfinal training loss %.10g", res.Loss[last])
	if test[0] != nil {
		fmt.Fprintf(w, "; test loss in-context %.6g, in-weight %.6g, in-distribution %.6g", test[0][last], test[1][last], test[2][last])
	}
	fmt.Fprintf(w, "\nwrote %s (%d samples) and %s in %s\n", e.out, len(res.Times), output.SidecarPath(e.out), formatDuration(elapsed))
}

// diverged clears the drops of a training run whose loss diverged, whose
// crossings of the plateau levels on the way up or down are no drops of
// learning, and adds a hint to its error when there are no more sequences
// than features: the training loss of so few sequences (its moments of
// rank at most P) can be far steeper than the population's, and a learning
// rate that follows the flow at large P diverges.
func diverged(res *flow.Trajectory, err error, p, features int) error {
	var de *train.DivergedError
	if !errors.As(err, &de) {
		return err
	}
	if res != nil {
		res.Transitions = nil
	}
	if p <= features {
		return fmt.Errorf("%w, or raise -P: %d sequences for %d features give a training loss far steeper than the population's", err, p, features)
	}
	return err
}
