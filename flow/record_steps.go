package flow

import (
	"math"
	"sort"
)

// stepRecord keeps the loss and the test losses at the accepted steps of
// a first pass that thins its states (passRecord), and at nodes inside
// the steps where the loss falls fast, so that Run can interpolate them
// at output times placed after the run (Sampling Interpolated): scalars
// at every step, where stateRecord keeps a few states, as many as the
// output holds. It keeps at most max nodes: when full it drops every
// other one and records half as often.
type stepRecord struct {
	max, stride, count int
	tests              bool
	t                  []float64
	val                [4][]float64 // the loss, then the in-context, in-weight and in-distribution test losses (tests)
}

func newStepRecord(max int, tests bool) *stepRecord {
	return &stepRecord{max: max, stride: 1, tests: tests}
}

// rows returns how many values it records per step.
func (r *stepRecord) rows() int {
	if r.tests {
		return 4
	}
	return 1
}

func (r *stepRecord) add(t float64, v [4]float64) {
	if r.count++; (r.count-1)%r.stride == 0 {
		r.push(t, v)
	}
}

// last records the end of the run, whatever the stride.
func (r *stepRecord) last(t float64, v [4]float64) { r.push(t, v) }

func (r *stepRecord) push(t float64, v [4]float64) {
	if len(r.t) > 0 && !(t > r.t[len(r.t)-1]) {
		return // a step of no length (a terminal event at its start)
	}
	if len(r.t) == r.max {
		r.halve()
	}
	r.t = append(r.t, t)
	for k := range r.rows() {
		r.val[k] = append(r.val[k], v[k])
	}
}

// innerNodes returns how many nodes the step to t, with values v there,
// needs inside it: m such that the error of the polynomial through the
// nodes before it (interpolate), extrapolated to t, over (m + 1)⁶ is at
// most nodeTol·gap, NaNs aside.
func (r *stepRecord) innerNodes(t float64, v [4]float64, gap float64) int {
	n := len(r.t)
	if n < 2 {
		return 0
	}
	lo := max(n-interpolationNodes, 0)
	worst := 0.0
	for k := range r.rows() {
		if e := math.Abs(interpolate(r.t[lo:], r.val[k][lo:], t) - v[k]); e > worst {
			worst = e
		}
	}
	return min(maxInnerNodes, max(0, int(math.Ceil(math.Pow(worst/(nodeTol*gap), 1.0/interpolationNodes)))-1))
}

func (r *stepRecord) halve() {
	k := 0
	for i := 0; i < len(r.t); i += 2 {
		r.t[k] = r.t[i]
		for j := range r.rows() {
			r.val[j][k] = r.val[j][i]
		}
		k++
	}
	r.t = r.t[:k]
	for j := range r.rows() {
		r.val[j] = r.val[j][:k]
	}
	r.stride *= 2
}

// at returns each recorded value at times, interpolated between the steps
// (interpolate).
func (r *stepRecord) at(times []float64) [4][]float64 {
	var out [4][]float64
	for k := range r.rows() {
		out[k] = make([]float64, len(times))
		for i, t := range times {
			out[k][i] = interpolate(r.t, r.val[k], t)
		}
	}
	return out
}

// interpolationNodes is the number of nodes of interpolate's polynomial.
const interpolationNodes = 6

// interpolate returns at t the polynomial of degree interpolationNodes − 1
// through the interpolationNodes points (ts[j], ys[j]) nearest t (all, if
// fewer), ts increasing: centred on the interval that holds t, shifted
// inwards at the ends; in Lagrange's form (docs/math.md, "Sampling from
// the steps").
func interpolate(ts, ys []float64, t float64) float64 {
	k := sort.SearchFloat64s(ts, t) // ts[k-1] < t ≤ ts[k]
	if k < len(ts) && ts[k] == t {
		return ys[k]
	}
	lo := min(max(k-interpolationNodes/2, 0), max(len(ts)-interpolationNodes, 0))
	hi := min(lo+interpolationNodes, len(ts))
	var sum float64
	for j := lo; j < hi; j++ {
		w := ys[j]
		for m := lo; m < hi; m++ {
			if m != j {
				w *= (t - ts[m]) / (ts[j] - ts[m])
			}
		}
		sum += w
	}
	return sum
}

// maxStepNodes bounds the nodes (steps, and nodes inside them) at which
// a first pass records the loss and the test losses (stepRecord): 84 MB
// with the test losses. BDF's run at D = 256 takes 0.2 million steps.
const maxStepNodes = 1 << 21
