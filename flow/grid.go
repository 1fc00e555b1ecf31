package flow

import (
	"math"
	"sort"
)

// LinearGrid returns n ≥ 2 equally spaced times from 0 to t.
func LinearGrid(t float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = t * float64(i) / float64(n-1)
	}
	out[n-1] = t
	return out
}

// LogGrid returns 0 followed by n ≥ 2 logarithmically spaced times from
// tmin > 0 to t.
func LogGrid(tmin, t float64, n int) []float64 {
	out := make([]float64, n+1)
	r := math.Log(t / tmin)
	for i := 0; i < n; i++ {
		out[i+1] = tmin * math.Exp(r*float64(i)/float64(n-1))
	}
	out[n] = t
	return out
}

// LossPath is the loss at (some of) the accepted steps of a run,
// non-increasing in T, as an observer records it; DropsGrid places output
// times from it.
type LossPath struct{ T, Loss []float64 }

// DropsGrid returns S ≥ 4 times: ⌊S/2⌋ equally spaced from 0 to T, and the
// others where the loss crosses equally spaced levels between L(0) and L(T),
// found by linear interpolation between accepted steps. The loss-spaced
// times gather in the drops, so every drop is sampled in proportion to its
// height, however short it is.
func DropsGrid(T float64, S int, path LossPath) []float64 {
	nLin := S / 2
	nLoss := S - nLin
	times := LinearGrid(T, nLin)
	l0, l1 := path.Loss[0], path.Loss[len(path.Loss)-1]
	j := 0
	for k := 1; k <= nLoss; k++ {
		level := l0 - (l0-l1)*float64(k)/float64(nLoss+1)
		for j+1 < len(path.T) && path.Loss[j+1] > level {
			j++
		}
		t := T
		if j+1 < len(path.T) {
			t0, t1, a, b := path.T[j], path.T[j+1], path.Loss[j], path.Loss[j+1]
			t = t0
			if a > b {
				t = t0 + (t1-t0)*(a-level)/(a-b)
			}
		}
		times = append(times, math.Min(math.Max(t, 0), T))
	}
	sort.Float64s(times)
	out := times[:1]
	for _, t := range times[1:] {
		if t != out[len(out)-1] {
			out = append(out, t)
		}
	}
	return out
}

// ObservedPlateaus returns, for m = 0 … the last plateau reached, the loss
// at the end of the flattest interval (smallest |ΔL/Δt|) of the sampled
// curve (times, loss) between t_m and t_{m+1} (t_0 = 0, and tEnd after the
// last drop): the plateau levels as read off the run, to compare with
// Data.PlateauLevels.
func ObservedPlateaus(times, loss []float64, trans []Transition, tEnd float64) []float64 {
	bounds := []float64{0}
	for _, tn := range trans {
		bounds = append(bounds, tn.T)
	}
	bounds = append(bounds, tEnd)
	out := make([]float64, 0, len(bounds)-1)
	for w := 0; w+1 < len(bounds); w++ {
		best, level := math.Inf(1), math.NaN()
		for i := 0; i+1 < len(times); i++ {
			if times[i] < bounds[w] || times[i+1] > bounds[w+1] || times[i+1] == times[i] {
				continue
			}
			slope := math.Abs(loss[i+1]-loss[i]) / (times[i+1] - times[i])
			if slope < best {
				best, level = slope, loss[i+1]
			}
		}
		if math.IsNaN(level) {
			break // the window holds no two samples
		}
		out = append(out, level)
	}
	return out
}
