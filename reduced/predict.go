package reduced

import (
	"math"

	"github.com/linattn/linattn/flow"
)

// PredictDrops returns a predicted time for each of the run's transitions,
// NaN where there is none. Merged model: MergedDropTime from y0. Separate
// rank-one model: t_{m−1} plus the 1-D time (paper eq. 1Ddynamics) for the
// head that learns e_m (learningHead at t_m) to go from its value weight at
// t_{m−1} to the half-way value. The ansatz does not hold yet at t_{m−1},
// so this is the paper's order-of-magnitude estimate; Compare starts the
// 1-D theory where it holds. y0 and the transition states are in the
// original basis.
func PredictDrops(s *flow.System, y0 []float64, trans []flow.Transition) []float64 {
	out := make([]float64, len(trans))
	for i := range out {
		out[i] = math.NaN()
	}
	if s.Model.Kind == flow.Merged {
		if len(trans) == 1 {
			if t, err := MergedDropTime(s, y0); err == nil {
				out[0] = t
			}
		}
		return out
	}
	if s.Model.R != 1 {
		return out
	}
	lam, a := s.Data.Lambda(), s.Data.AEigenvalues()
	used := make([]bool, s.Model.H)
	prevT, prev := 0.0, y0
	for m, tn := range trans {
		if tn.M != m+1 {
			break
		}
		head := learningHead(s, s.ToEigen(nil, tn.State), m, used)
		an, err := NewAnsatz(lam[m], a[m], s.Model.Tau)
		if head < 0 || err != nil {
			break
		}
		out[m] = an.halfWayFrom(prevT, math.Abs(prev[head]))
		prevT, prev = tn.T, tn.State
	}
	return out
}

// learningHead returns the free head whose key is best aligned with the
// eigenvector e_{m+1} (m counts from 0) at the state ye (eigen coordinates)
// and marks it used; −1 when every head is used. The value weights are
// invariant under the rotation to eigen coordinates.
func learningHead(s *flow.System, ye []float64, m int, used []bool) int {
	keys, _ := s.AlignmentEigen(ye)
	dim := s.Dim()
	head, best := -1, -1.0
	for i := range used {
		if !used[i] && keys[i*dim+m] > best {
			head, best = i, keys[i*dim+m]
		}
	}
	if head >= 0 {
		used[head] = true
	}
	return head
}

// halfWayFrom returns start plus the 1-D time from the value weight entry
// to the half-way value, or NaN unless 0 < entry < HalfWay.
func (an Ansatz) halfWayFrom(start, entry float64) float64 {
	if !(entry > 0 && entry < an.HalfWay()) {
		return math.NaN()
	}
	return start + an.timeTo(entry, an.HalfWay())
}
