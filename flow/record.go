package flow

import (
	"fmt"
	"math"
	"slices"

	"github.com/linattn/linattn/ode"
)

// What the first pass of Run records at its accepted steps (runRecord):
// states spread over the run (recorder), for a run that fails and, where
// the states are thinned, for the output; and, where they are thinned, the
// loss and the test losses at every step (stepRecord), from which the
// output times' values are interpolated (docs/math.md, "Sampling from
// the steps").

// runRecord is the first pass's recorders. steps is nil unless the run
// thins its states (RunSettings.StateEvery > 1); then the recorder's
// states are the output's, and a checkpoint carries both.
type runRecord struct {
	rec     *recorder
	steps   *stepRecord
	tests   func(ye []float64) (icl, iwl, idg float64) // nil: no test losses
	scratch []float64                                  // a state inside a step, eigen coordinates
}

// add records the accepted step st, with the loss at its end.
func (r *runRecord) add(st *ode.Step, loss float64) {
	if r.steps != nil {
		end := r.values(st.Y1, loss)
		m := r.steps.innerNodes(st.T1, end, r.rec.gap)
		for j := 1; j <= m; j++ {
			t := st.T0 + (st.T1-st.T0)*float64(j)/float64(m+1)
			st.Interpolate(r.scratch, t)
			l := r.rec.s.LossEigen(r.scratch)
			r.steps.add(t, r.values(r.scratch, l))
			r.rec.add(t, r.scratch, l)
		}
		r.steps.add(st.T1, end)
	}
	r.rec.add(st.T1, st.Y1, loss)
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
func (r *runRecord) values(ye []float64, loss float64) [4]float64 {
	v := [4]float64{loss}
	if r.tests != nil {
		v[1], v[2], v[3] = r.tests(ye)
	}
	return v
}

// newRunRecord returns the recorders of a first pass from y0 keeping about
// states states and, where thinned is set, the loss and the test losses
// (tests) at up to maxStepNodes nodes.
func (s *System) newRunRecord(y0 []float64, states int, thinned, tests bool) *runRecord {
	l0 := s.Loss(y0)
	r := &runRecord{rec: newRecorder(s, states, y0, l0)}
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

// finish records the end of the run that ended at t with state ye (eigen
// coordinates) and loss there, where its last step did not.
func (r *runRecord) finish(t float64, ye []float64, loss float64) {
	r.rec.last(t, ye, loss)
	if r.thinned() && t > r.steps.t[len(r.steps.t)-1] {
		r.steps.last(t, r.values(ye, loss))
	}
}

// thinned reports whether r records for a run that thins its states (a nil
// r does not).
func (r *runRecord) thinned() bool { return r != nil && r.steps != nil }

// testLossesEigen returns System.testLosses on states in eigen
// coordinates.
func (s *System) testLossesEigen() func(ye []float64) (icl, iwl, idg float64) {
	if s.outer == nil {
		return s.TestLossesEigen
	}
	tests, y := s.testLosses(), make([]float64, s.n)
	return func(ye []float64) (icl, iwl, idg float64) { return tests(s.FromEigen(y, ye)) }
}

// save writes the records for a checkpoint (Checkpoint.Save).
func (r *runRecord) save(fw floatWriter) {
	rec, st := r.rec, r.steps
	for _, c := range rec.coord {
		fw.put(c.q, c.prev)
	}
	fw.vec(rec.t)
	fw.vec(rec.loss)
	hits := make([]float64, 0, 6*len(rec.hits))
	for _, h := range rec.hits {
		for _, sp := range h {
			hits = append(hits, sp.lo, sp.hi)
		}
	}
	fw.vec(hits)
	fw.vec(rec.states)
	fw.put(float64(st.stride), float64(st.count), b2f(st.tests))
	fw.vec(st.t)
	for k := range st.rows() {
		fw.vec(st.val[k])
	}
}

// savedRecord is a runRecord read back from a checkpoint.
type savedRecord struct {
	qPrev         []float64 // q and prev of each coordinate
	t, loss, hits []float64
	states        []float64
	stride, count int
	tests         bool
	stepT         []float64
	stepVal       [4][]float64
}

func readRecord(fr *floatReader) *savedRecord {
	sr := &savedRecord{qPrev: make([]float64, 6)}
	for i := range sr.qPrev {
		sr.qPrev[i] = fr.get()
	}
	sr.t, sr.loss, sr.hits, sr.states = fr.vec(), fr.vec(), fr.vec(), fr.vec()
	sr.stride, sr.count, sr.tests = int(fr.get()), int(fr.get()), fr.get() != 0
	sr.stepT = fr.vec()
	rows := 1
	if sr.tests {
		rows = 4
	}
	for k := range rows {
		sr.stepVal[k] = fr.vec()
	}
	return sr
}

// valid reports whether the record's lengths agree, for states of n values.
func (sr *savedRecord) valid(n int) bool {
	rows := len(sr.t)
	ok := rows > 0 && len(sr.loss) == rows && len(sr.hits) == 6*rows && len(sr.states) == rows*n && sr.stride >= 1
	for k := range 4 {
		want := len(sr.stepT)
		if k > 0 && !sr.tests {
			want = 0
		}
		ok = ok && len(sr.stepVal[k]) == want
	}
	return ok
}

// restore sets the records to those a checkpoint saved.
func (r *runRecord) restore(sr *savedRecord) error {
	rec, st := r.rec, r.steps
	if sr.tests != st.tests || len(sr.states) > (rec.max+1)*rec.n || len(sr.stepT) > st.max {
		return fmt.Errorf("%w: its records are of another run (test losses %v, this one %v)", ErrCheckpoint, sr.tests, st.tests)
	}
	for k := range rec.coord {
		rec.coord[k].q, rec.coord[k].prev = sr.qPrev[2*k], sr.qPrev[2*k+1]
	}
	rec.t, rec.loss = slices.Clone(sr.t), slices.Clone(sr.loss)
	rec.hits = make([][3]span, len(sr.t))
	for i := range rec.hits {
		for k := range 3 {
			rec.hits[i][k] = span{sr.hits[6*i+2*k], sr.hits[6*i+2*k+1]}
		}
	}
	rec.states = append(make([]float64, 0, (rec.max+1)*rec.n), sr.states...)
	st.stride, st.count, st.t = sr.stride, sr.count, slices.Clone(sr.stepT)
	for k := range st.rows() {
		st.val[k] = slices.Clone(sr.stepVal[k])
	}
	return nil
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
