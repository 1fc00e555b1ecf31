package flow

import (
	"context"
	"fmt"
	"math"

	"github.com/linattn/linattn/ode"
)

// DefaultMethod is Run's integrator: DOP853 while the flow is not stiff (on
// the first plateau), switching to ROCK4 when it is: after the first drop the
// learned heads relax at rates ~aλ³/τ while the dormant ones move slowly,
// and the Jacobian J = −∇²L/(2τ) of this gradient flow is symmetric, so its
// spectrum is real, the case stabilized Chebyshev methods are made for.
var DefaultMethod = ode.Auto

// Default tolerances of Run. The plateau dynamics are driven by dormant heads
// many orders of magnitude smaller than the learned ones, so the absolute
// tolerance is small. The explicit methods' defaults are tighter because
// their steps are set by stability on the plateaus, so tightening costs them
// little; ROCK4's steps are set by accuracy. Both give drop times to better
// than 10⁻⁶ relative (flow's tests against DOP853 at rtol 10⁻¹²).
const (
	DefaultRTol = 1e-8
	DefaultATol = 1e-12

	ExplicitRTol = 1e-10
	ExplicitATol = 1e-14
)

// DefaultTolerances returns Run's tolerances for method m: ExplicitRTol and
// ExplicitATol for an explicit Runge–Kutta pair (*ode.RK), else DefaultRTol
// and DefaultATol.
func DefaultTolerances(m ode.Method) (rtol, atol float64) {
	if _, ok := m.(*ode.RK); ok || m == ode.BDF {
		return ExplicitRTol, ExplicitATol
	}
	return DefaultRTol, DefaultATol
}

// Runs until convergence (RunSettings.T = 0) end when
// L − L_min ≤ Tol·(L(0) − L_min), L_min = System.MinLoss(); a flow that has
// not converged by Horizon·τ sits at a fixed point, and the run fails.
// DefaultMaxSteps bounds the integrator's attempted steps of one run: long
// plateaus take up to h ≈ 10τ per explicit step, so 10⁸ steps cover
// plateaus of 10⁹τ.
const (
	DefaultTol      = 1e-6
	Horizon         = 1e12
	DefaultMaxSteps = 100_000_000
)

// RunSettings controls Run. The zero value runs until converged with the
// default method and tolerances.
type RunSettings struct {
	// T is the final time, > 0; 0 runs until converged (Tol).
	T float64
	// Tol is the convergence criterion of a run with T = 0; 0 means
	// DefaultTol.
	Tol float64
	// Times are the output times, increasing in [0, T]; nil means
	// LinearGrid(T, 1001), or only t = 0 when T = 0 (the end is not known
	// in advance: keep the dense output and Sample the trajectory).
	Times []float64
	// StopTol > 0 ends the run as soon as L − System.MinLoss() ≤ StopTol
	// (with T > 0).
	StopTol float64
	// Method is the integrator; nil means DefaultMethod.
	Method ode.Method
	// RTol and ATol are the integrator's tolerances; zero means
	// DefaultTolerances(Method).
	RTol, ATol float64
	// MaxSteps bounds the integrator's attempted steps; 0 means
	// DefaultMaxSteps.
	MaxSteps int
	// DenseBytes > 0 keeps the continuous extension of the whole run, up
	// to that many bytes, so that Trajectory.Sample can evaluate the
	// solution at any time afterwards (a run outgrowing it keeps none).
	DenseBytes int
	// Observer, if not nil, is called at every accepted step with the time,
	// the state in eigen coordinates (System.FromEigen converts; valid only
	// during the call) and the loss there. An error stops the run.
	Observer func(t float64, y []float64, loss float64) error
}

// Transition is a crossing of the loss through the level half-way between
// consecutive plateau levels: for the separate model the m-th drop, from
// L(M_{m−1}) to L(M_m), m = 1..D (the times t_m of the paper's appendix figure attnS-timedemo); for the
// merged model the single drop from L(M_0) to L*, reported as m = D.
type Transition struct {
	M     int
	Level float64 // (L(M_{m−1}) + L(M_m))/2, or (L(M_0) + L*)/2 for merged
	T     float64
	State []float64 // the state at T, original basis
}

// Trajectory is the result of Run.
type Trajectory struct {
	// Times are the output times reached; States holds the state at each in
	// the original basis, row-major (len(Times) × Len()); Loss the loss.
	Times  []float64
	States []float64
	Loss   []float64

	// Transitions lists the first falling crossing of each half-way level,
	// in time order.
	Transitions []Transition

	// FinalT, Final and FinalLoss describe the end of the run (original
	// basis), which is T unless StopTol or a failure ended it earlier.
	FinalT    float64
	Final     []float64
	FinalLoss float64

	Status ode.Status
	Stats  ode.Stats

	sys   *System
	dense *ode.Solution // eigen coordinates; nil unless kept
}

