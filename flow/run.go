package flow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/linattn/linattn/ode"
)

// Default tolerances of Run, tighter than ode's general-purpose defaults
// (ode.DefaultRTol 10⁻⁶, ode.DefaultATol 10⁻⁹, for solves of order-one
// states): the plateau dynamics are driven by dormant heads many orders of
// magnitude smaller than the learned ones, so the absolute tolerance is
// small, and the drop times, set by those heads' slow growth, need a
// relative one of 10⁻⁸ to be right to 10⁻⁶. The explicit methods' defaults
// are tighter still because their steps are set by stability on the
// plateaus, so tightening costs them little; ROCK4's steps are set by
// accuracy. Both give drop times to better than 10⁻⁶ relative
// (TestStiffMethodsMatchDOP853 against DOP853 at rtol 10⁻¹²; docs/math.md,
// "Stiff integration").
const (
	DefaultRTol = 1e-8
	DefaultATol = 1e-12

	ExplicitRTol = 1e-10
	ExplicitATol = 1e-14
)

// Tolerances returns Run's tolerances for a flow of model m by method:
// ExplicitRTol and ExplicitATol for an explicit Runge–Kutta pair and for
// BDF but on the full layer, else DefaultRTol and DefaultATol. The full
// layer's BDF solves by GMRES, whose inexact corrections bound its steps
// on the long final approach: there the tighter pair cost twice the
// steps for drop times already right to 10⁻⁸. Merged full layer,
// H = D = 16, c = 0.5, K = 4, power-law Λ, until converged: the drop at
// 55.08899779 with rtol 10⁻¹², 55.08899777 at 10⁻¹⁰ (atol 10⁻¹⁴; 4 801
// steps, 8.3 s of CPU) and 55.08899838 at 10⁻⁸ (10⁻¹²; 2 363 steps,
// 6.0 s), the final loss equal to ten digits.
func Tolerances(m Model, method ode.Method) (rtol, atol float64) {
	switch f := method.Family(); {
	case f == ode.Explicit, f == ode.Multistep && m.Layer != FullLayer:
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
// default method and tolerances and returns what linattn run writes: the
// loss and the states at DefaultSamples times of the drops grid.
type RunSettings struct {
	// T is the final time, > 0; 0 runs until converged (Tol).
	T float64
	// Tol is the convergence criterion of a run with T = 0; 0 means
	// DefaultTol.
	Tol float64
	// Samples is the number S ≥ 2 of output times Run places on Grid when
	// Times is nil; 0 means DefaultSamples.
	Samples int
	// Grid places them (GridDrops, the zero value; GridLinear; GridLog).
	Grid Grid
	// Times, if not nil, are the output times instead, increasing in
	// [0, T] (T > 0; with T = 0, times up to the end of the run), reached
	// in one pass.
	Times []float64
	// StopTol > 0 ends the run as soon as L − System.MinLoss() ≤ StopTol
	// (with T > 0; Status Stopped).
	StopTol float64
	// Method is the integrator; nil means the plan's method for the model Run
	// integrates (System.Settings). Run resolves every zero default so
	// (Resolve) and reports what it ran with in Trajectory.Resolved.
	Method ode.Method
	// RTol and ATol are the integrator's tolerances; zero means
	// Tolerances(model, Method).
	RTol, ATol float64
	// MaxSteps bounds the integrator's attempted steps of a pass; 0 means
	// DefaultMaxSteps.
	MaxSteps int
	// DenseBytes bounds the continuous extension a run keeps. Run keeps
	// one, up to DenseBytes (0: DefaultDenseBytes), to sample a grid placed
	// from the run itself (the drops grid, or any grid with T = 0; see
	// Run); with Times given, DenseBytes > 0 keeps one; a grid on a given T
	// keeps none. A run outgrowing the bound keeps none. The Trajectory
	// holds what was kept, for Sample.
	DenseBytes int
	// NoTestLosses leaves out the exact test losses that Run computes at
	// the output times (Trajectory.TestICL, TestIWL, TestIDG) wherever
	// the layer or the law go beyond the paper's (Plan.Tests).
	NoTestLosses bool
	// tests are the test losses the run computes, as Plan.Resolve
	// decides.
	tests TestSet
	// StateEvery > 1 keeps at most as many states as every
	// StateEvery-th output time and the last, the loss and the test
	// losses at all: at large D the states are most of a run's memory
	// (2001 of them take 0.5 GB at D = 128). A run that samples its grid
	// from the steps it took (Sampling Interpolated) keeps them at steps
	// spread over the run (Trajectory.StateTimes); one integrated twice at
	// those output times (Trajectory.StateIndex). 0 or 1 keeps them all.
	StateEvery int
	// StateBytes > 0 with StateEvery 0 keeps the states within StateBytes:
	// StateEvery becomes StateStride of the output times (Resolve).
	StateBytes int
	// Workers is the number of processors the run may share its work
	// among: the evaluations of the flow, the preconditioner and GMRES
	// (ode.Settings.Workers) where a processor more gains (at large D),
	// and the goroutines that sample a thinned extension (Trajectory's
	// forks), a share each; 0 means those Go may use (runtime.GOMAXPROCS,
	// at most 8). A caller that runs several flows side by side gives
	// each its share (linattn sweep -j). The results do not depend on it,
	// bit for bit.
	Workers int
	// Observer, if not nil, is called at every accepted step with the time,
	// the state in eigen coordinates (System.FromEigen converts; valid only
	// during the call) and the loss there. An error stops the run (Status
	// Interrupted).
	Observer func(t float64, y []float64, loss float64) error

	// Checkpoint, if not nil, is called after the accepted steps of the
	// pass Run begins with (all but the last; a second pass has none),
	// with the state of the run there, which it may save
	// (Checkpoint.Save; CanCheckpoint says which methods can). An error
	// stops the run (Interrupted).
	Checkpoint func(*Checkpoint) error
	// Resume, if not nil, continues the run that saved it
	// (ReadCheckpoint): Run on the same System, y0 and settings then
	// returns what the run that was not stopped returns, bit for bit,
	// except the samples at accepted steps of a run that keeps every
	// state and fails again (Sampling AtSteps), which begin at the
	// resumed step (a run that thins its states checkpoints them).
	Resume *Resume
	// SamplingCheckpoint, if not nil, is called while Run samples its
	// output times on a continuous extension it kept (with every state
	// kept), after each group of them, with the samples made so far, which
	// it may save (SamplingProgress.Save): on a thinned extension the
	// sampling takes the steps again, which at large D takes about as
	// long as the integration. It is called by one goroutine at a time, and once
	// more when the context is canceled while Run samples, which stops
	// it between two output times. An error stops the sampling and the
	// run, which then returns no Trajectory.
	SamplingCheckpoint func(*SamplingProgress) error
	// SamplingResume, if not nil, holds the samples a run killed while it
	// sampled saved (ReadSamplingProgress): Run takes them rather than
	// make them again where its output times are the same, bit for bit
	// (they are, for the same System, y0 and settings), and returns what
	// the run that was not stopped returns.
	SamplingResume *SamplingProgress
}

// Resolved is what a run ran with where its settings left the default
// (RunSettings's zero values), as Trajectory.Resolved reports it: linattn
// records these in its sidecar.
type Resolved struct {
	Method     ode.Method
	RTol, ATol float64
	T          float64 // the final time; 0: until converged (Tol)
	Tol        float64 // with T = 0, else 0
	Samples    int     // output times placed on Grid; 0 with Times given
	Grid       Grid
}

// Resolve returns rs with Run's defaults filled in for a flow of the
// plan's model and law: Method (Plan.Method), RTol and ATol (Tolerances
// of the model and Method), Tol with T = 0 (DefaultTol), Samples and
// DenseBytes without Times (DefaultSamples, DefaultDenseBytes), MaxSteps
// (DefaultMaxSteps) and StateEvery from StateBytes. Each default is
// defined here alone; System.Run resolves its settings so
// (System.Settings).
func (p Plan) Resolve(rs RunSettings) RunSettings {
	m, d := p.model, p.d
	if rs.Method == nil {
		rs.Method = p.Method
	}
	rtol, atol := Tolerances(m, rs.Method)
	if rs.RTol == 0 {
		rs.RTol = rtol
	}
	if rs.ATol == 0 {
		rs.ATol = atol
	}
	if rs.T == 0 && rs.Tol == 0 {
		rs.Tol = DefaultTol
	}
	if rs.Times == nil && rs.Samples == 0 {
		rs.Samples = DefaultSamples
	}
	if rs.Times == nil && rs.DenseBytes == 0 {
		rs.DenseBytes = DefaultDenseBytes
	}
	if rs.MaxSteps == 0 {
		rs.MaxSteps = DefaultMaxSteps
	}
	if rs.StateEvery == 0 && rs.StateBytes > 0 {
		rs.StateEvery = StateStride(max(rs.Samples, len(rs.Times)), m.StateLen(d), rs.StateBytes)
	}
	if !rs.NoTestLosses {
		rs.tests = p.Tests
	}
	return rs
}

// StateStride is the least K ≥ 1 that keeps the states (n float64 values
// each) of every K-th of samples output times within bytes.
func StateStride(samples, n, bytes int) int {
	return max(1, int(math.Ceil(float64(samples)*float64(n)*8/float64(bytes))))
}

// Resolved returns the record of settings that Resolve filled in.
func (rs RunSettings) Resolved() Resolved {
	r := Resolved{Method: rs.Method, RTol: rs.RTol, ATol: rs.ATol, T: rs.T, Grid: rs.Grid}
	if rs.T == 0 {
		r.Tol = rs.Tol
	}
	if rs.Times == nil {
		r.Samples = rs.Samples
	}
	return r
}

// Settings returns rs resolved for a run of s from y0 (Plan.Resolve; a
// nil y0 is Run's default start): what Run runs with. Where Run
// integrates the full layer as the reduced flow (in-context data and zero
// extra blocks in y0), Method is the reduced layer's plan's, the model
// that is integrated, and RTol and ATol its defaults; StateEvery still
// counts the full layer's states, which the Trajectory holds, and the
// test losses are the full layer's.
func (s *System) Settings(y0 []float64, rs RunSettings) RunSettings {
	if rs.Method == nil {
		if y0 == nil {
			y0, _ = s.Init(DefaultWInit, DefaultSeed) // valid: a finite w_init ≥ 0
		}
		if red := s.reducedModel(y0); red != nil {
			rs.Method = PlanFor(*red, s.Data).Method
		}
	}
	return s.plan.Resolve(rs)
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

// String describes the drop by m, time and level, without its state.
func (tn Transition) String() string {
	return fmt.Sprintf("drop %d at t = %.6g (L = %.6g)", tn.M, tn.T, tn.Level)
}

// Status says how a run ended: flow's own account, not the integrator's
// (ode.Status).
type Status int

const (
	NotRun      Status = iota // the zero value
	Converged                 // T = 0: L − L_min ≤ Tol·(L(0) − L_min)
	ReachedT                  // integrated to T
	Stopped                   // L − L_min ≤ StopTol before T
	Interrupted               // the context was canceled or the Observer returned an error
	Failed                    // the integrator failed, or no convergence by Horizon·τ
	// LossSettled: T = 0 with a least loss that is not known (MinLoss
	// NaN): after its first drop the loss moved by less than
	// Tol·(L(0) − L_lb) over a whole decade of time (settleDetector). The
	// loss settled, not necessarily the weights: along a valley of nearly
	// constant loss they may still grow (docs/math.md, "Least loss").
	LossSettled
)

func (s Status) String() string {
	switch s {
	case NotRun:
		return "not run"
	case Converged:
		return "converged"
	case ReachedT:
		return "reached T"
	case Stopped:
		return "stopped"
	case Interrupted:
		return "interrupted"
	case Failed:
		return "failed"
	case LossSettled:
		return "loss settled"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Sampling says where a Trajectory's samples come from.
type Sampling int

const (
	// AtTimes: computed at the output times during the run (Times given,
	// a grid on a known T, or the second pass of Run).
	AtTimes Sampling = iota
	// FromDense: evaluated after the run on its continuous extension,
	// which gives the values a pass at these times computes, bit for bit.
	FromDense
	// AtSteps: the accepted steps of a run that ended before its output
	// times were known (an error or an interruption), at most Samples of
	// them spread over the run.
	AtSteps
	// Interpolated: the states of a run that keeps some of them
	// (RunSettings.StateEvery) at steps spread over the run
	// (Trajectory.StateTimes); the loss and the test losses at the output
	// times interpolated between the steps, within the integrator's error
	// (docs/math.md, "Sampling from the steps").
	Interpolated
)

// Trajectory is the result of Run: the sampled run (times, loss, states),
// the drops, how it ended and the work it took. Finite-data training
// (package train) describes its runs with the same fields.
type Trajectory struct {
	// Times are the output times; States holds the state at each in the
	// original basis, row-major (len(Times) × Len()), or at the times
	// StateIndex lists or at StateTimes (RunSettings.StateEvery); Loss the
	// loss.
	Times      []float64
	States     []float64
	Loss       []float64
	StateIndex []int     // nil: a state at every output time, or at StateTimes
	StateTimes []float64 // the times of States where they are not output times (Sampling Interpolated)
	// Sampling says how Times were chosen and the samples computed.
	Sampling Sampling

	// Transitions lists the first falling crossing of each half-way level,
	// in time order.
	Transitions []Transition

	// FinalT, Final and FinalLoss describe the end of the run (original
	// basis), which is T unless StopTol, convergence or a failure ended it
	// earlier.
	FinalT    float64
	Final     []float64
	FinalLoss float64

	Status Status
	// Resolved is what the run ran with where its settings left the
	// default (Plan.Resolve).
	Resolved Resolved
	// Stats counts the work of every pass.
	Stats ode.Stats

	// Plateaus are the plateau levels the run passed through, read off it:
	// ObservedPlateaus of the samples for in-context data, FindDrops of
	// the accepted steps under another task law.
	Plateaus []float64

	// TestICL, TestIWL and TestIDG are the exact in-context, in-weight and
	// in-distribution test losses at Times (RunSettings.NoTestLosses, Plan.Tests;
	// System.TestLosses); nil where the run computed none, and the last
	// two nil without fixed tasks, which define those tests.
	TestICL, TestIWL, TestIDG []float64

	sys   *System
	dense *ode.Solution // eigen coordinates; nil unless kept
	path  *LossPath     // the loss at the accepted steps
	// precond is the run's preconditioner, of whose kind the forks that
	// sample a thinned extension take their own (sampleParallel), and
	// forkReplays the steps the forks took again.
	precond     ode.Preconditioner
	forkReplays ode.Stats
	workers     int       // the run's processors (RunSettings.Workers), which the forks share
	scratch     []float64 // sampleRange's, of the goroutine that samples on this Trajectory
	// pad zero entries follow each state of the integrated system: the
	// full layer's extra blocks when Run integrated its reduced flow
	// (System.Run, "The reduction is exact in context").
	pad int
}

// StateTime returns the time of row row of States: Times[row],
// Times[StateIndex[row]] or StateTimes[row] where the states were thinned.
func (tr *Trajectory) StateTime(row int) float64 {
	switch {
	case tr.StateTimes != nil:
		return tr.StateTimes[row]
	case tr.StateIndex != nil:
		return tr.Times[tr.StateIndex[row]]
	}
	return tr.Times[row]
}

// AllStates reports whether tr holds the state at every output time.
func (tr *Trajectory) AllStates() bool { return tr.StateIndex == nil && tr.StateTimes == nil }

// Dense reports whether the run kept its continuous extension
// (RunSettings.DenseBytes), so that Sample works.
func (tr *Trajectory) Dense() bool { return tr.dense != nil }

// Sample evaluates the run's continuous extension at the given times in
// [0, FinalT]: the states (original basis, row-major) and the loss. The
// values are those a run with these output times would return, up to the
// step that ends the run, which a run with a final time cuts differently.
func (tr *Trajectory) Sample(times []float64) (states, loss []float64, err error) {
	return tr.sample(times, samplingSettings{ctx: context.Background()})
}

// samplingSettings are the context that interrupts a run's sampling
// and what it saves and resumes (RunSettings.SamplingCheckpoint and
// SamplingResume).
type samplingSettings struct {
	ctx        context.Context
	checkpoint func(*SamplingProgress) error
	resume     *SamplingProgress
}

// sample is Sample that takes the samples ss.resume holds where it is of
// the same sampling, calls ss.checkpoint (if not nil) after each group of
// times sampled (SamplingProgress), and stops between two times when
// ss.ctx is canceled, calling ss.checkpoint once more.
func (tr *Trajectory) sample(times []float64, ss samplingSettings) (states, loss []float64, err error) {
	if tr.dense == nil {
		return nil, nil, fmt.Errorf("flow: Trajectory.Sample: the run kept no dense output (RunSettings.DenseBytes)")
	}
	p := newSamplingProgress(times, tr.sys.n+tr.pad, ss.resume)
	p.hook = ss.checkpoint
	fill := func(on *Trajectory, lo, hi int) error {
		if err := on.sampleRange(ss.ctx, times, lo, hi, p.states, p.loss); err != nil {
			return err
		}
		return p.finish(lo, hi)
	}
	if err := tr.sampleParallel(times, tr.sampleWorkers(len(times)), p.allDone, fill); err != nil {
		if ss.ctx.Err() != nil {
			p.finish(0, 0) // no new samples: the hook saves those made (its error is the context's)
		}
		return nil, nil, err
	}
	return p.states, p.loss, nil
}

// sampleRange writes the loss and the states at times[lo:hi] into their
// places in loss and states, or stops with ctx's error when it is
// canceled.
func (tr *Trajectory) sampleRange(ctx context.Context, times []float64, lo, hi int, states, loss []float64) error {
	n, stride := tr.sys.n, tr.sys.n+tr.pad
	if len(tr.scratch) != n {
		tr.scratch = make([]float64, n)
	}
	ye := tr.scratch
	for i := lo; i < hi; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := tr.dense.At(ye, times[i]); err != nil {
			return fmt.Errorf("flow: Trajectory.Sample: %w", err)
		}
		loss[i] = tr.sys.LossEigen(ye)
		tr.sys.FromEigen(states[i*stride:i*stride+n], ye)
	}
	return nil
}

// keptStates returns the indices of the output times of nt whose states
// a run with StateEvery every keeps: every every-th and the last; nil for
// all.
func keptStates(nt, every int) []int {
	if every <= 1 || nt == 0 {
		return nil
	}
	var kept []int
	for i := 0; i < nt; i += every {
		kept = append(kept, i)
	}
	if kept[len(kept)-1] != nt-1 {
		kept = append(kept, nt-1)
	}
	return kept
}

// thinStates keeps the states of tr at every-th output time and the last
// (StateIndex).
func (tr *Trajectory) thinStates(every int) {
	kept := keptStates(len(tr.Times), every)
	if kept == nil || !tr.AllStates() || tr.Sampling == AtSteps {
		return
	}
	stride := len(tr.States) / len(tr.Times)
	for row, i := range kept {
		copy(tr.States[row*stride:(row+1)*stride], tr.States[i*stride:(i+1)*stride])
	}
	tr.States = slices.Clip(tr.States[:len(kept)*stride])
	tr.StateIndex = kept
}

// levels returns the half-way levels whose crossings Run records: those
// of the plateau levels L(M_m) for in-context data, none under another
// task law, whose drops are read off the run (findDrops).
func (s *System) levels() []Transition {
	if !s.plan.PaperTheory {
		return nil
	}
	pl := s.Data.PlateauLevels()
	d := s.d
	if s.Model.Kind == Merged {
		return []Transition{{M: d, Level: 0.5 * (pl[0] + pl[d])}}
	}
	out := make([]Transition, d)
	for m := 1; m <= d; m++ {
		out[m-1] = Transition{M: m, Level: 0.5 * (pl[m-1] + pl[m])}
	}
	return out
}

// pass integrates the flow from y0 (original basis) once, over [0, rs.T] or
// until it converges when rs.T is 0, reaching rs.Times (not nil), and
// records the first falling crossing of each of levels. It keeps the loss
// path of the accepted steps (Trajectory.path) and, if rec is not nil,
// records them in rec; under a task law with no levels given it reads the
// drops off the path (findDrops).
func (s *System) pass(ctx context.Context, y0 []float64, rs RunSettings, levels []Transition, rec *runRecord) (*Trajectory, error) {
	untilConverged := rs.T == 0
	var settle *settleDetector
	if untilConverged {
		var err error
		if settle, err = s.convergenceSettings(y0, &rs); err != nil {
			return nil, err
		}
	}
	if err := s.checkRun(&rs); err != nil {
		return nil, err
	}
	lossAt := ode.CacheByTime(s.LossEigen)
	path := newPathRecorder(s, y0)
	var resume *ode.Snapshot
	if rs.Resume != nil {
		var err error
		if resume, err = s.resumePass(rs.Resume, path, settle, rec); err != nil {
			return nil, err
		}
	}
	var checkpoint func(*ode.Checkpoint) error
	if rs.Checkpoint != nil {
		c := &Checkpoint{n: s.n, path: path, settle: settle, rec: rec}
		checkpoint = func(oc *ode.Checkpoint) error {
			c.T, c.oc = oc.T, oc
			return rs.Checkpoint(c)
		}
	}
	// The analytic Jacobian serves Rodas5P, alone or inside an Auto method,
	// and BDF's dense factorization; the other methods never call it. It is
	// symmetric (J = −∇²L/(2τ), symmetrized: Linearization.Dense).
	prob := ode.Problem{Func: s.Func(), Jac: s.Jac(), Precond: s.Preconditioner(), T0: 0, T1: rs.T, Y0: s.ToEigen(nil, y0),
		Autonomous: true, SymmetricJac: true}
	res, err := ode.Solve(ctx, prob, ode.Settings{
		Method:   rs.Method,
		RTol:     rs.RTol,
		ATol:     rs.ATol,
		MaxSteps: rs.MaxSteps,
		TEval:    rs.Times,
		Events:   s.runEvents(levels, rs.StopTol, lossAt),
		// The loss is a Lyapunov function of a gradient flow
		// (dL/dt = −2τ‖dθ/dt‖² ≤ 0), so it crosses each level at most once
		// and needs no sampling inside a step: the step ends suffice, and
		// the continuous extension is built only where a crossing occurs.
		EventSamples: 1,
		Observer:     passObserver(rs.Observer, path, settle, rec, lossAt),
		Dense:        rs.DenseBytes > 0,
		DenseLimit:   max(1, rs.DenseBytes/8),
		Checkpoint:   checkpoint,
		Resume:       resume,
		Workers:      rs.Workers,
	})
	if res == nil {
		return nil, err
	}
	tr := s.newTrajectory(res, levels)
	tr.precond, tr.workers = prob.Precond, rs.Workers
	tr.path = path.end(tr.FinalT, tr.FinalLoss)
	if levels == nil && !s.plan.PaperTheory {
		s.findDrops(tr)
	}
	return tr, s.passStatus(tr, res, err, untilConverged, rs)
}

// passObserver records the loss path and, with rec, the run at every
// accepted step, watches for a run whose loss has settled, and calls the
// user's observer.
func passObserver(user func(float64, []float64, float64) error, path *pathRecorder, settle *settleDetector, rec *runRecord,
	lossAt func(float64, []float64) float64) func(*ode.Step) error {
	return func(st *ode.Step) error {
		loss := lossAt(st.T1, st.Y1)
		path.add(st.T1, loss)
		if rec != nil {
			rec.add(st, loss)
		}
		if settle != nil && settle.add(st.T1, loss) {
			return errSettled
		}
		if user != nil {
			return user(st.T1, st.Y1, loss)
		}
		return nil
	}
}

// passStatus sets the status of the pass tr ended by the solve res with
// err, and returns the pass's error.
func (s *System) passStatus(tr *Trajectory, res *ode.Result, err error, untilConverged bool, rs RunSettings) error {
	switch {
	case errors.Is(err, errSettled):
		tr.Status = LossSettled
	case err != nil:
		tr.Status = Failed
		var oe *ode.Error
		if errors.As(err, &oe) && oe.Status.Interrupted() {
			tr.Status = Interrupted
		}
		return fmt.Errorf("flow: run ended at t = %g of %g: %w", res.T, rs.T, err)
	case untilConverged && !res.Status.AtEvent():
		tr.Status = Failed
		return fmt.Errorf("flow: not converged by t = %g τ: the loss stays at %.17g, above L_min + tol·(L(0) − L_min) = %.17g; the initial state may be a fixed point, or so close to one that the flow leaves it only later: start from larger weights, or give T",
			Horizon, tr.FinalLoss, s.lossFloor()+rs.StopTol)
	case untilConverged:
		tr.Status = Converged
	case res.Status.AtEvent():
		tr.Status = Stopped
	default:
		tr.Status = ReachedT
	}
	return nil
}

// convergenceSettings turns a run until converged (rs.T = 0) into a run to
// the horizon that stops at L − L_min ≤ Tol·(L(0) − L_min). Where the
// least loss L_min is not known (MinLoss NaN), L_min is the least loss
// over all coefficients, a lower bound, and the run also stops when it has
// settled (settleDetector).
func (s *System) convergenceSettings(y0 []float64, rs *RunSettings) (*settleDetector, error) {
	if rs.StopTol != 0 {
		return nil, fmt.Errorf("flow: StopTol = %g with T = 0: a run until converged takes Tol", rs.StopTol)
	}
	tol := rs.Tol // resolved: DefaultTol for 0
	if !(tol > 0 && tol < 1) {
		return nil, fmt.Errorf("flow: Tol = %g, want a relative tolerance in (0, 1)", rs.Tol)
	}
	l0 := s.Loss(y0)
	gap := l0 - s.lossFloor()
	if !(gap > 0) {
		return nil, fmt.Errorf("flow: the initial loss is already L_min (gap %g); give a final time T", gap)
	}
	rs.T, rs.StopTol = Horizon*s.Model.Tau, tol*gap
	if !math.IsNaN(s.MinLoss()) {
		return nil, nil
	}
	return &settleDetector{l0: l0, tol: tol * gap, drop: MinDropFraction * gap}, nil
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

// checkRun validates the settings of a pass.
func (s *System) checkRun(rs *RunSettings) error {
	if !(rs.T > 0) || math.IsInf(rs.T, 0) {
		return fmt.Errorf("flow: T = %g, want a finite final time > 0", rs.T)
	}
	if rs.DenseBytes < 0 {
		return fmt.Errorf("flow: DenseBytes = %d, want ≥ 0", rs.DenseBytes)
	}
	if rs.Workers < 0 {
		return fmt.Errorf("flow: Workers = %d, want ≥ 0 processors (0: all)", rs.Workers)
	}
	if !(rs.StopTol >= 0) {
		return fmt.Errorf("flow: StopTol = %g, want ≥ 0", rs.StopTol)
	}
	for i, t := range rs.Times {
		if !(t >= 0 && t <= rs.T) || (i > 0 && t < rs.Times[i-1]) {
			return fmt.Errorf("flow: Times[%d] = %g, want increasing times in [0, T = %g]", i, t, rs.T)
		}
	}
	return nil
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
		target := s.lossFloor() + stopTol
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

// NewTrajectory returns an empty Trajectory that keeps the continuous
// extension dense of a solve in its own coordinates (nil: none), for
// another gradient flow described by the same fields (package train's
// finite-data flow); At evaluates it.
func NewTrajectory(dense *ode.Solution) *Trajectory { return &Trajectory{dense: dense} }

// At writes the state at time t of the kept continuous extension into
// dst, in the coordinates of the solve (eigen coordinates for a System's
// run: Sample converts).
func (tr *Trajectory) At(dst []float64, t float64) error {
	if tr.dense == nil {
		return fmt.Errorf("flow: Trajectory.At: the run kept no dense output")
	}
	_, err := tr.dense.At(dst, t)
	return err
}
