package ode

import (
	"fmt"
	"math"
)

// Func evaluates the right-hand side f(t, y) into dydt. It must not keep y or
// dydt after it returns, and must not modify y.
//
// f must be a function of (t, y) alone, returning the same bits for the same
// arguments: a dense Solution (Settings.Dense) keeps f and calls it again
// after Solve has returned, for the steps whose continuous extension it
// stores as y alone (ROCK4's cubic Hermite steps, whose f at both ends At
// evaluates again, and the thinned ones, which At takes again) and for the
// BDF steps between the states of the solve it keeps. An f that changes
// after the solve (a parameter set anew, a count of its calls) makes
// At return values the solve never had (TestSolutionNeedsPureFunc).
type Func func(t float64, y, dydt []float64)

// Problem is the initial-value problem y' = Func(t, y), y(T0) = Y0, to be
// solved up to T1. T1 < T0 integrates backwards in time.
//
// The optional fields help the stiff methods: Jac for Rodas5P, Radau5 and
// BDF's dense solver (else the Jacobian is approximated by finite
// differences), SpectralRadius for ROCK4 (else it is estimated by nonlinear
// power iteration), Autonomous for Rodas5P, Precond for BDF.
type Problem struct {
	Func   Func
	T0, T1 float64
	Y0     []float64

	// Jac, if not nil, writes the Jacobian ∂f/∂y at (t, y) into jac,
	// row-major: jac[i*n+j] = ∂f_i/∂y_j. It must not keep y or jac.
	Jac func(t float64, y, jac []float64)

	// SpectralRadius, if not nil, returns an upper bound of the spectral
	// radius of ∂f/∂y at (t, y); ROCK4 takes its number of stages from it.
	SpectralRadius func(t float64, y []float64) float64

	// Autonomous declares that Func does not depend on t, so that Rodas5P
	// need not approximate ∂f/∂t (one evaluation per step).
	Autonomous bool

	// Precond, if not nil, preconditions the GMRES solves of BDF's Newton
	// iterations (see Preconditioner); the other methods ignore it.
	Precond Preconditioner

	// SymmetricJac declares that ∂f/∂y is symmetric, as a gradient flow's
	// is (J = −∇²L up to a positive factor): BDF's dense factorization of
	// I − γJ is then Cholesky's, at less than half LU's cost, wherever
	// I − γJ is positive definite, and LU's elsewhere.
	SymmetricJac bool
}

