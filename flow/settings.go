package flow

import (
	"fmt"
	"math"

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

// DefaultSamples is the number of output times of Run without Times (and
// of linattn run).
const DefaultSamples = 2001

// DefaultDenseBytes bounds the continuous extension that Run keeps to
// sample its grid when RunSettings.DenseBytes is 0. Within it ROCK4's and
// BDF's steps are thinned rather than dropped (ode.Settings.DenseLimit), so
// only long runs of explicit steps outgrow it and need the second pass;
// linattn run allows an eighth of the available memory.
const DefaultDenseBytes = 256 << 20

// BDFKeptStates bounds the continuous extension of a BDF run of the
// separate model (BDF with the block preconditioner) further, to this
// many times the memory of its output states (Samples·n values, at least
// bdfMinSamples of them), so that it grows with the output, not with the
// steps: the extension keeps the state of the solve (the Nordsieck array
// and the saved correction: up to 7 vectors of n) at the steps' ends,
// thinned to every 2nd, 4th, … step within the bound, and Sample takes
// the steps between kept states again (ode.Solution), with the same
// results bit for bit. On the D = 32 power-law run (n = 2080, 30.8k steps,
// 2001 samples) twice the output, 67 MB, keeps every 64th state, and the
// samples take 12.3k steps again (40 % of the run's) from 187 of them:
// 2.4 s of CPU for the whole run against 3.0 s for two passes. Four times
// the output would take 8.5k steps again, DefaultDenseBytes (every 16th
// state) 5.7k, for about 4 % less time in all.
const BDFKeptStates = 2

// bdfMinSamples is the least number of output states BDFKeptStates
// counts, so that a run of a few samples keeps a few dozen states of the
// solve and replays less than a second pass would take.
const bdfMinSamples = 64

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
