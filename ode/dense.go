package ode

import (
	"fmt"
	"sort"
)

// interpolate writes the continuous extension of the current step at t.
func (in *Integrator) interpolate(dst []float64, t float64) {
	evalHairer(dst, in.y, in.st.dense(in.t0, in.h), (t-in.t0)/in.h)
}

// hermite sets the Hairer-form vectors of the cubic Hermite interpolant of
// (y₀, f₀) and (y₁, f₁) over a step h: F₁ = y₁ − y₀, F₂ = h f₀ − F₁,
// F₃ = F₁ − h f₁ − F₂ (HNW I, II.6, eq. 6.7).
func hermite(vecs [][]float64, y0, y1, f0, f1 []float64, h float64) {
	f1v, f2v, f3v := vecs[0], vecs[1], vecs[2]
	for i := range y0 {
		d := y1[i] - y0[i]
		f1v[i] = d
		f2v[i] = h*f0[i] - d
		f3v[i] = d - h*f1[i] - f2v[i]
	}
}

// evalHairer evaluates y + θ(F₁ + (1−θ)(F₂ + θ(F₃ + …))) into dst.
func evalHairer(dst, y []float64, f [][]float64, theta float64) {
	th1 := 1 - theta
	last := len(f) - 1
	for i := range dst {
		acc := f[last][i]
		for j := last - 1; j >= 0; j-- {
			if j%2 == 0 {
				acc = f[j][i] + th1*acc
			} else {
				acc = f[j][i] + theta*acc
			}
		}
		dst[i] = y[i] + theta*acc
	}
}

// Solution is the continuous extension of a whole solve (Settings.Dense),
// evaluable at any t in the solved interval. At reuses scratch space, so a
// Solution must not be read by several goroutines at once.
//
// Each step stores y and f(t, y) at its start, then its Hairer-form vectors
// (their number varies with the method), contiguously, in blocks that double
// from solutionBlockMin to solutionBlockMax values, so that a long solve
// never copies what it stored and a short one allocates little. A step whose
// extension is the cubic Hermite interpolant (ROCK4's) stores only its y:
// y₁ is the start of the next step (or the tail), and At evaluates f at the
// two ends again, which gives the solver's f₀ and f₁ bit for bit since f is
// a function of (t, y). Long stiff solves store one vector per step instead
// of two: the memory, and the time to touch it, are halved.
type Solution struct {
	n       int
	dir     float64
	f       Func      // the problem's right-hand side, for Hermite steps
	t0      []float64 // start of each step
	t1      []float64 // end of each step (the last may be cut by a terminal event)
	h       []float64 // full length of each step
	loc     []stepLoc
	blocks  [][]float64
	size    int       // values stored
	tail    []float64 // y at the end of the last (full) step
	cutEnd  bool      // a terminal event cut the last step: tail is past the end
	fv      [][]float64
	herm    [][]float64  // scratch for Hermite vectors
	fEnds   []float64    // f at both ends of Hermite step fStep (2n)
	fStep   int          // the step fEnds belongs to, or −1
	source  *blockSource // full-size blocks while the solve runs
	solving bool
}

// endSolve stops the block source when the solve returns.
func (s *Solution) endSolve() {
	s.solving = false
	if s.source != nil {
		s.source.close()
		s.source = nil
	}
}

// stepLoc locates a step's values; vecs < 0 marks a Hermite step.
type stepLoc struct{ block, off, vecs int32 }

const (
	solutionBlockMin = 1 << 12 // values (32 KiB)
	solutionBlockMax = 1 << 17 // values (1 MiB)
)

// add stores a step with its Hairer-form vectors f.
func (s *Solution) add(t0, h, t1 float64, y, fy, y1 []float64, f [][]float64) {
	s.store(t0, h, t1, int32(len(f)), append([][]float64{y, fy}, f...))
	s.tail = append(s.tail[:0], y1...)
}

// addHermite stores a step whose extension is the cubic Hermite
// interpolant of (y0, f(t0, y0)) and (y1, f(t0+h, y1)).
func (s *Solution) addHermite(t0, h, t1 float64, y0, y1 []float64) {
	s.store(t0, h, t1, -1, [][]float64{y0})
	s.tail = append(s.tail[:0], y1...)
}

// cut ends the last step at t1 (a terminal event).
func (s *Solution) cut(t1 float64) { s.t1[len(s.t1)-1], s.cutEnd = t1, true }

func (s *Solution) store(t0, h, t1 float64, vecs int32, parts [][]float64) {
	s.t0 = append(s.t0, t0)
	s.t1 = append(s.t1, t1)
	s.h = append(s.h, h)
	need := s.n * len(parts)
	last := len(s.blocks) - 1
	if last < 0 || cap(s.blocks[last])-len(s.blocks[last]) < need {
		size := solutionBlockMin
		if last >= 0 {
			size = min(2*cap(s.blocks[last]), solutionBlockMax)
		}
		if size == solutionBlockMax && s.solving && s.source == nil {
			s.source = newBlockSource() // a long solve: blocks are made ahead from now on
		}
		if size == solutionBlockMax && need <= size && s.source != nil {
			s.blocks = append(s.blocks, s.source.get())
		} else {
			s.blocks = append(s.blocks, make([]float64, 0, max(need, size)))
		}
		last++
	}
	b := s.blocks[last]
	s.loc = append(s.loc, stepLoc{block: int32(last), off: int32(len(b)), vecs: vecs})
	for _, p := range parts {
		b = append(b, p...)
	}
	s.blocks[last] = b
	s.size += need
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
	// The step with t0 ≤ t < t1; at a step's start its stored y is returned
	// exactly, and at the solve's end the stored final state, as the solve
	// itself reports states at step ends.
	k := sort.Search(len(s.t1), func(i int) bool { return s.dir*(s.t1[i]-t) > 0 })
	if k == len(s.t1) {
		k--
		if t == s.t1[k] && !s.cutEnd {
			return append(dst[:0], s.tail...), nil
		}
	}
	data := s.values(k)
	if t == s.t0[k] {
		return append(dst[:0], data[:n]...), nil
	}
	s.fv = s.fv[:0]
	if l := s.loc[k]; l.vecs >= 0 {
		for j := 2; j < 2+int(l.vecs); j++ {
			s.fv = append(s.fv, data[j*n:(j+1)*n])
		}
	} else {
		s.hermiteVectors(k)
		s.fv = append(s.fv, s.herm...)
	}
	evalHairer(dst, data[:n], s.fv, (t-s.t0[k])/s.h[k])
	return dst, nil
}

// hermiteVectors sets s.herm for the Hermite step k, evaluating f at its
// ends unless the previous call did (At on sorted times stays in a step).
func (s *Solution) hermiteVectors(k int) {
	n := s.n
	y0, y1 := s.values(k)[:n], s.tail
	if k+1 < len(s.loc) {
		y1 = s.values(k + 1)[:n]
	}
	if len(s.herm) == 0 {
		s.herm = [][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
		s.fEnds = make([]float64, 2*n)
		s.fStep = -1
	}
	f0, f1 := s.fEnds[:n], s.fEnds[n:]
	if s.fStep != k {
		s.f(s.t0[k], y0, f0)
		s.f(s.t0[k]+s.h[k], y1, f1)
		s.fStep = k
	}
	hermite(s.herm, y0, y1, f0, f1, s.h[k])
}

// values returns the stored values of step k, from its y on.
func (s *Solution) values(k int) []float64 {
	l := s.loc[k]
	return s.blocks[l.block][int(l.off):]
}
