package flow

import (
	"fmt"
	"strconv"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
)

// Plan is what a System decides once, when NewSystem builds it, about
// the runs of its flow: the integrator Run takes by default, BDF's
// preconditioner, whether the paper's plateau theory describes the run,
// and which exact test losses a run computes. Run, RunBytes,
// Preconditioner, the command line's summary and its output ask the plan
// (System.Plan) rather than decide again.
type Plan struct {
	// Method is Run's integrator where RunSettings.Method is nil
	// (MethodRule).
	Method ode.Method
	// Precond is the preconditioner of BDF's Newton–Krylov solves
	// (System.Preconditioner).
	Precond Precond
	// PaperTheory reports that the paper's plateau levels L(M_m), its
	// drops between them and its 1-D theory describe the run: the paper's
	// task (law.Data.Standard) on one layer. Otherwise the plateaus and
	// drops are read off the run (FindDrops) and the least loss may not
	// be known (System.MinLoss).
	PaperTheory bool
	// Tests are the exact test losses Run computes unless
	// RunSettings.NoTestLosses: none on the paper's task with the reduced
	// layer (where the in-context test is the training loss), else the
	// in-context one, and with fixed tasks the in-weight and
	// in-distribution ones.
	Tests TestSet

	model Model // the plan's model and dimension, for Resolve
	d     int
}

// TestSet is a set of the exact test losses (System.TestLosses).
type TestSet struct {
	ICL, IWL, IDG bool
}

// Any reports whether the set holds a test.
func (t TestSet) Any() bool { return t.ICL || t.IWL || t.IDG }

// Precond is a kind of preconditioner of BDF's Newton–Krylov solves.
type Precond int

const (
	// NoPrecond: BDF factors I − γJ densely (ode.MaxDenseDim) or runs
	// GMRES without a preconditioner.
	NoPrecond Precond = iota
	// DeflationPrecond: the full layer too large to factor, or the merged
	// one from deflateMinDim, I − γJ on J's stiffest eigenvectors
	// (deflation.go).
	DeflationPrecond
	// BlockPrecond: the separate model's in-context flow, I − γJ on
	// blocks of strongly coupled variables (precond.go).
	BlockPrecond
)

func (p Precond) String() string {
	switch p {
	case NoPrecond:
		return "none"
	case DeflationPrecond:
		return "deflation"
	case BlockPrecond:
		return "blocks"
	}
	return fmt.Sprintf("Precond(%d)", int(p))
}

// BDFMinDim is the least dimension D from which the plan picks BDF for
// the separate model's in-context flow: with its block preconditioner BDF
// overtakes Auto at D ≈ 14 (a whole run at D = 12, 16: 0.81, 1.37 s
// against Auto's 0.64, 2.09 s) and wins by 5× at D = 32.
const BDFMinDim = 16

// MethodRule states the rule by which PlanFor picks the method, for the
// command line's help.
func MethodRule() string {
	return "bdf for the full layer under a task law (-icl below 1, -noise or a task covariance), for one separate layer's in-context flow from D = " +
		strconv.Itoa(BDFMinDim) + " on the paper's task and for a stack of separate layers, else auto"
}

// PlanFor returns the plan of a flow of model m on data (System.Plan for
// a System not yet built). The method (MethodRule): ode.BDF where it is
// the faster, else ode.Auto (DOP853 while the flow is not stiff,
// switching to ROCK4 where it is: after a drop the learned heads relax
// fast while the dormant ones move slowly, and the Jacobian
// J = −∇²L/(2τ) of a gradient flow is symmetric, its spectrum real, the
// case of stabilized Chebyshev methods). BDF runs the full layer under a
// task law: up to ode.MaxDenseDim it factors I − γJ densely (Cholesky: J
// is symmetric), three times faster than Auto at D = 4 and D = 8 (H = 8);
// beyond, by Newton–Krylov with the deflation preconditioner: the whole
// D = H = 16 run in about a minute of CPU, where Auto had not converged
// after 15 minutes (2.2M evaluations). It runs the separate model's
// in-context flow from D = BDFMinDim with the block preconditioner,
// unless its state is the full layer's and too large to factor. And it
// runs a stack of separate layers, whose heads learn one by one as the
// one layer's do (the flow stiff between drops) by its dense
// factorization, the Jacobian from Hessian–vector products: the paper's
// D = 4 example with three layers until settled in 5.7 s against Auto's
// 31 s, with two layers at D = 8 in 3.9 s against 12.9 s; a stack of
// merged layers drops once and Auto runs it faster (two layers, D = 8,
// H = 8: 1.1 s against 13 s).
func PlanFor(m Model, data *law.Data) Plan {
	standard, d := data.Standard(), data.Dim()
	p := Plan{PaperTheory: standard && m.Depth() == 1, Precond: precondOf(m, d, standard), model: m, d: d}
	dense := m.StateLen(d) <= ode.MaxDenseDim
	switch {
	case m.Layer == FullLayer && !standard,
		m.Kind == Separate && standard && d >= BDFMinDim && m.Depth() == 1 && (m.Layer == ReducedLayer || dense),
		m.Kind == Separate && m.Depth() > 1 && dense:
		p.Method = ode.BDF
	default:
		p.Method = ode.Auto
	}
	if m.Layer != ReducedLayer || !standard {
		p.Tests.ICL = true
		p.Tests.IWL, p.Tests.IDG = data.HasFixed(), data.HasFixed()
	}
	return p
}

// precondOf returns the kind of System.Preconditioner of model m at
// dimension d, under the paper's task (standard) or another law: the
// deflation beyond ode.MaxDenseDim, or from deflateMinDim for the merged
// model; the block preconditioner for the separate model's reduced layer
// on the paper's task.
func precondOf(m Model, d int, standard bool) Precond {
	n := m.StateLen(d)
	switch {
	case m.Layer.extra() && (n > ode.MaxDenseDim || m.Kind == Merged && n >= deflateMinDim):
		return DeflationPrecond
	case m.Kind == Separate && !m.Layer.extra() && standard && m.Depth() == 1:
		return BlockPrecond
	}
	return NoPrecond
}

// Plan returns the system's plan.
func (s *System) Plan() Plan { return s.plan }
