package flow

import (
	"math"
	"sort"
)

// Criteria of FindDrops. On a log time axis a plateau of the loss is a
// trough of its speed s = −dL/d ln t, and a drop a peak: PlateauRatio is
// how far the speed must fall between two drops, relative to the lower of
// their peaks, for the trough to count as a plateau (else the two are one
// drop); a drop must shed at least MinDropFraction of the loss the whole
// curve sheds.
const (
	PlateauRatio    = 0.1
	MinDropFraction = 0.01
)

// FindDrops reads the plateaus and drops off a loss curve sampled at
// increasing times, without theory (docs/math.md, "Plateaus and drops
// without theory"): it is how the drops of a flow whose plateau levels are
// not known in advance (tasks not all in-context) are defined, and it
// finds those of the in-context flow too. The speed s = −ΔL/Δln t between
// consecutive samples at t > 0 is cut at its troughs; a trough is a
// plateau when its speed is at most PlateauRatio times the peaks on both
// sides, the troughs that are not are merged, most prominent first, and
// drops shedding less than MinDropFraction of L(first) − L(last) are
// merged into their plateaus. The plateau levels are the loss at the
// troughs (the first sample and the last for the first and the last);
// the m-th drop is the first crossing of the level half-way between
// plateaus m − 1 and m, located by linear interpolation (M = m, Level and
// T set). The curve should resolve the drops: the drops grid or the
// accepted steps of a run, or a fine log grid.
func FindDrops(times, loss []float64) (plateaus []float64, drops []Transition) {
	k0 := sort.Search(len(times), func(i int) bool { return times[i] > 0 })
	t, l := times[k0:], loss[k0:]
	if len(t) < 3 {
		return []float64{loss[len(loss)-1]}, nil
	}
	speed := make([]float64, len(t)-1)
	for i := range speed {
		if t[i+1] > t[i] {
			speed[i] = (l[i] - l[i+1]) / math.Log(t[i+1]/t[i])
		}
	}
	troughs := plateauTroughs(speed)
	troughs = mergeSmallDrops(troughs, l, MinDropFraction*(l[0]-l[len(l)-1]))
	for _, k := range troughs {
		plateaus = append(plateaus, l[k])
	}
	for m := 1; m < len(plateaus); m++ {
		level := 0.5 * (plateaus[m-1] + plateaus[m])
		from := troughs[m-1]
		for i := from; i+1 < len(l); i++ {
			if l[i] > level && l[i+1] <= level {
				tc := t[i] + (t[i+1]-t[i])*(l[i]-level)/(l[i]-l[i+1])
				drops = append(drops, Transition{M: m, Level: level, T: tc})
				break
			}
		}
	}
	return plateaus, drops
}

// plateauTroughs returns the sample indices of the plateaus: the first and
// last samples and the troughs of speed (index i: between samples i and
// i+1; the trough's sample is its right end) that separate two peaks each
// at least 1/PlateauRatio times faster.
func plateauTroughs(speed []float64) []int {
	ex := extrema(speed)
	// ex alternates peak, trough, …, peak. Merge the least prominent trough
	// (highest speed relative to the lower of its peaks) until every
	// trough is a plateau; the higher of its two peaks survives.
	for {
		worst, ratio := -1, PlateauRatio
		for j := 1; j+1 < len(ex); j += 2 {
			lo := min(speed[ex[j-1]], speed[ex[j+1]])
			if r := speed[ex[j]] / lo; r > ratio {
				worst, ratio = j, r
			}
		}
		if worst < 0 {
			break
		}
		keep := ex[worst-1]
		if speed[ex[worst+1]] > speed[keep] {
			keep = ex[worst+1]
		}
		ex = append(append(ex[:worst-1], keep), ex[worst+2:]...)
	}
	out := []int{0}
	for j := 1; j < len(ex); j += 2 {
		out = append(out, ex[j]+1)
	}
	return append(out, len(speed))
}

// extrema returns the indices of the strict local maxima and minima of x,
// runs of equal values taken as one (at their first index), alternating
// and starting and ending with a maximum.
func extrema(x []float64) []int {
	runs := []int{0}
	for i := 1; i < len(x); i++ {
		if x[i] != x[runs[len(runs)-1]] {
			runs = append(runs, i)
		}
	}
	var ex []int
	for j, i := range runs {
		left, right := math.Inf(-1), math.Inf(-1)
		if j > 0 {
			left = x[runs[j-1]]
		}
		if j+1 < len(runs) {
			right = x[runs[j+1]]
		}
		peak := x[i] > left && x[i] > right
		trough := j > 0 && j+1 < len(runs) && x[i] < left && x[i] < right
		if peak || (trough && len(ex) > 0) {
			ex = append(ex, i)
		}
	}
	if len(ex)%2 == 0 && len(ex) > 0 {
		ex = ex[:len(ex)-1] // a trailing trough
	}
	return ex
}

// mergeSmallDrops removes the plateau after each drop that sheds less than
// minFall (the drop joins the next one), keeping the last sample.
func mergeSmallDrops(troughs []int, l []float64, minFall float64) []int {
	out := []int{troughs[0]}
	for _, k := range troughs[1:] {
		if l[out[len(out)-1]]-l[k] < minFall {
			if k == troughs[len(troughs)-1] {
				out[len(out)-1] = k // the end replaces the last plateau
			}
			continue
		}
		out = append(out, k)
	}
	return out
}
