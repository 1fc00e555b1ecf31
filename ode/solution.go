package ode

import (
	"fmt"
	"sort"
)

// Solution is the continuous extension of a whole solve (Settings.Dense),
// evaluable at any t in the solved interval. At reuses scratch space, so a
// Solution must not be read by several goroutines at once (each can have a
// fork of its own: package ode/replay). It keeps the problem's Func and calls it again for
// ROCK4's and BDF's steps (below), so the values it gives are the solve's
// only while Func (and for BDF Jac and Precond) stay what they were (see
// Func); scipy's DenseOutput, which stores every step's polynomial, never
// calls fun again, at twice the memory for ROCK4's steps here and with no
// bound for BDF's.
//
// Each step stores y and f(t, y) at its start, then its Hairer-form vectors
// (their number varies with the method), contiguously, in blocks that double
// from solutionBlockMin to solutionBlockMax values, so that a long solve
// never copies what it stored and a short one allocates little.
//
// A step whose extension is the cubic Hermite interpolant (ROCK4's) stores
// at most its y: y₁ is the start of the next step (or the tail), and At
// evaluates f at the two ends again, which gives the solver's f₀ and f₁ bit
// for bit since f is a function of (t, y). Such a step is also a function
// of (t, h, y, ρ), so when the stored values outgrow Settings.DenseLimit the
// Solution thins them (see thin): within each run of consecutive Hermite
// steps it keeps y only at every spacing-th step, and At takes the steps in
// between again from the nearest kept y (replay), with the same arithmetic
// and the same results.
//
// A BDF solve keeps the state of the solve (its Nordsieck array and the
// rest) at the steps' ends, thinned in the same way when it outgrows
// DenseLimit, and At takes the steps between kept states again (bdfTrack).
type Solution struct {
	n      int
	dir    float64
	f      Func      // the problem's right-hand side, for Hermite steps
	t0     []float64 // start of each step
	t1     []float64 // end of each step (the last may be cut by a terminal event)
	h      []float64 // full length of each step
	hTry   []float64 // the step size a Hermite step was attempted with
	rho    []float64 // and its spectral-radius bound (0 for other steps)
	loc    []stepLoc
	blocks [][]float64
	size   int       // values stored
	tail   []float64 // y at the end of the last (full) step
	cutEnd bool      // a terminal event cut the last step: tail is past the end

	spacing  int // Hermite steps keep y at every spacing-th step of their run
	runStart int // first step of the current run of Hermite steps

	fv     [][]float64
	herm   [][]float64 // scratch for Hermite vectors
	y0     []float64   // scratch for the start of a Hermite step
	fEnds  []float64   // f at both ends of Hermite step fStep (2n)
	fStep  int         // the step fEnds belongs to, or −1
	replay *replayer

	source  *blockSource // full-size blocks while the solve runs
	solving bool

	bdf *bdfTrack // the record of a BDF solve, whose steps are all BDF's

	spare [][]float64 // blocks emptied by thinning, for the values that follow
}

// stepLoc locates a step's values: vecs ≥ 0 Hairer-form vectors follow y
// and f; hermiteY marks a Hermite step that stores y, hermiteBare one that
// stores nothing (block −1).
type stepLoc struct{ block, off, vecs int32 }

const (
	hermiteY    = -1
	hermiteBare = -2
)

const (
	solutionBlockMin = 1 << 12 // values (32 KiB)
	solutionBlockMax = 1 << 17 // values (1 MiB)
)

func newSolution(n int, dir float64, f Func) *Solution {
	return &Solution{n: n, dir: dir, f: f, spacing: 1, fStep: -1, solving: true}
}

// endSolve stops the block source when the solve returns.
func (s *Solution) endSolve() {
	s.solving, s.spare = false, nil
	if s.source != nil {
		s.source.close()
		s.source = nil
	}
}

// add stores a step with its Hairer-form vectors f.
func (s *Solution) add(t0, h, t1 float64, y, fy, y1 []float64, f [][]float64) {
	s.hTry, s.rho = append(s.hTry, h), append(s.rho, 0)
	s.store(t0, h, t1, int32(len(f)), append([][]float64{y, fy}, f...))
	s.tail = append(s.tail[:0], y1...)
}

// addHermite stores a step whose extension is the cubic Hermite
// interpolant of (y0, f(t0, y0)) and (y1, f(t0+h, y1)); hTry and rho are
// what the step was attempted with.
func (s *Solution) addHermite(t0, h, t1, hTry, rho float64, y0, y1 []float64) {
	k := len(s.t0)
	if k == 0 || s.loc[k-1].vecs >= 0 {
		s.runStart = k
	}
	s.hTry, s.rho = append(s.hTry, hTry), append(s.rho, rho)
	if (k-s.runStart)%s.spacing == 0 {
		s.store(t0, h, t1, hermiteY, [][]float64{y0})
	} else {
		s.store(t0, h, t1, hermiteBare, nil)
	}
	s.tail = append(s.tail[:0], y1...)
}

// cut ends the last step at t1 (a terminal event).
func (s *Solution) cut(t1 float64) { s.t1[len(s.t1)-1], s.cutEnd = t1, true }

