package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/ode"
)

// FlowSettings controls Flow.
type FlowSettings struct {
	T float64 // final time > 0
	// Samples, Grid and Times place the output times on [0, T] as
	// flow.RunSettings's do (0 samples: flow.DefaultSamples): the drops
	// grid is sampled from the continuous extension, kept up to
	// DenseBytes (0: flow.DefaultDenseBytes), or from a second pass.
	Samples    int
	Grid       flow.Grid
	Times      []float64
	DenseBytes int
	// Method is the integrator, RTol and ATol its tolerances, MaxSteps
	// bounds its attempts; zero values are flow's defaults for the model
	// and law (flow.Plan.Resolve: flow.Plan.Method,
	// flow.Tolerances, flow.DefaultMaxSteps).
	Method     ode.Method
	RTol, ATol float64
	MaxSteps   int
	// Levels are the levels whose first falling crossings by the loss are
	// the drops (Trajectory.Transitions), located as events, as
	// flow.System.Levels gives them.
	Levels []flow.Transition
	// Observer, if not nil, is called at every accepted step with the
	// time, the weights (valid during the call) and the loss.
	Observer func(t float64, theta []float64, loss float64) error
	// Checkpoint, if not nil, is called after the accepted steps of the
	// pass Flow begins with (all but the last; a second pass, which the
	// drops grid may need, has none) with the state there, which it may
	// save (Checkpoint.Save; ode.CanCheckpoint says which methods can).
	// An error stops the flow (Interrupted).
	Checkpoint func(*Checkpoint) error
	// Resume, if not nil, continues the flow that saved it
	// (ReadCheckpoint): Flow with the same Trainer, theta0 and settings
	// then returns what the flow that was not stopped returns, bit for
	// bit.
	Resume *Resume
}

// Flow integrates the gradient flow of the training loss,
// τ dθ/dt = −½ ∂L̂/∂θ, from theta0 with the ode package: the limit of
// gradient descent as η → 0 at fixed data (docs/training.md). It returns
// the flow sampled as flow.System.Run samples the population flow, with
// Status ReachedT (Interrupted or Failed on an error, with what was
// computed), and the settings it resolved (flow.Trajectory.Resolved).
// With the moments path every evaluation costs the same whatever P.
func (t *Trainer) Flow(ctx context.Context, theta0 []float64, fs FlowSettings) (tr *flow.Trajectory, err error) {
	rs, err := t.checkFlow(theta0, &fs)
	if err != nil {
		return nil, err
	}
	defer func() {
		if tr != nil {
			tr.Resolved = rs.Resolved()
		}
	}()
	if fs.Times != nil || fs.Grid != flow.GridDrops || fs.Samples < 4 {
		times := fs.Times
		if times == nil {
			times = fs.Grid.Times(fs.T, fs.Samples, nil)
		}
		return t.flowPass(ctx, theta0, fs, times, 0, nil)
	}
	path := &flow.LossPath{T: []float64{0}, Loss: []float64{t.Loss(theta0)}}
	if fs.Resume != nil { // checked by flowPass
		path.T, path.Loss = slices.Clone(fs.Resume.path[0]), slices.Clone(fs.Resume.path[1])
	}
	user := fs.Observer
	fs.Observer = func(tt float64, theta []float64, loss float64) error {
		path.T, path.Loss = append(path.T, tt), append(path.Loss, loss)
		if user != nil {
			return user(tt, theta, loss)
		}
		return nil
	}
	first, err := t.flowPass(ctx, theta0, fs, []float64{0}, fs.DenseBytes, path)
	if first == nil || err != nil {
		return first, err
	}
	times := fs.Grid.Times(first.FinalT, fs.Samples, path)
	if first.Dense() {
		first.Times = times
		first.States, first.Loss, err = t.sample(first, times)
		first.Sampling = flow.FromDense
		return first, err
	}
	fs.Observer = user // no continuous extension kept: again, to the times
	fs.Checkpoint, fs.Resume = nil, nil
	tr, err = t.flowPass(ctx, theta0, fs, times, 0, nil)
	if tr != nil {
		tr.Stats.Add(first.Stats)
	}
	return tr, err
}

// checkFlow validates fs and resolves its zero values as flow does
// (flow.RunSettings.Resolve, for the trainer's model and law), returning
// the flow's settings they map onto.
func (t *Trainer) checkFlow(theta0 []float64, fs *FlowSettings) (flow.RunSettings, error) {
	rs := t.resolve(flow.RunSettings{T: fs.T, Samples: fs.Samples, Grid: fs.Grid, Times: fs.Times, Method: fs.Method,
		RTol: fs.RTol, ATol: fs.ATol, MaxSteps: fs.MaxSteps, DenseBytes: fs.DenseBytes})
	fs.Samples, fs.Method, fs.RTol, fs.ATol, fs.MaxSteps, fs.DenseBytes = rs.Samples, rs.Method, rs.RTol, rs.ATol, rs.MaxSteps, rs.DenseBytes
	if err := t.checkGD(theta0, &GDSettings{LR: 1, Steps: 1}); err != nil {
		return rs, err
	}
	if !(fs.T > 0) || math.IsInf(fs.T, 0) {
		return rs, fmt.Errorf("train: T = %g, want a finite final time > 0", fs.T)
	}
	if t.cfg.Batch > 0 {
		return rs, fmt.Errorf("train: the gradient flow is of the full training loss; Batch = %d is for SGD", t.cfg.Batch)
	}
	if (fs.Checkpoint != nil || fs.Resume != nil) && !ode.CanCheckpoint(fs.Method) {
		return rs, fmt.Errorf("train: %s cannot save its state (Checkpoint, Resume)", fs.Method.Name())
	}
	if fs.Times == nil && fs.Samples < 2 {
		return rs, fmt.Errorf("train: Samples = %d, want S ≥ 2 output times (0: %d)", fs.Samples, flow.DefaultSamples)
	}
	for i, tt := range fs.Times {
		if !(tt >= 0 && tt <= fs.T) || (i > 0 && tt < fs.Times[i-1]) {
			return rs, fmt.Errorf("train: Times[%d] = %g, want increasing times in [0, T = %g]", i, tt, fs.T)
		}
	}
	return rs, nil
}

