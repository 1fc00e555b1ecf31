package figures

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot/vg"
)

// RankValues draws runs of the separate model that differ in the rank R
// (linattn run -R), one column each in increasing R: the loss with the
// plateau levels and the drops, and below it every head's value weight,
// on one time axis (paper fig. attnS-lowrank-value). A head's R keys and
// queries share its value weight, so a new value weight grows only at the
// drops that start a head, from the plateaus m = 0, R, 2R, …; the drops
// from the others fill a free rank of a head that has grown. Each column
// says at which drops a new head started, read off the run: the first
// drop after which a head's |v| exceeds half its final value.
func RankValues(paths []string) (*Figure, error) {
	type column struct {
		f  *file
		rd *runData
	}
	var cols []column
	for _, path := range paths {
		f, err := open(path)
		if err != nil {
			return nil, err
		}
		if f.kind != "run" || f.trained {
			return nil, fmt.Errorf("%s: want the output of linattn run", path)
		}
		rd, err := readRun(f)
		if err != nil {
			return nil, err
		}
		if rd.merged {
			return nil, fmt.Errorf("%s: a merged run has no rank; want separate runs that differ in -R", path)
		}
		cols = append(cols, column{f, rd})
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("figures: no run to draw")
	}
	sort.SliceStable(cols, func(a, b int) bool { return cols[a].rd.r < cols[b].rd.r })
	fig := &Figure{Width: pageWidth, Heights: []float64{1.2, 1}, MinWidth: minPageWidth}
	var top, bottom []*Panel
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cols {
		held := c.f.meta.Status == "converged"
		x := timeRange(c.rd.t, true, held)
		lo, hi = math.Min(lo, x.Min), math.Max(hi, x.Max)
		loss := runLossPanel(c.f, c.rd, true, fig)
		values := valuePanel(c.rd, learnedHeads(c.rd), true)
		values.VLines = dropLines(c.rd.trans)
		loss.Title = fmt.Sprintf("R = %d: %s", c.rd.r, newHeadDrops(c.rd))
		loss.HideXLabels, values.XLabel = true, "t / τ"
		if held {
			holdFinal([]*Panel{loss, values}, x.Max)
		}
		top, bottom = append(top, loss), append(bottom, values)
	}
	for i := range top {
		top[i].XLog, bottom[i].XLog = true, true
		top[i].XRange, bottom[i].XRange = Range{lo, hi}, Range{lo, hi}
		if i > 0 {
			top[i].YLabel, bottom[i].YLabel = "", ""
		}
		if i < len(top)-1 { // the runs share Λ: the levels are labelled once, on the right
			for k := range top[i].HLines {
				top[i].HLines[k].Label = ""
			}
		}
		// The legend names what each head learned; the thin grey lines
		// are the dormant heads (the caption says so).
		for k := range bottom[i].Curves {
			c := &bottom[i].Curves[k]
			c.Label, _, _ = strings.Cut(c.Label, ": head")
			if c.Thin {
				c.Label = ""
			}
		}
		bottom[i].Legend = BottomLeft
	}
	fig.Grid = [][]*Panel{top, bottom}
	first := cols[0]
	fig.Title = strings.Join(problemParts(first.f, first.rd.d, first.rd.h, first.rd.r, false, []string{"R"}), ", ") + ": loss and value weights by rank"
	fig.Caption = "Value weights in colour by the eigenvectors their head learned, dormant heads thin and grey."
	fig.Height = 5 * vg.Inch
	fig.MinHeight = 4.2 * vg.Inch // the value panels tall enough for their legends inside
	return fig, nil
}

// newHeadDrops says at which drops of the run a head's value weight grew:
// for each head that learned (final |v| at least a twentieth of the
// largest, as learnedHeads), the drop nearest to the time its |v| first
// exceeds half its final value.
func newHeadDrops(rd *runData) string {
	s, h := len(rd.ts), rd.h
	big := 0.0
	for _, v := range rd.v[(s-1)*h:] {
		big = math.Max(big, math.Abs(v))
	}
	var ms []int
	for i := 0; i < h && len(rd.trans) > 0; i++ {
		final := math.Abs(rd.v[(s-1)*h+i])
		if final == 0 || final < big/20 {
			continue
		}
		j := 0
		for j < s-1 && math.Abs(rd.v[j*h+i]) <= final/2 {
			j++
		}
		best := 0
		for k, tm := range rd.trans {
			if math.Abs(math.Log(tm/rd.ts[j])) < math.Abs(math.Log(rd.trans[best]/rd.ts[j])) {
				best = k
			}
		}
		ms = append(ms, int(rd.transM[best]))
	}
	if len(ms) == 0 {
		return "no head grew"
	}
	sort.Ints(ms)
	ms = slices.Compact(ms)
	parts := make([]string, len(ms))
	for k, m := range ms {
		parts[k] = "t" + sub(m)
	}
	return "a new v at " + strings.Join(parts, ", ")
}