// Dense reports whether the run kept its continuous extension
// (RunSettings.DenseBytes), so that Sample works.
func (tr *Trajectory) Dense() bool { return tr.dense != nil }

// Sample evaluates the run's continuous extension at the given times in
// [0, FinalT]: the states (original basis, row-major) and the loss. The
// values are those a run with these output times would return, up to the
// step that ends the run, which a run with a final time cuts differently.
func (tr *Trajectory) Sample(times []float64) (states, loss []float64, err error) {
	if tr.dense == nil {
		return nil, nil, fmt.Errorf("flow: Trajectory.Sample: the run kept no dense output (RunSettings.DenseBytes)")
	}
	n := tr.sys.n
	states, loss = make([]float64, len(times)*n), make([]float64, len(times))
	ye := make([]float64, n)
	for i, t := range times {
		if _, err := tr.dense.At(ye, t); err != nil {
			return nil, nil, fmt.Errorf("flow: Trajectory.Sample: %w", err)
		}
		loss[i] = tr.sys.LossEigen(ye)
		tr.sys.FromEigen(states[i*n:(i+1)*n], ye)
	}
	return states, loss, nil
}

// levels returns the half-way levels whose crossings Run records.
func (s *System) levels() []Transition {
	pl := s.Data.PlateauLevels()
	d := s.Data.Dim()
	if s.Model.Kind == Merged {
		return []Transition{{M: d, Level: 0.5 * (pl[0] + pl[d])}}
	}
	out := make([]Transition, d)
	for m := 1; m <= d; m++ {
		out[m-1] = Transition{M: m, Level: 0.5 * (pl[m-1] + pl[m])}
	}
	return out
}

// Run integrates the flow from y0 (original basis) over [0, rs.T], or until
// it converges when rs.T is 0.
func (s *System) Run(ctx context.Context, y0 []float64, rs RunSettings) (*Trajectory, error) {
	if err := s.checkState(y0); err != nil {
		return nil, err
	}
	untilConverged := rs.T == 0
	if untilConverged {
		if err := s.convergenceSettings(y0, &rs); err != nil {
			return nil, err
		}
	}
	times, err := s.checkRun(&rs)
	if err != nil {
		return nil, err
	}
	method := rs.Method
	if method == nil {
		method = DefaultMethod
	}
	rtol, atol := DefaultTolerances(method)
	if rs.RTol != 0 {
		rtol = rs.RTol
	}
	if rs.ATol != 0 {
		atol = rs.ATol
	}
	maxSteps := rs.MaxSteps
	if maxSteps == 0 {
		maxSteps = DefaultMaxSteps
	}
	lossAt := ode.CacheByTime(s.LossEigen)
	levels := s.levels()
	var observer func(*ode.Step) error
	if rs.Observer != nil {
		observer = func(st *ode.Step) error { return rs.Observer(st.T1, st.Y1, lossAt(st.T1, st.Y1)) }
	}
	// The analytic Jacobian serves Rodas5P, alone or inside an Auto method;
	// the other methods never call it.
	prob := ode.Problem{Func: s.Func(), Jac: s.Jac(), Precond: s.Preconditioner(), T0: 0, T1: rs.T, Y0: s.ToEigen(nil, y0), Autonomous: true}
	res, err := ode.Solve(ctx, prob, ode.Settings{
		Method:   method,
		RTol:     rtol,
		ATol:     atol,
		MaxSteps: maxSteps,
		TEval:    times,
		Events:   s.runEvents(levels, rs.StopTol, lossAt),
		// The loss is a Lyapunov function of a gradient flow
		// (dL/dt = −2τ‖dθ/dt‖² ≤ 0), so it crosses each level at most once
		// and needs no sampling inside a step: the step ends suffice, and
		// the continuous extension is built only where a crossing occurs.
		EventSamples: 1,
		Observer:     observer,
		Dense:        rs.DenseBytes > 0,
		DenseLimit:   max(1, rs.DenseBytes/8),
	})
	if res == nil {
		return nil, err
	}
	tr := s.newTrajectory(res, levels)
	if err != nil {
		return tr, fmt.Errorf("flow: run ended at t = %g of %g: %w", res.T, rs.T, err)
	}
	if untilConverged && res.Status != ode.TerminalEvent {
		return tr, fmt.Errorf("flow: not converged by t = %g τ: the loss stays at %.17g, above L_min + tol·(L(0) − L_min) = %.17g; the initial state may be a fixed point",
			Horizon, tr.FinalLoss, s.MinLoss()+rs.StopTol)
	}
	return tr, nil
}