// resolve fills the zero values of rs with flow's defaults for the
// trainer's model and law (flow.Plan.Resolve).
func (t *Trainer) resolve(rs flow.RunSettings) flow.RunSettings {
	return flow.PlanFor(t.cfg.Model.Model, t.cfg.Data).Resolve(rs)
}

// flowPass integrates once to fs.T, reaching times, keeping the
// continuous extension up to denseBytes (0: none), from fs.Resume if it is
// set, handing its state to fs.Checkpoint with the loss path (nil: a pass
// that records none).
func (t *Trainer) flowPass(ctx context.Context, theta0 []float64, fs FlowSettings, times []float64, denseBytes int, path *flow.LossPath) (*flow.Trajectory, error) {
	var checkpoint func(*ode.Checkpoint) error
	if fs.Checkpoint != nil {
		checkpoint = func(oc *ode.Checkpoint) error {
			c := &Checkpoint{T: oc.T, oc: oc, path: &[2][]float64{}}
			if path != nil {
				c.path = &[2][]float64{path.T, path.Loss}
			}
			return fs.Checkpoint(c)
		}
	}
	var resume *ode.Snapshot
	if fs.Resume != nil {
		var err error
		if resume, err = resumeFlow(fs.Resume, path != nil); err != nil {
			return nil, err
		}
	}
	grad := make([]float64, t.Len())
	c := -1 / (2 * t.cfg.Model.Tau)
	f := func(_ float64, y, dydt []float64) {
		t.Gradient(grad, y)
		for i, g := range grad {
			dydt[i] = c * g
		}
	}
	lossAt := ode.CacheByTime(t.Loss)
	events := make([]ode.Event, len(fs.Levels))
	for i, lv := range fs.Levels {
		level := lv.Level
		events[i] = ode.Event{Func: func(tt float64, y []float64) float64 { return lossAt(tt, y) - level }, Direction: ode.Falling}
	}
	var observer func(*ode.Step) error
	if fs.Observer != nil {
		observer = func(st *ode.Step) error { return fs.Observer(st.T1, st.Y1, lossAt(st.T1, st.Y1)) }
	}
	res, err := ode.Solve(ctx, ode.Problem{Func: f, T0: 0, T1: fs.T, Y0: theta0, Autonomous: true}, ode.Settings{
		Method: fs.Method, RTol: fs.RTol, ATol: fs.ATol, MaxSteps: fs.MaxSteps, TEval: times,
		Events: events, EventSamples: 1, Observer: observer,
		Dense: denseBytes > 0, DenseLimit: max(1, denseBytes/8), Checkpoint: checkpoint, Resume: resume,
	})
	if res == nil {
		return nil, err
	}
	tr := t.flowTrajectory(res, fs.Levels)
	if err != nil {
		tr.Status = flow.Failed
		var oe *ode.Error
		if errors.As(err, &oe) && oe.Status.Interrupted() {
			tr.Status = flow.Interrupted
		}
		if k := len(tr.Times); k == 0 || tr.Times[k-1] < res.T { // what was computed ends where it stopped
			tr.Times = append(tr.Times, res.T)
			tr.States = append(tr.States, res.Y...)
			tr.Loss = append(tr.Loss, tr.FinalLoss)
		}
		return tr, fmt.Errorf("train: flow ended at t = %g of %g: %w", res.T, fs.T, err)
	}
	return tr, nil
}

func (t *Trainer) flowTrajectory(res *ode.Result, levels []flow.Transition) *flow.Trajectory {
	n := t.Len()
	tr := flow.NewTrajectory(res.Solution)
	tr.Times, tr.States, tr.Loss = res.TEval, res.YEval, make([]float64, len(res.TEval))
	tr.FinalT, tr.Final, tr.FinalLoss, tr.Stats, tr.Status = res.T, res.Y, t.Loss(res.Y), res.Stats, flow.ReachedT
	for i := range res.TEval {
		tr.Loss[i] = t.Loss(res.YEval[i*n : (i+1)*n])
	}
	seen := make([]bool, len(levels))
	for _, ev := range res.Events {
		if !seen[ev.Index] {
			seen[ev.Index] = true
			lv := levels[ev.Index]
			lv.T, lv.State = ev.T, ev.Y
			tr.Transitions = append(tr.Transitions, lv)
		}
	}
	return tr
}

// sample evaluates the kept continuous extension of tr at times in
// [0, FinalT]: weights (row-major) and loss.
func (t *Trainer) sample(tr *flow.Trajectory, times []float64) (states, loss []float64, err error) {
	n := t.Len()
	states, loss = make([]float64, len(times)*n), make([]float64, len(times))
	for i, tt := range times {
		if err := tr.At(states[i*n:(i+1)*n], tt); err != nil {
			return nil, nil, fmt.Errorf("train: %w", err)
		}
		loss[i] = t.Loss(states[i*n : (i+1)*n])
	}
	return states, loss, nil
}
