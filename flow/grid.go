package flow

import (
	"fmt"
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

// DropsGrid returns S ≥ 4 times: equally spaced in time from 0 to T
// (⌊S/4⌋ of them, ⌊S/2⌋ below S = 12), log-spaced from t_f/10 to T
// (⌊S/4⌋ from S = 12: FirstPlateauEnd), and the others where the loss
// crosses equally spaced levels between L(0) and L(T), found by linear
// interpolation between accepted steps. The loss-spaced times gather in
// the drops, so every drop is sampled in proportion to its height,
// however short it is; the log-spaced ones sample every plateau in
// proportion to its length on a log time axis, the first one over a decade
// before the loss starts to fall, however small that time is against T
// (at D = 32 the first drop comes at T/6700).
func DropsGrid(T float64, S int, path LossPath) []float64 {
	nLin, nLog, nLoss := dropsShares(S)
	times := LinearGrid(T, nLin)
	if nLog > 0 {
		// nLog of the nLog+1 log-spaced times from lo to T: T is the
		// linear grid's.
		lo := max(FirstPlateauEnd(path)/10, T*1e-6)
		times = append(times, LogGrid(lo, T, nLog+1)[1:nLog+1]...)
	}
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

// dropsShares splits S output times (or kept steps) as DropsGrid does:
// ⌊S/4⌋ equally spaced in time and ⌊S/4⌋ in log time from S = 12 (⌊S/2⌋
// and none below), the others equally spaced in loss.
func dropsShares(S int) (lin, log, loss int) {
	lin, log = S/2, 0
	if S >= 12 {
		lin, log = S/4, S/4
	}
	return lin, log, S - lin - log
}

// FirstPlateauEnd returns t_f, the first time on path at which the loss
// has fallen by 1% of its whole fall L(0) − L(T): the end of the first
// plateau, found by linear interpolation between accepted steps; 0 when the
// loss does not fall.
func FirstPlateauEnd(path LossPath) float64 {
	l0, l1 := path.Loss[0], path.Loss[len(path.Loss)-1]
	if !(l0 > l1) {
		return 0
	}
	level := l0 - 0.01*(l0-l1)
	for j := 1; j < len(path.T); j++ {
		if b := path.Loss[j]; b <= level {
			a := path.Loss[j-1]
			return path.T[j-1] + (path.T[j]-path.T[j-1])*(a-level)/(a-b)
		}
	}
	return path.T[len(path.T)-1]
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

// Grid is the kind of output grid Run samples when RunSettings.Times is nil.
type Grid int

const (
	// GridDrops places ⌊S/4⌋ times equally spaced from 0 to T, ⌊S/4⌋
	// log-spaced from a tenth of the first plateau's end and the others
	// equally spaced in loss (DropsGrid), so that every drop is
	// sampled however short it is; below S = 4 it is GridLinear.
	GridDrops Grid = iota
	// GridLinear places S equally spaced times from 0 to T (LinearGrid).
	GridLinear
	// GridLog places 0 and S−1 log-spaced times from T·10⁻⁶ to T (LogGrid).
	GridLog
)

func (g Grid) String() string {
	switch g {
	case GridDrops:
		return "drops"
	case GridLinear:
		return "lin"
	case GridLog:
		return "log"
	}
	return fmt.Sprintf("Grid(%d)", int(g))
}

// Times returns the s output times of the grid on [0, T]. The drops grid
// needs path, the loss at the accepted steps of a run to T (nil: the
// linear grid).
func (g Grid) Times(T float64, s int, path *LossPath) []float64 {
	switch g {
	case GridLog:
		return LogGrid(T*1e-6, T, s-1)
	case GridDrops:
		if s >= 4 && path != nil {
			return DropsGrid(T, s, *path)
		}
	}
	return LinearGrid(T, s)
}