// Settings controls a solve. The zero value is usable: DP5, RTol 1e-6,
// ATol 1e-9, automatic initial step, no output besides the final state.
type Settings struct {
	// Method is the integration method; nil means DP5.
	Method Method

	// RTol and ATol set the error tolerance: the RMS norm of
	// err_i / (atol_i + RTol·max(|y_n,i|, |y_n+1,i|)) must be ≤ 1 (HNW I,
	// eq. II.4.10–11). Zero means the default (1e-6 and 1e-9). ATolVec, if not
	// nil, gives atol per component and overrides ATol.
	RTol, ATol float64
	ATolVec    []float64

	// InitialStep is the first step size; 0 selects it by Hairer's
	// algorithm (HNW I, p. 169). MaxStep bounds |h|; 0 means |T1 − T0|.
	InitialStep, MaxStep float64

	// MaxSteps bounds the number of attempted steps; 0 means 100000.
	MaxSteps int

	// FixedStep > 0 disables error control: the interval is divided into
	// ⌈|T1−T0|/FixedStep⌉ equal steps, all accepted. For convergence studies.
	FixedStep float64

	// Controller adjusts the step size; zero fields take the method's
	// defaults.
	Controller Controller

	// TEval lists times, monotone in the direction of integration and inside
	// [T0, T1], at which the solution is returned (Result.YEval).
	TEval []float64

	// Events are located on the dense output at every accepted step.
	Events []Event

	// EventSamples is the number of sub-intervals of each step in which the
	// event functions are sampled for sign changes, so that several
	// crossings in one step are found (one per sub-interval); 0 means 4.
	EventSamples int

	// Dense keeps the continuous extension of every accepted step in
	// Result.Solution. It costs memory (and allocations) per step.
	Dense bool

	// DenseLimit > 0 bounds the memory of the dense output, in float64
	// values. ROCK4's and BDF's steps are thinned to stay within it
	// (Solution.At takes the dropped ones again, with identical results, at
	// the cost of their evaluations: for BDF, from the nearest kept state
	// of the solve, with one preconditioner setup); a solution whose other
	// steps outgrow it is dropped (Result.Solution is nil) and the solve
	// goes on without it.
	DenseLimit int

	// Observer, if not nil, is called after every accepted step. A non-nil
	// error ends the solve with StatusStopped, returning that error wrapped.
	Observer func(*Step) error

	// Checkpoint, if not nil, is called after every accepted step but the
	// last, once the next step size is chosen, with the state of the solve
	// there, which it may save (Checkpoint.Save; CanCheckpoint says which
	// methods can). A non-nil error ends the solve with StatusStopped.
	Checkpoint func(*Checkpoint) error

	// Workers is the number of processors the linear algebra of a solve
	// may share its work among: GMRES's Gram–Schmidt passes over the
	// Krylov basis (BDF with a preconditioner, or beyond MaxDenseDim),
	// which gain from a second processor from 2²¹ values on; 0 means
	// those Go may use (runtime.GOMAXPROCS, at most 8). The results do
	// not depend on it, bit for bit.
	Workers int

	// Resume, if not nil, continues the solve that saved it (ReadSnapshot)
	// instead of starting at T0: the same Problem and Settings (method,
	// tolerances, events, output times, Dense) give the same steps and
	// the same Result, bit for bit, as the solve that was not stopped.
	Resume *Snapshot
}

// Controller is the step-size controller. For the explicit Runge–Kutta
// methods a step with error norm err ≤ 1 is accepted and the next step is
// h·clamp(Safety·err^−Beta1·errPrev^Beta2, MinScale, MaxScale), never larger
// than h right after a rejection; a step with err > 1 is retried with
// h·max(MinScale, Safety·err^−Beta1). With Beta2 > 0 this is the PI
// controller of Gustafsson (HNW II, IV.2; dopri5.f); ROCK4 uses it too, with
// its own exponents. Rodas5P and Radau5 use Gustafsson's predictive
// controller (HNW II, IV.8, eq. 8.21) as rodas.f and radau5.f do; for them
// Beta1, Beta2 and Integral are ignored. Radau5 lowers Safety after steps
// that took many Newton iterations and shrinks the step by its own factors
// when the iteration fails (radau5.f). BDF chooses its step and order
// together by CVODE's rules and ignores Controller.
type Controller struct {
	Safety   float64 // default 0.9
	MinScale float64 // default: the method's (0.2 for DP5)
	MaxScale float64 // default: the method's (10 for DP5)
	Beta1    float64 // default: the method's
	Beta2    float64 // default: the method's; ignored when Integral is set
	// Integral selects the elementary (I) controller: Beta1 = 1/(q+1) with q
	// the order of the embedded formula, Beta2 = 0.
	Integral bool
}

// Direction selects which zero crossings of an event function count.
type Direction int

const (
	Both    Direction = 0  // any sign change
	Rising  Direction = 1  // g goes from negative to non-negative
	Falling Direction = -1 // g goes from positive to non-positive
)

// Event is a function g(t, y) whose zero crossings are located during the
// solve. g must not modify y. A Terminal event ends the solve at its first
// crossing.
type Event struct {
	Func      func(t float64, y []float64) float64
	Direction Direction
	Terminal  bool
}

// EventRecord is one located crossing.
type EventRecord struct {
	Index     int       // index into Settings.Events
	T         float64   // time of the crossing
	Y         []float64 // state at T
	Direction Direction // Rising or Falling
}

