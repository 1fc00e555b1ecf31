package flow

import (
	"fmt"
	"math"
	"slices"

	"github.com/linattn/linattn/internal/floatio"
	"github.com/linattn/linattn/ode"
)

// passRecord is what a pass of Run records at its accepted steps
// (passObserver), for what its output times do not give. Every pass
// keeps the loss path, from which Run places the drops grid and reads the
// drops off under a task law: a step only where the loss has moved by
// pathTol = 10⁻⁶·|L(0) − L_min| since the last one kept, which is enough
// for both and bounded however long the plateaus are. Run's first pass,
// whose output times are not known while it runs, records besides the
// samples it may have to make from its steps (sample.go): states spread
// over the run (stateRecord), the output of a run that fails (Sampling
// AtSteps) and of one that thins its states, which also records the loss
// and the test losses at its steps (stepRecord) to interpolate them at
// the output times (Sampling Interpolated; docs/math.md, "Sampling from
// the steps"). A checkpoint carries the path and a thinned first pass's
// records (Checkpoint.Save).
type passRecord struct {
	path    LossPath
	pathTol float64
	states  *stateRecord                               // nil but in a first pass
	steps   *stepRecord                                // nil unless the first pass thins its states
	tests   func(ye []float64) (icl, iwl, idg float64) // with steps: the test losses, nil for none
	scratch []float64                                  // with steps: a state inside a step, eigen coordinates
	s       *System
}

// newPassRecord returns the record of a pass from y0 (original basis): the
// loss path.
func (s *System) newPassRecord(y0 []float64) *passRecord {
	l0 := s.Loss(y0)
	return &passRecord{s: s, path: LossPath{T: []float64{0}, Loss: []float64{l0}}, pathTol: 1e-6 * s.lossGap(l0)}
}

