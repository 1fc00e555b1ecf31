package ode

import (
	"sort"

	"github.com/linattn/linattn/ode/internal/link"
)

// The replay and fork machinery of a Solution is not ode's API: package
// ode/replay offers it, through link (an internal package of ode, which
// ode/replay may import and flow may not: hence ode/replay).
func init() {
	link.Solution = link.SolutionFuncs[Solution, Problem, Stats]{
		Fork:         (*Solution).fork,
		SetWorkers:   (*Solution).setWorkers,
		ReplayOrigin: (*Solution).replayOrigin,
		ReplayStats:  (*Solution).replayStats,
		Thinned:      (*Solution).thinned,
	}
}

// replayer takes ROCK4 steps of a Solution again: its own integrator holds
// the state at the start of step pos.
type replayer struct {
	in  *Integrator
	st  *rock4Stepper
	pos int // the step whose start in.y holds; −1 for none
}

// replayTo returns y at the start of the Hermite step k, which stores no y:
// it takes the steps from the nearest earlier step that does (or from where
// the last replay stopped, if that is nearer) with their stored (t, h, ρ).
// ROCK4's step is a function of these and of y (its degree of ρ and h), so
// the values are those of the solve bit for bit.
func (s *Solution) replayTo(k int) []float64 {
	rp := s.replay
	if rp == nil {
		in := NewIntegrator(ROCK4, s.n)
		in.f = s.f
		for i := range in.atol {
			in.atol[i] = 1 // the error norm of a replayed step is not used
		}
		rp = &replayer{in: in, st: in.st.(*rock4Stepper), pos: -1}
		s.replay = rp
	}
	in := rp.in
	c := k
	for s.loc[c].vecs == hermiteBare {
		c--
	}
	if !(rp.pos >= c && rp.pos <= k) {
		copy(in.y, s.values(c)[:s.n])
		s.f(s.t0[c], in.y, in.f0)
		in.stats.FuncEvals++
		rp.pos = c
	}
	for ; rp.pos < k; rp.pos++ {
		j := rp.pos
		rp.st.rho = s.rho[j]
		rp.st.attempt(s.t0[j], s.hTry[j])
		in.stats.Steps++
		in.y, in.ynew = in.ynew, in.y
		in.f0, in.f1 = in.f1, in.f0
	}
	return in.y
}

// replayStats returns the work At has done so far to take thinned steps
// again (ROCK4's and BDF's): the steps, their rejected attempts (BDF's),
// the evaluations of f and, for BDF, the Jacobians and preconditioner
// setups, restores from the kept states included. A solve's Stats do not
// count it.
func (s *Solution) replayStats() Stats {
	var st Stats
	for _, in := range []*Integrator{s.replayIn(), s.bdfReplayIn()} {
		if in != nil {
			st.Add(in.stats)
		}
	}
	st.PerMethod = nil
	return st
}

func (s *Solution) replayIn() *Integrator {
	if s.replay == nil {
		return nil
	}
	return s.replay.in
}

func (s *Solution) bdfReplayIn() *Integrator {
	if s.bdf == nil || s.bdf.rp == nil {
		return nil
	}
	return s.bdf.rp.in
}

// thin brings the stored values under limit by doubling the spacing of the
// Hermite steps that keep y, as often as needed, and reports whether it
// could: the other steps, and the first of each run of Hermite steps, are
// always kept.
func (s *Solution) thin(limit int) bool {
	if s.bdf != nil {
		return s.thinBDF(limit)
	}
	for s.size > limit {
		before := s.size
		s.spacing *= 2
		s.compact()
		if s.size == before {
			return false
		}
	}
	return true
}

// compact drops y from the Hermite steps off the spacing and moves the kept
// values forward in place: a step's values never move to a later position,
// so every copy reads what has not been overwritten yet.
func (s *Solution) compact() {
	n := s.n
	mv := valueMover{s: s}
	runStart := 0
	for k := range s.loc {
		l := &s.loc[k]
		if l.vecs < 0 && (k == 0 || s.loc[k-1].vecs >= 0) {
			runStart = k
		}
		if l.vecs == hermiteBare {
			continue
		}
		if l.vecs == hermiteY && (k-runStart)%s.spacing != 0 {
			*l = stepLoc{block: -1, vecs: hermiteBare}
			continue
		}
		length := n
		if l.vecs >= 0 {
			length = n * (2 + int(l.vecs))
		}
		l.block, l.off = mv.move(l.block, l.off, length)
	}
	mv.end()
	s.runStart = runStart
	s.replay = nil
}

