package flow

import (
	"fmt"

	"github.com/linattn/linattn/ode"
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

// keepTests drops the test losses a run does not compute: those not in
// the set, which the law has not (the in-weight and in-distribution tests
// without fixed tasks) or the settings left out.
func (tr *Trajectory) keepTests(set TestSet) {
	if !set.ICL {
		tr.TestICL = nil
	}
	if !set.IWL {
		tr.TestIWL = nil
	}
	if !set.IDG {
		tr.TestIDG = nil
	}
}
