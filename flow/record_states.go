package flow

import "math"

// stateRecord keeps at most max of the accepted steps of a run whose end
// is unknown, with their states: the states a first pass returns where it
// does not sample its output times on the extension (passRecord), which
// are states at steps, not at output times, and which stepRecord's
// values at every step could not hold (n values a state). It spreads them
// over the run as DropsGrid spreads output times: a share evenly in time,
// a share evenly in log time (ln(1 + t/τ)) and the rest evenly in the
// fall of the loss. Along each of these coordinates c it keeps the first
// step at or after each multiple of a spacing q; when it keeps more steps
// than its share it doubles q, which keeps those first at or after an
// even multiple, a subset, so the steps stay spread over the whole run
// however long it turns out, and the steps kept do not depend on when q
// doubled. A state is kept in eigen coordinates, as the pass gives it,
// and rotated to the original basis when the states are read (original):
// most are dropped before then, and the rotation is the same then as at
// the step, bit for bit.
type stateRecord struct {
	s               *System
	n, max          int
	coord           [3]spacing
	t, loss, states []float64 // states row-major, in the original basis but where eigen is set
	eigen           []bool    // per row, whether its state is still in eigen coordinates
	hits            [][3]span // per row, the multiples of each coordinate's q it is first at
	l0, gap         float64   // the fall of the loss is (l0 − L)/gap
}

// spacing is one coordinate of a stateRecord: its spacing q (0 until the
// coordinate first moves), its value at the last step, and its share of
// the steps kept.
type spacing struct {
	q, prev float64
	share   int
}

// span is the multiples lo…hi of a spacing that a step is first at or
// after; empty when lo > hi. Integers held as float64: halving is exact.
type span struct{ lo, hi float64 }

func (sp span) empty() bool { return !(sp.lo <= sp.hi) }

// advance returns the multiples of q that c, the coordinate at a new step,
// reaches first.
func (c *spacing) advance(v float64) span {
	if c.share == 0 || !(v > c.prev) || math.IsInf(v, 1) {
		return span{1, 0}
	}
	if c.q == 0 {
		c.q = v
	}
	sp := span{math.Floor(c.prev/c.q) + 1, math.Floor(v / c.q)}
	c.prev = v
	return sp
}

func newStateRecord(s *System, limit int, y0 []float64, l0 float64) *stateRecord {
	r := &stateRecord{s: s, n: s.Len(), max: limit, l0: l0, gap: s.lossGap(l0)}
	// Room for the start and the end: at most limit steps in all, however
	// small (a coordinate of share 0 keeps none; issue 45).
	lin, log, loss := dropsShares(max(limit-2, 0))
	r.coord = [3]spacing{{share: lin}, {share: log}, {share: loss}}
	r.t, r.loss, r.eigen = []float64{0}, []float64{l0}, []bool{false}
	r.states = append(make([]float64, 0, min(limit, 16)*r.n), y0...)
	r.hits = [][3]span{{{1, 0}, {1, 0}, {1, 0}}}
	return r
}

// coords are the record's coordinates at t with loss there: t/τ,
// ln(1 + t/τ) and the fall of the loss, never decreasing.
func (r *stateRecord) coords(t, loss float64) [3]float64 {
	u := t / r.s.Model.Tau
	return [3]float64{u, math.Log1p(u), math.Max(r.coord[2].prev, (r.l0-loss)/r.gap)}
}

// add records the accepted step at t (state yEigen in eigen coordinates)
// if it is the first at or after a multiple of a coordinate's spacing.
func (r *stateRecord) add(t float64, yEigen []float64, loss float64) {
	var hits [3]span
	keep := false
	for k, v := range r.coords(t, loss) {
		hits[k] = r.coord[k].advance(v)
		keep = keep || !hits[k].empty()
	}
	if !keep {
		return
	}
	r.push(t, yEigen, loss, hits)
	for k := range r.coord {
		for r.count(k) > r.coord[k].share {
			r.double(k)
		}
	}
}

// last records the end of the run, whatever the spacings.
func (r *stateRecord) last(t float64, yEigen []float64, loss float64) {
	if r.t[len(r.t)-1] != t {
		r.push(t, yEigen, loss, r.hits[0])
	}
}

// count returns the number of steps kept for coordinate k.
func (r *stateRecord) count(k int) int {
	c := 0
	for _, h := range r.hits {
		if !h[k].empty() {
			c++
		}
	}
	return c
}

// double doubles coordinate k's spacing and drops the steps kept for no
// coordinate (but the start).
func (r *stateRecord) double(k int) {
	r.coord[k].q *= 2
	kept := 1
	for i := 1; i < len(r.t); i++ {
		h := r.hits[i]
		h[k] = span{math.Ceil(h[k].lo / 2), math.Floor(h[k].hi / 2)}
		if h[0].empty() && h[1].empty() && h[2].empty() {
			continue
		}
		r.t[kept], r.loss[kept], r.hits[kept], r.eigen[kept] = r.t[i], r.loss[i], h, r.eigen[i]
		copy(r.states[kept*r.n:(kept+1)*r.n], r.states[i*r.n:(i+1)*r.n])
		kept++
	}
	r.t, r.loss, r.hits, r.eigen, r.states = r.t[:kept], r.loss[:kept], r.hits[:kept], r.eigen[:kept], r.states[:kept*r.n]
}

func (r *stateRecord) push(t float64, yEigen []float64, loss float64, hits [3]span) {
	r.t = append(r.t, t)
	r.loss = append(r.loss, loss)
	r.hits = append(r.hits, hits)
	r.eigen = append(r.eigen, true)
	if k := len(r.states); cap(r.states) < k+r.n { // grown by doubling, to max+1 states: before a spacing doubles
		r.states = append(make([]float64, 0, max(min(2*cap(r.states), (r.max+1)*r.n), k+r.n)), r.states...)
	}
	r.states = append(r.states, yEigen...)
}

// original returns the states kept, each rotated to the original basis
// where it is still in eigen coordinates.
func (r *stateRecord) original() []float64 {
	for i, e := range r.eigen {
		if e {
			row := r.states[i*r.n : (i+1)*r.n]
			r.s.FromEigen(row, row)
			r.eigen[i] = false
		}
	}
	return r.states
}
