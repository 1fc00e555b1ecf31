package flow

import (
	"fmt"
	"math"
	"sort"

	"github.com/linattn/linattn/ode"
)

// Transition is a crossing of the loss through the level half-way between
// consecutive plateau levels: for the separate model the m-th drop, from
// L(M_{m−1}) to L(M_m), m = 1..D (the times t_m of the paper's appendix figure attnS-timedemo); for the
// merged model the single drop from L(M_0) to L*, reported as m = D.
type Transition struct {
	M     int
	Level float64 // (L(M_{m−1}) + L(M_m))/2, or (L(M_0) + L*)/2 for merged
	T     float64
	State []float64 // the state at T, original basis
}

// String describes the drop by m, time and level, without its state.
func (tn Transition) String() string {
	return fmt.Sprintf("drop %d at t = %.6g (L = %.6g)", tn.M, tn.T, tn.Level)
}

// levels returns the half-way levels whose crossings Run records: those
// of the plateau levels L(M_m) for in-context data, none under another
// task law, whose drops are read off the run (findDrops).
func (s *System) levels() []Transition {
	if !s.plan.PaperTheory {
		return nil
	}
	pl := s.Data.PlateauLevels()
	d := s.d
	if s.Model.Kind == Merged {
		return []Transition{{M: d, Level: 0.5 * (pl[0] + pl[d])}}
	}
	out := make([]Transition, d)
	for m := 1; m <= d; m++ {
		out[m-1] = Transition{M: m, Level: 0.5 * (pl[m-1] + pl[m])}
	}
	return out
}

// runEvents are the falling crossings of the half-way levels and, with
// stopTol > 0, the terminal crossing of L_min + stopTol.
func (s *System) runEvents(levels []Transition, stopTol float64, lossAt func(float64, []float64) float64) []ode.Event {
	events := make([]ode.Event, 0, len(levels)+1)
	for _, lv := range levels {
		level := lv.Level
		events = append(events, ode.Event{
			Func:      func(t float64, y []float64) float64 { return lossAt(t, y) - level },
			Direction: ode.Falling,
		})
	}
	if stopTol > 0 {
		target := s.lossFloor() + stopTol
		events = append(events, ode.Event{
			Func:      func(t float64, y []float64) float64 { return lossAt(t, y) - target },
			Direction: ode.Falling,
			Terminal:  true,
		})
	}
	return events
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
