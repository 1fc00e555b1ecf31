package flow

import (
	"github.com/linattn/linattn/flow/internal/deflation"
	"github.com/linattn/linattn/ode"
)

// RunMemory is the memory a run holds at its peak, by part, in bytes
// (System.RunBytes): an upper estimate from the sizes Run allocates, for
// a caller to check against the memory available before it runs. The
// System itself (its moments: MomentBytes) is not counted.
type RunMemory struct {
	// Kept is the number of output states the Trajectory holds
	// (StateEvery), at most, States their bytes. A first pass that keeps
	// all records as many of its accepted steps besides, for a run that
	// fails (Recorder); one that thins them keeps those as its output,
	// and records the loss and the test losses at its steps (Recorder).
	Kept             int
	States, Recorder float64
	// Samples holds the output times, the loss and the three test losses.
	Samples float64
	// Dense bounds the continuous extension a pass keeps (DenseBytes;
	// BDFKeptStates times the states kept for BDF with a preconditioner).
	Dense float64
	// Solver is the integrator's vectors of the state's length and, for
	// the methods that factor the iteration matrix densely, its n × n
	// matrices.
	Solver float64
	// Precond is BDF's preconditioner and Krylov its GMRES's basis.
	Precond, Krylov float64
	// Forks is what the goroutines that sample a thinned extension beside
	// the first hold (Trajectory.sample, samplingWorkers): each an
	// integrator, a preconditioner and GMRES's basis of its own.
	Forks float64
}

// Total returns the sum of the parts.
func (m RunMemory) Total() float64 {
	return m.States + m.Recorder + m.Samples + m.Dense + m.Solver + m.Precond + m.Krylov + m.Forks
}

// The integrator's work vectors of the state's length: DOP853's 12
// stages and its dense output's 8 coefficients, ROCK4's 4 stages and an
// Auto method holding both, or BDF's Nordsieck array (6), its 5 dense
// output vectors and a dozen of Newton's, with the Integrator's own, are
// at most solverVectors.
const solverVectors = 40

// RunBytes returns the memory a run of s from y0 with the settings rs
// holds at its peak (RunMemory), for the settings as Run resolves them
// (Settings) and the system it integrates: the reduced layer's where
// the full layer's run is the reduced flow, with the full layer's states.
func (s *System) RunBytes(y0 []float64, rs RunSettings) RunMemory {
	if y0 == nil {
		y0, _ = s.Init(DefaultWInit, DefaultSeed) // valid: a finite w_init ≥ 0
	}
	rs = s.Settings(y0, rs)
	run := s.Model // the model integrated
	if red := s.reducedModel(y0); red != nil {
		run = *red
	}
	plan := PlanFor(run, s.Data)
	n, ni := float64(s.n), float64(run.StateLen(s.d))
	samples := max(rs.Samples, len(rs.Times))
	m := RunMemory{Kept: samples, Samples: 8 * 5 * float64(samples)}
	kept := keptStates(samples, rs.StateEvery)
	if kept != nil {
		m.Kept = len(kept)
	}
	m.States = 8 * float64(m.Kept) * n
	first := rs.Times == nil && (rs.T == 0 || rs.Grid == GridDrops) // firstPass
	if first {
		m.Recorder = m.States
		if kept != nil { // thinned: its states are the output's, and it records the values at the steps (fromSteps)
			m.Recorder = 8 * 5 * maxStepNodes
		}
		m.Dense = float64(denseBound(rs, plan, m.Kept))
	} else if rs.Times != nil {
		m.Dense = float64(rs.DenseBytes)
	}
	m.Solver = 8 * solverVectors * ni
	switch rs.Method.Family() {
	case ode.DenseImplicit:
		m.Solver += 8 * 6 * ni * ni // Radau5's J, E₁ and the 2n × 2n E₂; Rodas5P's 2n²
	case ode.Multistep:
		maxl := ode.KrylovSpace(nil) // GMRES holds 2·maxl + 2 vectors
		switch plan.Precond {
		case DeflationPrecond:
			m.Precond, maxl = deflation.Bytes(int(ni), deflateSteps(run)), deflation.KrylovSpace(run.Kind == Merged)
			if run.Kind == Merged {
				m.Precond += kronBytes(s.d, run.H) // its structured deflation
			}
		case BlockPrecond:
			// A block's LU and J, a dozen vectors, and the couplings a
			// setup's scan holds: about twice precondCandidates per
			// variable before it prunes (couplingScan.keep).
			m.Precond = 8*(2*precondMaxBlock+12)*ni + couplingBytes*2*precondCandidates*ni
		default:
			m.Solver += 8 * 2 * ni * ni // ode's dense LU: J and I − γJ
		}
		m.Krylov = 8 * float64(2*maxl+2) * ni
	}
	if first && m.Dense > 0 {
		m.Forks = float64(samplingWorkers(samples, rs.Workers)-1) * (m.Solver + m.Precond + m.Krylov)
	}
	return m
}

// denseBound is the bound on the continuous extension of the first pass
// of a run of the plan's model with the settings rs (firstPass), whose
// states kept are out: DenseBytes (resolved: Plan.Resolve) and, for BDF
// with a preconditioner, BDFKeptStates times the output's states.
func denseBound(rs RunSettings, p Plan, out int) int {
	dense := rs.DenseBytes
	if rs.Method.Family() == ode.Multistep && p.Precond != NoPrecond {
		dense = min(dense, BDFKeptStates*max(out, bdfMinSamples)*p.model.StateLen(p.d)*8)
	}
	return dense
}