// newFirstPassRecord returns the record of a first pass from y0 that keeps
// about states states and, where thinned is set, the loss and the test
// losses (tests) at up to maxStepNodes nodes.
func (s *System) newFirstPassRecord(y0 []float64, states int, thinned, tests bool) *passRecord {
	r := s.newPassRecord(y0)
	l0 := r.path.Loss[0]
	r.states = newStateRecord(s, states, y0, l0)
	if !thinned {
		return r
	}
	r.steps, r.scratch = newStepRecord(maxStepNodes, tests), make([]float64, s.n)
	if tests {
		r.tests = s.testLossesEigen()
	}
	r.steps.add(0, r.values(s.ToEigen(nil, y0), l0))
	return r
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

// add records the accepted step st, with the loss at its end.
func (r *passRecord) add(st *ode.Step, loss float64) {
	if math.Abs(loss-r.path.Loss[len(r.path.Loss)-1]) >= r.pathTol {
		r.path.T, r.path.Loss = append(r.path.T, st.T1), append(r.path.Loss, loss)
	}
	if r.states == nil {
		return
	}
	if r.steps != nil {
		end := r.values(st.Y1, loss)
		m := r.steps.innerNodes(st.T1, end, r.states.gap)
		for j := 1; j <= m; j++ {
			t := st.T0 + (st.T1-st.T0)*float64(j)/float64(m+1)
			st.Interpolate(r.scratch, t)
			l := r.s.LossEigen(r.scratch)
			r.steps.add(t, r.values(r.scratch, l))
			r.states.add(t, r.scratch, l)
		}
		r.steps.add(st.T1, end)
	}
	r.states.add(st.T1, st.Y1, loss)
}

// The step record's nodes inside a step (stepRecord.innerNodes): as many
// as bring the error of the polynomial through the nodes before the step,
// extrapolated to its end, down to nodeTol of the loss's fall (lossGap)
// at the interpolation's rate, h⁶, at most maxInnerNodes. Extrapolation
// errs more than interpolation, so the nodes follow the drops, where one
// step of DOP853 covers up to a tenth of the fall: on the separate
// model's D = 6 run (TestStateEvery) the loss interpolated between step
// ends alone was off by 1.1·10⁻⁴ of the fall, with these nodes by
// 1.35·10⁻⁶, less than the loss from the extension (1.64·10⁻⁶).
const (
	nodeTol       = 1e-9
	maxInnerNodes = 32
)

// values returns the loss and, with tests, the test losses at ye (eigen
// coordinates) where the loss is loss.
func (r *passRecord) values(ye []float64, loss float64) [4]float64 {
	v := [4]float64{loss}
	if r.tests != nil {
		v[1], v[2], v[3] = r.tests(ye)
	}
	return v
}

// endPath records the end of the pass at t, with its loss, on the path,
// where its last step did not, and returns the path.
func (r *passRecord) endPath(t, loss float64) *LossPath {
	if last := len(r.path.T) - 1; r.path.T[last] != t {
		r.path.T, r.path.Loss = append(r.path.T, t), append(r.path.Loss, loss)
	}
	p := r.path // not r's: the Trajectory keeps the path, not the states
	return &p
}

// last records the end of a first pass that ended at t with state ye
// (eigen coordinates) and loss there, where its last step did not.
func (r *passRecord) last(t float64, ye []float64, loss float64) {
	r.states.last(t, ye, loss)
	if r.thinned() && t > r.steps.t[len(r.steps.t)-1] {
		r.steps.last(t, r.values(ye, loss))
	}
}

// thinned reports whether r records for a first pass that thins its
// states.
func (r *passRecord) thinned() bool { return r.steps != nil }

// testLossesEigen returns System.testLosses on states in eigen
// coordinates.
func (s *System) testLossesEigen() func(ye []float64) (icl, iwl, idg float64) {
	if s.outer == nil {
		return s.TestLossesEigen
	}
	tests, y := s.testLosses(), make([]float64, s.n)
	return func(ye []float64) (icl, iwl, idg float64) { return tests(s.FromEigen(y, ye)) }
}

// save writes the records of a thinned first pass for a checkpoint
// (Checkpoint.Save, which writes the path).
func (r *passRecord) save(fw floatio.Writer) {
	rec, st := r.states, r.steps
	for _, c := range rec.coord {
		fw.Put(c.q, c.prev)
	}
	fw.Vec(rec.t)
	fw.Vec(rec.loss)
	hits := make([]float64, 0, 6*len(rec.hits))
	for _, h := range rec.hits {
		for _, sp := range h {
			hits = append(hits, sp.lo, sp.hi)
		}
	}
	fw.Vec(hits)
	fw.Vec(rec.original())
	fw.Put(float64(st.stride), float64(st.count))
	fw.Bool(st.tests)
	fw.Vec(st.t)
	for k := range st.rows() {
		fw.Vec(st.val[k])
	}
}

// readRecords reads what save wrote into the records of r, which the run
// that resumes takes over (restore), and reports whether their lengths
// agree, for states of n values.
func (r *passRecord) readRecords(fr *floatio.Reader, n int) bool {
	rec, st := &stateRecord{}, &stepRecord{}
	for k := range rec.coord {
		rec.coord[k].q, rec.coord[k].prev = fr.Get(), fr.Get()
	}
	var hits []float64
	rec.t, rec.loss, hits, rec.states = fr.Vec(), fr.Vec(), fr.Vec(), fr.Vec()
	st.stride, st.count, st.tests = int(fr.Get()), int(fr.Get()), fr.Bool()
	st.t = fr.Vec()
	for k := range st.rows() {
		st.val[k] = fr.Vec()
	}
	r.states, r.steps = rec, st
	rows := len(rec.t)
	ok := rows > 0 && len(rec.loss) == rows && len(hits) == 6*rows && len(rec.states) == rows*n && st.stride >= 1
	for k := range 4 {
		want := len(st.t)
		if k >= st.rows() {
			want = 0
		}
		ok = ok && len(st.val[k]) == want
	}
	if ok {
		rec.hits = make([][3]span, rows)
		for i := range rec.hits {
			for k := range 3 {
				rec.hits[i][k] = span{hits[6*i+2*k], hits[6*i+2*k+1]}
			}
		}
	}
	return ok
}

// restore sets r to the record saved of the pass a checkpoint stopped:
// its path and, for a first pass that thins its states, its records,
// which must fit r's.
func (r *passRecord) restore(saved *passRecord) error {
	if r.thinned() {
		rec, st, sr, ss := r.states, r.steps, saved.states, saved.steps
		if ss.tests != st.tests || len(sr.states) > (rec.max+1)*rec.n || len(ss.t) > st.max {
			return fmt.Errorf("%w: its records are of another run (test losses %v, this one %v)", ErrCheckpoint, ss.tests, st.tests)
		}
		for k := range rec.coord {
			rec.coord[k].q, rec.coord[k].prev = sr.coord[k].q, sr.coord[k].prev
		}
		rec.t, rec.loss, rec.hits = slices.Clone(sr.t), slices.Clone(sr.loss), slices.Clone(sr.hits)
		rec.eigen = make([]bool, len(rec.t)) // a checkpoint holds the original basis
		rec.states = append(make([]float64, 0, (rec.max+1)*rec.n), sr.states...)
		st.stride, st.count, st.t = ss.stride, ss.count, slices.Clone(ss.t)
		for k := range st.rows() {
			st.val[k] = slices.Clone(ss.val[k])
		}
	}
	r.path = LossPath{T: slices.Clone(saved.path.T), Loss: slices.Clone(saved.path.Loss)}
	return nil
}
