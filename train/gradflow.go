package train

import (
	"context"
	"fmt"
	"math"

	"github.com/linattn/linattn/ode"
)

// FlowSettings controls Flow.
type FlowSettings struct {
	T     float64   // final time > 0
	Times []float64 // output times, increasing in [0, T]; nil: T only
	// Method is the integrator (nil: ode.Auto, DOP853 switching to ROCK4
	// where the flow is stiff, as package flow); RTol, ATol its tolerances
	// (0: flow.DefaultTolerances' values); MaxSteps bounds its attempts (0:
	// 10⁸).
	Method     ode.Method
	RTol, ATol float64
	MaxSteps   int
	// DenseBytes > 0 keeps the continuous extension, up to that many bytes,
	// for FlowResult.Sample.
	DenseBytes int
	// Levels are loss levels whose first falling crossings are located.
	Levels []float64
	// Observer, if not nil, is called at every accepted step with the
	// time, the weights (valid during the call) and the loss.
	Observer func(t float64, theta []float64, loss float64) error
}

// FlowResult is the outcome of Flow.
type FlowResult struct {
	Times, States, Loss []float64 // output times reached, weights (row-major), loss
	// Crossings[i] is the time of the first falling crossing of
	// FlowSettings.Levels[i], NaN if none.
	Crossings []float64
	FinalT    float64
	Final     []float64
	FinalLoss float64
	Stats     ode.Stats

	tr    *Trainer
	dense *ode.Solution
}

// Flow integrates the gradient flow of the training loss,
// τ dθ/dt = −½ ∂L̂/∂θ, from theta0 with the ode package: the limit of
// gradient descent as η → 0 at fixed data (docs/training.md). With the
// moments path every evaluation costs the same whatever P.
func (t *Trainer) Flow(ctx context.Context, theta0 []float64, fs FlowSettings) (*FlowResult, error) {
	if err := t.checkFlow(theta0, &fs); err != nil {
		return nil, err
	}
	grad := make([]float64, t.Len())
	c := -1 / (2 * t.cfg.Tau)
	f := func(_ float64, y, dydt []float64) {
		t.Gradient(grad, y)
		for i, g := range grad {
			dydt[i] = c * g
		}
	}
	lossAt := ode.CacheByTime(t.Loss)
	events := make([]ode.Event, len(fs.Levels))
	for i, level := range fs.Levels {
		events[i] = ode.Event{Func: func(tt float64, y []float64) float64 { return lossAt(tt, y) - level }, Direction: ode.Falling}
	}
	var observer func(*ode.Step) error
	if fs.Observer != nil {
		observer = func(st *ode.Step) error { return fs.Observer(st.T1, st.Y1, lossAt(st.T1, st.Y1)) }
	}
	res, err := ode.Solve(ctx, ode.Problem{Func: f, T0: 0, T1: fs.T, Y0: theta0, Autonomous: true}, ode.Settings{
		Method: fs.Method, RTol: fs.RTol, ATol: fs.ATol, MaxSteps: fs.MaxSteps, TEval: fs.Times,
		Events: events, EventSamples: 1, Observer: observer,
		Dense: fs.DenseBytes > 0, DenseLimit: max(1, fs.DenseBytes/8),
	})
	if res == nil {
		return nil, err
	}
	out := t.flowResult(res, len(fs.Levels))
	if err != nil {
		return out, fmt.Errorf("train: flow ended at t = %g of %g: %w", res.T, fs.T, err)
	}
	return out, nil
}

func (t *Trainer) checkFlow(theta0 []float64, fs *FlowSettings) error {
	if err := t.checkGD(theta0, &GDSettings{LR: 1, Steps: 1}); err != nil {
		return err
	}
	if !(fs.T > 0) || math.IsInf(fs.T, 0) {
		return fmt.Errorf("train: T = %g, want a finite final time > 0", fs.T)
	}
	if t.cfg.Batch > 0 {
		return fmt.Errorf("train: the gradient flow is of the full training loss; Batch = %d is for SGD", t.cfg.Batch)
	}
	if fs.Method == nil {
		fs.Method = ode.Auto
	}
	if fs.RTol == 0 {
		fs.RTol = 1e-8
	}
	if fs.ATol == 0 {
		fs.ATol = 1e-12
	}
	if fs.MaxSteps == 0 {
		fs.MaxSteps = 100_000_000
	}
	if fs.Times == nil {
		fs.Times = []float64{fs.T}
	}
	return nil
}

func (t *Trainer) flowResult(res *ode.Result, nLevels int) *FlowResult {
	n := t.Len()
	out := &FlowResult{Times: res.TEval, States: res.YEval, Loss: make([]float64, len(res.TEval)),
		FinalT: res.T, Final: res.Y, FinalLoss: t.Loss(res.Y), Stats: res.Stats, tr: t, dense: res.Solution}
	for i := range res.TEval {
		out.Loss[i] = t.Loss(res.YEval[i*n : (i+1)*n])
	}
	out.Crossings = make([]float64, nLevels)
	for i := range out.Crossings {
		out.Crossings[i] = math.NaN()
	}
	for _, ev := range res.Events {
		if math.IsNaN(out.Crossings[ev.Index]) {
			out.Crossings[ev.Index] = ev.T
		}
	}
	return out
}

// Sample evaluates the kept continuous extension at times in [0, FinalT]:
// weights (row-major) and loss.
func (r *FlowResult) Sample(times []float64) (states, loss []float64, err error) {
	if r.dense == nil {
		return nil, nil, fmt.Errorf("train: FlowResult.Sample: no continuous extension was kept (FlowSettings.DenseBytes)")
	}
	n := r.tr.Len()
	states, loss = make([]float64, len(times)*n), make([]float64, len(times))
	for i, tt := range times {
		if _, err := r.dense.At(states[i*n:(i+1)*n], tt); err != nil {
			return nil, nil, fmt.Errorf("train: FlowResult.Sample: %w", err)
		}
		loss[i] = r.tr.Loss(states[i*n : (i+1)*n])
	}
	return states, loss, nil
}
