package flow

import (
	"errors"
	"math"
	"sort"
)

// errSettled ends a pass that has settled (settleDetector).
var errSettled = errors.New("flow: settled")

// settleDetector ends a run until converged whose least loss is not known
// (System.MinLoss NaN: a layer that may not reach the least loss L_lb over
// all coefficients, under fixed tasks): after its first drop (a fall of
// drop below L(0)), once the loss has moved by less than tol over the
// whole decade of time [t/10, t], the run has settled. The plateaus of the
// flow after its first drop span less than a decade on the paper's
// examples, or the loss moves more than tol along them (the plateau of the
// in-context against in-weight example spans 1.3 decades and sheds 3·10⁻³,
// tol being 10⁻⁶); docs/math.md, "Least loss".
type settleDetector struct {
	l0, tol, drop float64
	t, loss       []float64 // log-spaced history: a step 1% later than the last kept
}

// add records the accepted step at t and reports whether the run has
// settled.
func (d *settleDetector) add(t, loss float64) bool {
	if n := len(d.t); n == 0 || t >= 1.01*d.t[n-1] {
		d.t, d.loss = append(d.t, t), append(d.loss, loss)
	}
	if d.l0-loss < d.drop || t/10 < d.t[0] {
		return false
	}
	k := sort.SearchFloat64s(d.t, t/10) // the history at t/10 or just after
	return math.Abs(d.loss[k]-loss) < d.tol
}

// LossFloor returns the level a run until converged stops at: MinLoss
// where it is known, else the least loss over all coefficients L_lb, a
// lower bound (docs/math.md, "Least loss").
func (s *System) LossFloor() float64 { return s.lossFloor() }

func (s *System) lossFloor() float64 {
	if l := s.MinLoss(); !math.IsNaN(l) {
		return l
	}
	return s.law.bound
}