// valueMover moves the kept values of a Solution forward in its blocks
// (compact): values never move to a later position, so every copy reads
// what has not been overwritten yet.
type valueMover struct {
	s      *Solution
	wb, wo int // where the next values go
	size   int // values moved
}

// move copies length values from (block, off) to the write position and
// returns where they went. Capacities vary (a step longer than
// solutionBlockMax has a block of its own); the values' own block always
// fits them, and the blocks skipped have been read. A block left ends
// where its last values do.
func (m *valueMover) move(block, off int32, length int) (int32, int32) {
	s := m.s
	for m.wo+length > cap(s.blocks[m.wb]) {
		s.blocks[m.wb] = s.blocks[m.wb][:m.wo]
		m.wb, m.wo = m.wb+1, 0
	}
	src := s.blocks[block][int(off) : int(off)+length]
	copy(s.blocks[m.wb][:cap(s.blocks[m.wb])][m.wo:m.wo+length], src)
	b, o := int32(m.wb), int32(m.wo)
	m.wo += length
	m.size += length
	return b, o
}

// end keeps the blocks past the last values moved as spares, for the
// values stored after the thinning (newBlock), and sets the size: a solve
// that thins its Solution again and again reuses the same memory.
func (m *valueMover) end() {
	s := m.s
	if len(s.blocks) > 0 {
		s.blocks[m.wb] = s.blocks[m.wb][:m.wo]
		for i := len(s.blocks) - 1; i > m.wb; i-- { // in reverse: newBlock takes them in order
			s.spare = append(s.spare, s.blocks[i][:0])
			s.blocks[i] = nil
		}
		s.blocks = s.blocks[:m.wb+1]
	}
	s.size = m.size
}

// fork returns a Solution that reads s's steps and kept states but
// evaluates with the functions of p (Func and, for BDF's steps, Jac and
// Precond) and with scratch space and replays of its own, whose GMRES
// shares its passes among up to workers processors (Settings.Workers), so
// that At on s and on each of its forks may run in different goroutines.
// Where p's functions compute what the solve's did (an independent copy
// of the same problem), a fork's values are s's bit for bit. s's solve
// must have returned.
func (s *Solution) fork(p Problem, workers int) *Solution {
	c := *s
	c.f = p.Func
	c.fv, c.herm, c.fEnds, c.y0, c.fStep, c.replay = nil, nil, nil, nil, -1, nil
	if s.bdf != nil {
		tr := *s.bdf
		tr.prob.Func, tr.prob.Jac, tr.prob.Precond = p.Func, p.Jac, p.Precond
		tr.rp, tr.parts, tr.vecStep, tr.vecY0, tr.vecs = nil, nil, -1, make([]float64, s.n), nil
		tr.workers = workers
		for range s.bdf.vecs {
			tr.vecs = append(tr.vecs, make([]float64, s.n))
		}
		c.bdf = &tr
	}
	return &c
}

// setWorkers sets the processors the GMRES of s's BDF replays may share
// (Settings.Workers).
func (s *Solution) setWorkers(workers int) {
	if s.bdf == nil {
		return
	}
	s.bdf.workers = workers
	if rp := s.bdf.rp; rp != nil {
		rp.in.workers = workers
	}
}

// thinned reports whether At takes steps of the solve again (the kept
// states were thinned within Settings.DenseLimit): then evaluating s costs
// steps of the solver, and forks (fork) can share the work.
func (s *Solution) thinned() bool {
	return s.spacing > 1 || s.bdf != nil && s.bdf.spacing > 1
}

// stepOf returns the step whose extension At reads at t, which must be in
// the solved interval: the step with t0 ≤ t < t1, or the last.
func (s *Solution) stepOf(t float64) int {
	k := sort.Search(len(s.t1), func(i int) bool { return s.dir*(s.t1[i]-t) > 0 })
	return min(k, len(s.t1)-1)
}

// replayOrigin returns the step from whose kept state At takes steps of
// the solve again to evaluate at t (in the solved interval), or the step
// of t itself where it takes none. Evaluations at times of different
// origins take independent replays, whose values do not depend on the
// order in which they are made (nor on the fork that makes them), so
// forks may share a thinned extension's times by origin.
func (s *Solution) replayOrigin(t float64) int {
	k := s.stepOf(t)
	if s.bdf != nil {
		return s.bdf.knotBefore(k).step
	}
	for k > 0 && s.loc[k].vecs == hermiteBare {
		k--
	}
	return k
}