// Status says how a solve ended.
type Status int

const (
	Success       Status = iota // reached T1
	TerminalEvent               // stopped at a terminal event
	StepTooSmall                // the step size fell below 10 ulp of t
	NonFinite                   // NaN or Inf that step rejection could not cure
	TooManySteps                // MaxSteps attempted steps
	Canceled                    // the context was canceled
	Stopped                     // the observer returned an error
)

// Interrupted reports whether the solve was stopped from outside: its
// context canceled (Canceled) or its observer refused (Stopped).
func (s Status) Interrupted() bool { return s == Canceled || s == Stopped }

// AtEvent reports whether the solve stopped at a terminal event.
func (s Status) AtEvent() bool { return s == TerminalEvent }

func (s Status) String() string {
	switch s {
	case Success:
		return "Success"
	case TerminalEvent:
		return "TerminalEvent"
	case StepTooSmall:
		return "StepTooSmall"
	case NonFinite:
		return "NonFinite"
	case TooManySteps:
		return "TooManySteps"
	case Canceled:
		return "Canceled"
	case Stopped:
		return "Stopped"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Stats counts the work of a solve.
type Stats struct {
	FuncEvals      int // evaluations of the right-hand side
	Steps          int // accepted steps
	Rejected       int // rejected steps
	JacEvals       int // Jacobians (analytic or by finite differences)
	Decompositions int // LU factorizations, or preconditioner setups (BDF)
	LinearSolves   int // solves with an LU factorization or a preconditioner
	KrylovIters    int // GMRES iterations (BDF), each one evaluation of f
	Switches       int // changes of method (Auto)

	// PerMethod splits steps, rejections and evaluations by method: one
	// entry for a single method, one per method for Auto.
	PerMethod []MethodStats
}

// MethodStats is the work done by one method of a solve.
type MethodStats struct {
	Name                       string
	Steps, Rejected, FuncEvals int
}

// Add accumulates the work of another solve (several passes over one
// problem), merging the per-method counts by name.
func (s *Stats) Add(o Stats) {
	s.FuncEvals += o.FuncEvals
	s.Steps += o.Steps
	s.Rejected += o.Rejected
	s.JacEvals += o.JacEvals
	s.Decompositions += o.Decompositions
	s.LinearSolves += o.LinearSolves
	s.KrylovIters += o.KrylovIters
	s.Switches += o.Switches
	for _, m := range o.PerMethod {
		i := 0
		for i < len(s.PerMethod) && s.PerMethod[i].Name != m.Name {
			i++
		}
		if i == len(s.PerMethod) {
			s.PerMethod = append(s.PerMethod, MethodStats{Name: m.Name})
		}
		s.PerMethod[i].Steps += m.Steps
		s.PerMethod[i].Rejected += m.Rejected
		s.PerMethod[i].FuncEvals += m.FuncEvals
	}
}

func (s Stats) clone() Stats {
	s.PerMethod = append([]MethodStats(nil), s.PerMethod...)
	return s
}

// Result is the outcome of a solve. On failure it holds the solution up to
// the last accepted step.
type Result struct {
	Status Status
	T      float64   // time reached
	Y      []float64 // state at T

	// TEval and YEval hold the requested output times reached and the states
	// there, row-major: YEval[i*n:(i+1)*n] is y(TEval[i]).
	TEval []float64
	YEval []float64

	Events   []EventRecord
	Solution *Solution // non-nil when Settings.Dense was set
	Stats    Stats
}

// Error reports why a solve failed: its status, the time reached and the
// cause. Err, if not nil, is the underlying error (a context error or the
// observer's).
type Error struct {
	Status Status
	T, H   float64
	Cause  string
	Err    error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("ode: %v at t=%.17g (h=%.3g): %s", e.Status, e.T, e.H, e.Cause)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
