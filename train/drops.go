package train

import (
	"sort"

	"github.com/linattn/linattn/flow"
)

// Crossings returns the first falling crossing of each level (M and Level
// as flow.System.Levels gives them) by the sampled loss curve (times,
// loss), located by linear interpolation between samples, in time order:
// the drop times of a training curve, defined as the flow's
// (Trajectory.Transitions). Levels never crossed are left out.
func Crossings(times, loss []float64, levels []flow.Transition) []flow.Transition {
	var out []flow.Transition
	for _, lv := range levels {
		for k := 1; k < len(loss); k++ {
			a, b := loss[k-1], loss[k]
			if a > lv.Level && b <= lv.Level {
				lv.T = times[k-1] + (times[k]-times[k-1])*(a-lv.Level)/(a-b)
				out = append(out, lv)
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].T < out[j].T })
	return out
}

// Drop is an episode of fast descent of a loss curve: samples [Start, End]
// and the loss it shed.
type Drop struct {
	Start, End int
	Fall       float64
}

// FastDrops finds the abrupt drops of a loss curve sampled at equally
// spaced steps, without reference to plateau levels (softmax attention has
// no theory for them): the curve is cut into 100 windows of equal length;
// a window is fast when the loss falls in it by at least 3% of the total
// fall L(0) − min L, and a drop is a run of consecutive fast windows that
// sheds at least 10% of the total fall and follows a plateau: at least one
// window (1% of the run) in which the loss falls slower. A descent from the
// first sample on is not a drop, and a curve that never falls has none.
func FastDrops(loss []float64) []Drop {
	const windows, fast, big = 100, 0.03, 0.10
	n := len(loss)
	if n < 2*windows {
		return nil
	}
	lmin := loss[0]
	for _, l := range loss {
		lmin = min(lmin, l)
	}
	total := loss[0] - lmin
	if !(total > 0) {
		return nil
	}
	var out []Drop
	var cur *Drop
	for w := 0; w < windows; w++ {
		a, b := w*(n-1)/windows, (w+1)*(n-1)/windows
		fall := loss[a] - loss[b]
		if fall >= fast*total {
			if w == 0 {
				cur = nil // no plateau before it: skip this run of windows
				for w+1 < windows && loss[(w+1)*(n-1)/windows]-loss[(w+2)*(n-1)/windows] >= fast*total {
					w++
				}
				continue
			}
			if cur == nil {
				out = append(out, Drop{Start: a})
				cur = &out[len(out)-1]
			}
			cur.End, cur.Fall = b, cur.Fall+fall
			continue
		}
		if cur != nil && cur.Fall < big*total {
			out = out[:len(out)-1]
		}
		cur = nil
	}
	if cur != nil && cur.Fall < big*total {
		out = out[:len(out)-1]
	}
	return out
}