// convergenceSettings turns a run until converged (rs.T = 0) into a run to
// the horizon that stops at L − L_min ≤ Tol·(L(0) − L_min).
func (s *System) convergenceSettings(y0 []float64, rs *RunSettings) error {
	if rs.StopTol != 0 {
		return fmt.Errorf("flow: StopTol = %g with T = 0: a run until converged takes Tol", rs.StopTol)
	}
	tol := rs.Tol
	if tol == 0 {
		tol = DefaultTol
	}
	if !(tol > 0 && tol < 1) {
		return fmt.Errorf("flow: Tol = %g, want a relative tolerance in (0, 1)", rs.Tol)
	}
	gap := s.Loss(y0) - s.MinLoss()
	if !(gap > 0) {
		return fmt.Errorf("flow: the initial loss is already L_min (gap %g); give a final time T", gap)
	}
	if rs.Times == nil {
		rs.Times = []float64{0}
	}
	rs.T, rs.StopTol = Horizon*s.Model.Tau, tol*gap
	return nil
}

// checkState validates Run's initial state.
func (s *System) checkState(y0 []float64) error {
	if len(y0) != s.n {
		return fmt.Errorf("flow: initial state has length %d, want %d", len(y0), s.n)
	}
	for i, v := range y0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("flow: initial state[%d] = %g, want finite values", i, v)
		}
	}
	return nil
}

// checkRun validates Run's settings and returns the output times.
func (s *System) checkRun(rs *RunSettings) ([]float64, error) {
	if !(rs.T > 0) || math.IsInf(rs.T, 0) {
		return nil, fmt.Errorf("flow: T = %g, want a finite final time > 0", rs.T)
	}
	if rs.DenseBytes < 0 {
		return nil, fmt.Errorf("flow: DenseBytes = %d, want ≥ 0", rs.DenseBytes)
	}
	if !(rs.StopTol >= 0) {
		return nil, fmt.Errorf("flow: StopTol = %g, want ≥ 0", rs.StopTol)
	}
	times := rs.Times
	if times == nil {
		times = LinearGrid(rs.T, 1001)
	}
	for i, t := range times {
		if !(t >= 0 && t <= rs.T) || (i > 0 && t < times[i-1]) {
			return nil, fmt.Errorf("flow: Times[%d] = %g, want increasing times in [0, T = %g]", i, t, rs.T)
		}
	}
	return times, nil
}

// runEvents are the falling crossings of the half-way levels and, with
// stopTol > 0, the terminal crossing of L_min + stopTol.
func (s *System) runEvents(levels []Transition, stopTol float64, lossAt func(float64, []float64) float64) []ode.Event {
	events := make([]ode.Event, 0, len(levels)+1)
	for _, lv := range levels {
		level := lv.Level
		events = append(events, ode.Event{
			Func:      func(t float64, y []float64) float64 { return lossAt(t, y) - level },
			Direction: ode.Falling,
		})
	}
	if stopTol > 0 {
		target := s.MinLoss() + stopTol
		events = append(events, ode.Event{
			Func:      func(t float64, y []float64) float64 { return lossAt(t, y) - target },
			Direction: ode.Falling,
			Terminal:  true,
		})
	}
	return events
}

// newTrajectory converts a solve's result to the original basis and picks
// the first crossing of each level.
func (s *System) newTrajectory(res *ode.Result, levels []Transition) *Trajectory {
	tr := &Trajectory{
		Times:     res.TEval,
		States:    make([]float64, len(res.YEval)),
		Loss:      make([]float64, len(res.TEval)),
		FinalT:    res.T,
		Final:     s.FromEigen(nil, res.Y),
		FinalLoss: s.LossEigen(res.Y),
		Status:    res.Status,
		Stats:     res.Stats,
		sys:       s,
		dense:     res.Solution,
	}
	n := s.n
	for i := range res.TEval {
		yi := res.YEval[i*n : (i+1)*n]
		tr.Loss[i] = s.LossEigen(yi)
		s.FromEigen(tr.States[i*n:(i+1)*n], yi)
	}
	seen := make([]bool, len(levels))
	for _, ev := range res.Events {
		if ev.Index < len(levels) && !seen[ev.Index] {
			seen[ev.Index] = true
			lv := levels[ev.Index]
			lv.T = ev.T
			lv.State = s.FromEigen(nil, ev.Y)
			tr.Transitions = append(tr.Transitions, lv)
		}
	}
	return tr
}
