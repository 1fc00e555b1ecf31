package figures

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// The functions here turn arrays into what a panel draws; they hold no
// drawing code.

// onAxis returns the points (x[i], y[i]) that a time axis can show: all
// of them on a linear axis, those with x > 0 on a log axis, and how many it
// left out.
func onAxis(x, y []float64, log bool) (cx, cy []float64, dropped int) {
	if !log {
		return x, y, 0
	}
	cx, cy = make([]float64, 0, len(x)), make([]float64, 0, len(y))
	for i := range x {
		if x[i] > 0 {
			cx, cy = append(cx, x[i]), append(cy, y[i])
		} else {
			dropped++
		}
	}
	return cx, cy, dropped
}

// droppedNote is the note for points a log time axis cannot show.
func droppedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("log time axis: %d sample(s) at t ≤ 0 (the initial state) not drawn; -xscale lin draws them", n)
}

// plateauLines are the plateau levels L(M_m) for the given m, labelled.
func plateauLines(levels []float64, ms []int) []RefLine {
	out := make([]RefLine, 0, len(ms))
	for _, m := range ms {
		out = append(out, RefLine{Value: levels[m], Label: "m = " + fmt.Sprint(m)})
	}
	return out
}

// interpolate returns y at x on the piecewise linear curve through
// (xs[i], ys[i]), xs increasing; the end values outside.
func interpolate(xs, ys []float64, x float64) float64 {
	i := sort.SearchFloat64s(xs, x)
	switch {
	case i == 0:
		return ys[0]
	case i == len(xs):
		return ys[len(ys)-1]
	}
	w := (x - xs[i-1]) / (xs[i] - xs[i-1])
	return ys[i-1] + w*(ys[i]-ys[i-1])
}

// column returns element (i, j) of every row i of the C-order matrix x
// with the given number of columns: the time series of one component.
func column(x []float64, cols, j int) []float64 {
	out := make([]float64, len(x)/cols)
	for i := range out {
		out[i] = x[i*cols+j]
	}
	return out
}

// dataRange returns the smallest and largest finite values of the given
// slices (only positive ones when positive is set), or NaN, NaN if none.
func dataRange(positive bool, xs ...[]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) || (positive && v <= 0) {
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo > hi {
		return math.NaN(), math.NaN()
	}
	return lo, hi
}

// sub writes n ≥ 0 with subscript digits: e₃. (Liberation Sans has the
// subscript digits; of the superscripts it lacks 0 and 9, so exponents
// are drawn by powerText.)
func sub(n int) string {
	var b strings.Builder
	for _, c := range fmt.Sprint(n) {
		b.WriteRune([]rune("₀₁₂₃₄₅₆₇₈₉")[c-'0'])
	}
	return b.String()
}

// eigenvectorList writes a set of eigenvector indices (1-based, sorted):
// e₁,e₂, with three or more consecutive ones as a range, e₁–e₄.
func eigenvectorList(ds []int) string {
	var parts []string
	for i := 0; i < len(ds); {
		j := i
		for j+1 < len(ds) && ds[j+1] == ds[j]+1 {
			j++
		}
		if j-i >= 2 {
			parts, i = append(parts, "e"+sub(ds[i])+"–e"+sub(ds[j])), j+1
			continue
		}
		parts, i = append(parts, "e"+sub(ds[i])), i+1
	}
	return strings.Join(parts, ",")
}

// addNote appends a non-empty note once.
func (f *Figure) addNote(note string) {
	if note == "" {
		return
	}
	for _, n := range f.Notes {
		if n == note {
			return
		}
	}
	f.Notes = append(f.Notes, note)
}
