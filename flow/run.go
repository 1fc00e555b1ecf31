package flow

import (
	"context"
	"fmt"
	"math"

	"github.com/linattn/linattn/ode"
)

// Run integrates the flow from y0 (original basis) over [0, rs.T], or until
// it converges when rs.T is 0, and returns it sampled at rs.Times or, when
// Times is nil, at rs.Samples times of rs.Grid; a canceled or failed run
// returns what it computed with the error.
//
// The drops grid, and any grid of a run until converged, are placed from
// the run itself, so Run integrates once keeping the continuous extension
// (DenseBytes; for a BDF run of the separate model at most BDFKeptStates
// times its output) and the loss at the accepted steps, then samples the
// extension (Sampling FromDense), which takes thinned ROCK4 and BDF steps
// again; a run that thins its states (StateEvery) samples the grid from
// what it recorded at its steps instead (Interpolated). A run that
// outgrows DenseBytes keeps none (only runs of explicit steps can), and
// Run integrates a second time, to the output times (AtTimes): the same
// steps, so the same values bit for bit. A first pass that fails returns
// up to Samples of its accepted steps, or as many as it keeps states
// (AtSteps).
//
// Under a task law with fixed tasks the drops are read off the run
// (FindDrops) and located on the continuous extension, or as events of
// the second pass. The full layer on in-context data from zero extra
// blocks is integrated as the reduced flow, which it is exactly (its extra
// blocks get zero gradient), with the reduced layer's method (Settings):
// the reduced layer's run bit for bit, with zero extra blocks in its
// states and the full layer's test losses.
//
// A nil y0 is the paper's initialization at its defaults:
// Init(DefaultWInit, DefaultSeed).
func (s *System) Run(ctx context.Context, y0 []float64, rs RunSettings) (*Trajectory, error) {
	if y0 == nil {
		y0, _ = s.Init(DefaultWInit, DefaultSeed) // valid: a finite w_init ≥ 0
	}
	if err := s.checkState(y0); err != nil {
		return nil, err
	}
	rs = s.Settings(y0, rs)
	defer s.setWorkers(s.setWorkers(rs.Workers))
	var tr *Trajectory
	var err error
	if red := s.reducedFor(y0); red != nil {
		red.setWorkers(rs.Workers)
		tr, err = s.runReduced(ctx, red, y0, rs)
	} else {
		tr, err = s.run(ctx, y0, rs)
	}
	if tr != nil {
		tr.Resolved = rs.Resolved()
	}
	return tr, err
}

// run is Run with the settings resolved (Settings).
func (s *System) run(ctx context.Context, y0 []float64, rs RunSettings) (*Trajectory, error) {
	if rs.Times != nil {
		tr, err := s.pass(ctx, y0, rs, s.levels(), nil)
		return s.finish(tr, err, rs)
	}
	if rs.Samples < 2 {
		return nil, fmt.Errorf("flow: Samples = %d, want S ≥ 2 output times (0: %d)", rs.Samples, DefaultSamples)
	}
	if rs.Grid < GridDrops || rs.Grid > GridLog {
		return nil, fmt.Errorf("flow: Grid = %v, want GridDrops, GridLinear or GridLog", rs.Grid)
	}
	if rs.T > 0 && rs.Grid != GridDrops {
		// Placed in advance: reached in one pass, with no extension kept
		// (DOP853's costs three evaluations a step).
		rs.Times, rs.DenseBytes = rs.Grid.Times(rs.T, rs.Samples, nil), 0
		tr, err := s.pass(ctx, y0, rs, s.levels(), nil)
		return s.finish(tr, err, rs)
	}
	first, err := s.firstPass(ctx, y0, rs)
	if first == nil || err != nil || first.Dense() {
		return s.finish(first, err, rs)
	}
	// No continuous extension kept: integrate again, to the output times,
	// locating the drops the first pass found (under a task law) exactly.
	T := rs.T
	if T == 0 {
		T = first.FinalT
	}
	levels := s.levels()
	if levels == nil {
		levels = make([]Transition, 0, len(first.Transitions))
		for _, tn := range first.Transitions {
			levels = append(levels, Transition{M: tn.M, Level: tn.Level})
		}
	}
	rs.Times, rs.DenseBytes = rs.Grid.Times(T, rs.Samples, first.path), 0
	rs.Checkpoint, rs.Resume = nil, nil // a checkpoint is of the first pass
	tr, err := s.pass(ctx, y0, rs, levels, nil)
	if tr != nil {
		stats := first.Stats
		stats.Add(tr.Stats)
		tr.Stats = stats
		if !s.plan.PaperTheory {
			tr.Plateaus = first.Plateaus
		}
	}
	return s.finish(tr, err, rs)
}

