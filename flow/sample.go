package flow

import (
	"context"
	"fmt"
	"math"
	"sort"
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

// Grid is the kind of output grid Run samples when RunSettings.Times is nil.
type Grid int

const (
	// GridDrops places ⌊S/4⌋ times equally spaced from 0 to T, ⌊S/4⌋
	// log-spaced from a tenth of the first plateau's end and the others
	// equally spaced in loss (DropsGrid), so that every drop is
	// sampled however short it is; below S = 4 it is GridLinear.
	GridDrops Grid = iota
	// GridLinear places S equally spaced times from 0 to T (LinearGrid).
	GridLinear
	// GridLog places 0 and S−1 log-spaced times from T·10⁻⁶ to T (LogGrid).
	GridLog
)

func (g Grid) String() string {
	switch g {
	case GridDrops:
		return "drops"
	case GridLinear:
		return "lin"
	case GridLog:
		return "log"
	}
	return fmt.Sprintf("Grid(%d)", int(g))
}

// Times returns the s output times of the grid on [0, T]. The drops grid
// needs path, the loss at the accepted steps of a run to T (nil: the
// linear grid).
func (g Grid) Times(T float64, s int, path *LossPath) []float64 {
	switch g {
	case GridLog:
		return LogGrid(T*1e-6, T, s-1)
	case GridDrops:
		if s >= 4 && path != nil {
			return DropsGrid(T, s, *path)
		}
	}
	return LinearGrid(T, s)
}

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

// firstPass integrates to rs.T, or until converged, keeping the continuous
// extension and the loss path for the drops grid, and samples the grid on
// the extension, or, where the states are thinned, from what it recorded
// at the accepted steps (fromSteps); without an extension it returns the
// run (its FinalT and path) for a second pass. A run that fails returns
// the states its recorder kept at accepted steps.
func (s *System) firstPass(ctx context.Context, y0 []float64, rs RunSettings) (*Trajectory, error) {
	kept := keptStates(rs.Samples, rs.StateEvery)
	out := rs.Samples // the states kept
	if kept != nil {
		out = len(kept)
	}
	rs.Times = []float64{0}
	rs.DenseBytes = denseBound(rs, s.plan, out)
	// The samples of a run that fails: as many as the states kept.
	rec := s.newRunRecord(y0, max(2, out), kept != nil, rs.tests.Any())
	tr, err := s.pass(ctx, y0, rs, s.levels(), rec)
	if tr == nil {
		return nil, err
	}
	if err != nil {
		rec.finish(tr.FinalT, s.ToEigen(nil, tr.Final), tr.FinalLoss)
		r := rec.rec
		tr.Times, tr.Loss, tr.States, tr.Sampling = r.t, r.loss, r.states, AtSteps
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

// fromSteps samples the first pass tr at times from what rec recorded at
// its accepted steps (Sampling Interpolated): the loss and the test losses
// interpolated between the steps, the states those rec kept.
func (tr *Trajectory) fromSteps(times []float64, rec *runRecord) {
	rec.finish(tr.FinalT, tr.sys.ToEigen(nil, tr.Final), tr.FinalLoss)
	v := rec.steps.at(times)
	tr.Times, tr.Loss, tr.Sampling = times, v[0], Interpolated
	tr.States, tr.StateTimes = rec.rec.states, rec.rec.t
	if rec.tests != nil {
		tr.TestICL, tr.TestIWL, tr.TestIDG = v[1], v[2], v[3]
	}
}

// pathRecorder keeps the loss at the accepted steps of a pass, a step only
// when the loss has moved by tol = 10⁻⁶·|L(0) − L_min| since the last one
// kept: enough to place the drops grid and read the drops off, and bounded
// however long the plateaus are.
type pathRecorder struct {
	path LossPath
	tol  float64
}

func newPathRecorder(s *System, y0 []float64) *pathRecorder {
	l0 := s.Loss(y0)
	return &pathRecorder{path: LossPath{T: []float64{0}, Loss: []float64{l0}}, tol: 1e-6 * s.lossGap(l0)}
}

// lossGap returns the scale of a run's fall in loss from l0: |l0 − L_min|,
// or |l0| where the least loss is not known.
func (s *System) lossGap(l0 float64) float64 {
	gap := l0 - s.MinLoss()
	if math.IsNaN(gap) {
		gap = l0
	}
	return math.Abs(gap)
}

func (p *pathRecorder) add(t, loss float64) {
	if math.Abs(loss-p.path.Loss[len(p.path.Loss)-1]) >= p.tol {
		p.path.T, p.path.Loss = append(p.path.T, t), append(p.path.Loss, loss)
	}
}

// end records the end of the pass and returns the path.
func (p *pathRecorder) end(t, loss float64) *LossPath {
	if last := len(p.path.T) - 1; p.path.T[last] != t {
		p.path.T, p.path.Loss = append(p.path.T, t), append(p.path.Loss, loss)
	}
	return &p.path
}

// findDrops reads the plateaus and drops off the loss path of a run under
// a task law (FindDrops) and, when the run kept its continuous extension,
// locates each crossing on it by bisection, with the state there.
func (s *System) findDrops(tr *Trajectory) {
	p := tr.path
	tr.Plateaus, tr.Transitions = FindDrops(p.T, p.Loss)
	if tr.dense == nil {
		return
	}
	ye := make([]float64, s.n)
	lossAt := func(t float64) float64 {
		tr.dense.At(ye, t)
		return s.LossEigen(ye)
	}
	for i := range tr.Transitions {
		tn := &tr.Transitions[i]
		k := sort.SearchFloat64s(p.T, tn.T) // p.T[k-1] < T ≤ p.T[k]
		lo, hi := p.T[max(k-1, 0)], p.T[min(k, len(p.T)-1)]
		for j := 0; j < 200 && hi-lo > 4*(math.Nextafter(hi, math.Inf(1))-hi); j++ {
			mid := lo + 0.5*(hi-lo)
			if lossAt(mid) > tn.Level {
				lo = mid
			} else {
				hi = mid
			}
		}
		tn.T = hi
		tr.dense.At(ye, hi)
		tn.State = s.FromEigen(nil, ye)
	}
}