func (s *Solution) store(t0, h, t1 float64, vecs int32, parts [][]float64) {
	s.t0 = append(s.t0, t0)
	s.t1 = append(s.t1, t1)
	s.h = append(s.h, h)
	block, off := s.storeValues(parts)
	s.loc = append(s.loc, stepLoc{block: block, off: off, vecs: vecs})
}

// storeValues appends parts, each of n values, to the blocks and returns
// where they start (block −1 for none).
func (s *Solution) storeValues(parts [][]float64) (block, off int32) {
	need := s.n * len(parts)
	if need == 0 {
		return -1, 0
	}
	last := len(s.blocks) - 1
	if last < 0 || cap(s.blocks[last])-len(s.blocks[last]) < need {
		s.blocks = append(s.blocks, s.newBlock(need, last))
		last++
	}
	b := s.blocks[last]
	block, off = int32(last), int32(len(b))
	for _, p := range parts {
		b = append(b, p...)
	}
	s.blocks[last] = b
	s.size += need
	return block, off
}

// newBlock returns an empty block for at least need values after block last.
func (s *Solution) newBlock(need, last int) []float64 {
	size := solutionBlockMin
	if last >= 0 {
		size = min(2*cap(s.blocks[last]), solutionBlockMax)
	}
	if k := len(s.spare) - 1; k >= 0 && cap(s.spare[k]) >= max(need, size) {
		b := s.spare[k]
		s.spare[k] = nil
		s.spare = s.spare[:k]
		return b
	}
	if size == solutionBlockMax && s.solving && s.source == nil {
		s.source = newBlockSource() // a long solve: blocks are made ahead from now on
	}
	if size == solutionBlockMax && need <= size && s.source != nil {
		return s.source.get()
	}
	return make([]float64, 0, max(need, size))
}

// Steps returns the number of stored steps.
func (s *Solution) Steps() int { return len(s.t0) }

// Span returns the first and last time covered.
func (s *Solution) Span() (t0, t1 float64) {
	if len(s.t0) == 0 {
		return 0, 0
	}
	return s.t0[0], s.t1[len(s.t1)-1]
}

// At writes y(t) into dst, which must have the state's length, and returns
// dst. It returns an error when t is outside the solved interval.
func (s *Solution) At(dst []float64, t float64) ([]float64, error) {
	if len(dst) != s.n {
		panic(fmt.Sprintf("ode: Solution.At: len(dst) = %d, want %d", len(dst), s.n))
	}
	a, b := s.Span()
	if len(s.t0) == 0 || s.dir*(t-a) < 0 || s.dir*(t-b) > 0 {
		return dst, fmt.Errorf("ode: Solution.At: t = %g is outside the solved interval [%g, %g]", t, a, b)
	}
	n := s.n
	// The step with t0 ≤ t < t1; at a step's start its y is returned
	// exactly, and at the solve's end the final state, as the solve itself
	// reports states at step ends.
	k := sort.Search(len(s.t1), func(i int) bool { return s.dir*(s.t1[i]-t) > 0 })
	if k == len(s.t1) {
		k--
		if t == s.t1[k] && !s.cutEnd {
			return append(dst[:0], s.tail...), nil
		}
	}
	if s.bdf != nil {
		return s.bdfAt(dst, t, k)
	}
	if t == s.t0[k] {
		return append(dst[:0], s.startOf(k)...), nil
	}
	s.fv = s.fv[:0]
	var y0 []float64
	if l := s.loc[k]; l.vecs >= 0 {
		data := s.values(k)
		y0 = data[:n]
		for j := 2; j < 2+int(l.vecs); j++ {
			s.fv = append(s.fv, data[j*n:(j+1)*n])
		}
	} else {
		y0 = s.hermiteVectors(k)
		s.fv = append(s.fv, s.herm...)
	}
	evalHairer(dst, y0, s.fv, (t-s.t0[k])/s.h[k])
	return dst, nil
}

// hermiteVectors sets s.herm for the Hermite step k and returns its y₀,
// evaluating f at its ends unless the previous call did (At on sorted times
// stays in a step).
func (s *Solution) hermiteVectors(k int) []float64 {
	n := s.n
	if len(s.herm) == 0 {
		s.herm = [][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
		s.fEnds = make([]float64, 2*n)
		s.y0 = make([]float64, n)
	}
	y0 := append(s.y0[:0], s.startOf(k)...) // startOf(k+1) may move a replay on
	y1 := s.startOf(k + 1)
	f0, f1 := s.fEnds[:n], s.fEnds[n:]
	if s.fStep != k {
		s.f(s.t0[k], y0, f0)
		s.f(s.t0[k]+s.h[k], y1, f1)
		s.fStep = k
	}
	hermite(s.herm, y0, y1, f0, f1, s.h[k])
	return y0
}

// startOf returns y at the start of step k (k = Steps() gives the tail),
// stored or replayed; the slice is valid until the next call.
func (s *Solution) startOf(k int) []float64 {
	switch {
	case k == len(s.loc):
		return s.tail
	case s.loc[k].vecs == hermiteBare:
		return s.replayTo(k)
	default:
		return s.values(k)[:s.n]
	}
}

// values returns the stored values of step k, from its y on.
func (s *Solution) values(k int) []float64 {
	l := s.loc[k]
	return s.blocks[l.block][int(l.off):]
}