// finish completes a Trajectory on its samples: the observed plateaus of
// in-context data, and the test losses when asked for.
func (s *System) finish(tr *Trajectory, err error, rs RunSettings) (*Trajectory, error) {
	if tr == nil {
		return nil, err
	}
	if s.plan.PaperTheory {
		tr.Plateaus = ObservedPlateaus(tr.Times, tr.Loss, tr.Transitions, tr.FinalT)
	}
	if rs.tests.Any() && tr.TestICL == nil && tr.AllStates() {
		n, tests := s.n, s.testLosses()
		tr.TestICL, tr.TestIWL, tr.TestIDG = make([]float64, len(tr.Times)), make([]float64, len(tr.Times)), make([]float64, len(tr.Times))
		for i := range tr.Times {
			tr.TestICL[i], tr.TestIWL[i], tr.TestIDG[i] = tests(tr.States[i*n : (i+1)*n])
		}
	}
	tr.keepTests(rs.tests)
	tr.thinStates(rs.StateEvery)
	return tr, err
}

// firstPass integrates to rs.T, or until converged, keeping the continuous
// extension and the loss path for the drops grid, and samples the grid on
// the extension, or, where the states are thinned, from what it recorded
// at the accepted steps (fromSteps); without an extension it returns the
// run (its FinalT and path) for a second pass. A run that fails returns
// the states it recorded at accepted steps (atSteps).
func (s *System) firstPass(ctx context.Context, y0 []float64, rs RunSettings) (*Trajectory, error) {
	kept := keptStates(rs.Samples, rs.StateEvery)
	out := rs.Samples // the states kept
	if kept != nil {
		out = len(kept)
	}
	rs.Times = []float64{0}
	rs.DenseBytes = denseBound(rs, s.plan, out)
	// The samples of a run that fails: as many as the states kept.
	rec := s.newFirstPassRecord(y0, max(2, out), kept != nil, rs.tests.Any())
	tr, err := s.pass(ctx, y0, rs, s.levels(), rec)
	if tr == nil {
		return nil, err
	}
	if err != nil {
		tr.atSteps(rec)
		return tr, err
	}
	if !tr.Dense() {
		return tr, nil
	}
	T := rs.T
	if T == 0 {
		T = tr.FinalT
	}
	times := rs.Grid.Times(T, rs.Samples, tr.path)
	if kept != nil {
		tr.fromSteps(times, rec)
		return tr, nil
	}
	rec = nil // its states are garbage before the samples are made
	states, loss, err := tr.sample(times, samplingSettings{ctx, rs.SamplingCheckpoint, rs.SamplingResume})
	if err != nil {
		return nil, err
	}
	tr.Times, tr.Loss, tr.States, tr.Sampling = times, loss, states, FromDense
	return tr, nil
}

// pass integrates the flow from y0 (original basis) once, over [0, rs.T] or
// until it converges when rs.T is 0, reaching rs.Times (not nil), and
// records the first falling crossing of each of levels. It records its
// accepted steps in rec (nil: a record of the loss path alone), and keeps
// the loss path (Trajectory.path); under a task law with no levels given
// it reads the drops off the path (findDrops).
func (s *System) pass(ctx context.Context, y0 []float64, rs RunSettings, levels []Transition, rec *passRecord) (*Trajectory, error) {
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
	if rec == nil {
		rec = s.newPassRecord(y0)
	}
	var resume *ode.Snapshot
	if rs.Resume != nil {
		var err error
		if resume, err = s.resumePass(rs.Resume, rec, settle); err != nil {
			return nil, err
		}
	}
	var checkpoint func(*ode.Checkpoint) error
	if rs.Checkpoint != nil {
		c := &Checkpoint{n: s.n, rec: rec, settle: settle}
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
		Observer:     passObserver(rs.Observer, rec, settle, lossAt),
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
	tr.path = rec.endPath(tr.FinalT, tr.FinalLoss)
	if levels == nil && !s.plan.PaperTheory {
		s.findDrops(tr)
	}
	return tr, s.passStatus(tr, res, err, untilConverged, rs)
}

// passObserver records every accepted step in rec, watches for a run
// whose loss has settled, and calls the user's observer.
func passObserver(user func(float64, []float64, float64) error, rec *passRecord, settle *settleDetector,
	lossAt func(float64, []float64) float64) func(*ode.Step) error {
	return func(st *ode.Step) error {
		loss := lossAt(st.T1, st.Y1)
		rec.add(st, loss)
		if settle != nil && settle.add(st.T1, loss) {
			return errSettled
		}
		if user != nil {
			return user(st.T1, st.Y1, loss)
		}
		return nil
	}
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
