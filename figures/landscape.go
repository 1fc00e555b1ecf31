package figures

import (
	"fmt"
	"math"
	"sort"

	"github.com/linattn/linattn/output"

	"gonum.org/v1/plot/vg"
)

// classNames are the stability classes of the landscape's class array.
var classNames = output.ClassNames()

// landscapeFigure draws the output of linattn landscape: the loss of every
// fixed point M(S) against |S|, the number of eigenvectors learned,
// coloured by stability class, with the path from small initialization
// through its D+1 points (paper section "Loss landscape").
func landscapeFigure(f *file) (*Figure, error) {
	loss, _, err := f.Floats(output.Loss, -1)
	if err != nil {
		return nil, err
	}
	n := len(loss)
	var class []int64
	if f.Has(output.StabilityClass) {
		if class, _, err = f.Ints(output.StabilityClass, n); err != nil {
			return nil, err
		}
	}
	fig := &Figure{Width: columnWidth, Height: 3 * vg.Inch, MinWidth: minWidth, MinHeight: minHeight(1) + 0.6*vg.Inch}
	if !f.Has(output.SubsetSize) { // the merged model: rows zero and minimum
		fig.Title = problemTitle(f, f.spec.D, f.spec.H, 0, true)
		fig.Grid = [][]*Panel{{mergedLandscapePanel(loss, class)}}
		return fig, nil
	}
	size, _, err := f.Ints(output.SubsetSize, n)
	if err != nil {
		return nil, err
	}
	onPath, err := f.Bools(output.OnPath, n)
	if err != nil {
		return nil, err
	}
	subset, err := f.Bools(output.Subset, n, -1)
	if err != nil {
		return nil, err
	}
	d := len(subset) / max(n, 1)
	fig.Title = problemTitle(f, d, f.spec.H, f.spec.R, false)
	if class == nil {
		fig.addNote("no stability in the file (-stability=false): the points are not classified")
	}
	p, dodged := landscapePanel(loss, size, class, onPath, d)
	fig.Grid = [][]*Panel{{p}}
	if dodged {
		fig.Caption = "Fixed points with the same |S| and nearly the same loss are drawn side by side."
	}
	return fig, nil
}

// landscapePanel: one marker per fixed point at (|S|, L(S)), coloured by
// class, set side by side where markers of one column would overlap
// (reported by dodged), and the path from small initialization as a line.
func landscapePanel(loss []float64, size, class []int64, onPath []bool, d int) (p *Panel, dodged bool) {
	p = &Panel{XLabel: "eigenvectors learned |S|", YLabel: "loss L(M(S))", Legend: TopRight}
	x, dodged := swarm(loss, size)
	groups := make([]Points, len(classNames)+1)
	for c, name := range classNames {
		groups[c] = Points{Label: name, Color: okabeIto[[]int{2, 4, 0}[c]]}
	}
	groups[len(classNames)] = Points{Label: "not analyzed", Color: refGray, Open: true}
	var path []int
	for i := range loss {
		g := len(classNames)
		if class != nil && class[i] >= 0 && int(class[i]) < len(classNames) {
			g = int(class[i])
		}
		groups[g].X, groups[g].Y = append(groups[g].X, x[i]), append(groups[g].Y, loss[i])
		if onPath[i] {
			path = append(path, i)
		}
	}
	sort.SliceStable(path, func(a, b int) bool { return size[path[a]] < size[path[b]] })
	line := Curve{Label: "path from small initialization", Color: black, Thin: true}
	for _, i := range path {
		line.X, line.Y = append(line.X, x[i]), append(line.Y, loss[i])
	}
	p.Curves = []Curve{line}
	for _, g := range groups {
		if len(g.X) > 0 {
			p.Points = append(p.Points, g)
		}
	}
	p.XRange = Range{-0.6, float64(d) + 0.6}
	for m := 0; m <= d; m++ {
		p.XTicks = append(p.XTicks, Tick{Value: float64(m), Label: fmt.Sprint(m)})
	}
	return p, dodged
}

// swarm places the fixed points with |S| = m at x = m, except where a
// marker would overlap one of the same column placed before (in order of
// loss: the path's point, the lowest, first): then at the nearest free
// offset m ± k·swarmStep (a beeswarm, as seaborn's swarmplot). Markers
// overlap when their losses are within swarmNear of the losses' span.
func swarm(loss []float64, size []int64) (x []float64, dodged bool) {
	lo, hi := dataRange(false, loss)
	near := swarmNear * math.Max(hi-lo, 1e-300)
	cols := map[int64][]int{}
	var keys []int64
	for i, s := range size {
		if cols[s] == nil {
			keys = append(keys, s)
		}
		cols[s] = append(cols[s], i)
	}
	x = make([]float64, len(loss))
	for _, s := range keys {
		idx := cols[s]
		sort.SliceStable(idx, func(a, b int) bool { return loss[idx[a]] < loss[idx[b]] })
		var placed []int
		for _, i := range idx {
			for k := 0; ; k++ {
				off := float64((k+1)/2) * swarmStep
				if k%2 == 0 {
					off = -off
				}
				free := true
				for _, j := range placed {
					free = free && (math.Abs(x[j]-float64(s)-off) >= swarmStep*0.99 || math.Abs(loss[j]-loss[i]) >= near)
				}
				if free {
					x[i], dodged = float64(s)+off, dodged || off != 0
					break
				}
			}
			placed = append(placed, i)
		}
	}
	return x, dodged
}

// The beeswarm's step (in |S|) and the loss difference, as a fraction of
// the span, within which two markers of a column overlap.
const (
	swarmStep = 0.15
	swarmNear = 0.04
)

// mergedLandscapePanel: the merged model's two fixed points, zero and the
// global minimum.
func mergedLandscapePanel(loss []float64, class []int64) *Panel {
	p := &Panel{XLabel: "fixed point", YLabel: "loss", XRange: Range{-0.6, float64(len(loss)) - 0.4}, Legend: TopRight}
	names := []string{"zero", "minimum"}
	if len(loss) == 2 {
		p.Curves = []Curve{{Label: "path from small initialization", X: []float64{0, 1}, Y: loss, Color: black, Thin: true}}
	}
	for i, l := range loss {
		g := Points{X: []float64{float64(i)}, Y: []float64{l}, Color: refGray}
		if class != nil && int(class[i]) < len(classNames) {
			g.Color, g.Label = okabeIto[[]int{2, 4, 0}[class[i]]], classNames[class[i]]
		}
		p.Points = append(p.Points, g)
		if i < len(names) {
			p.XTicks = append(p.XTicks, Tick{Value: float64(i), Label: names[i]})
		}
	}
	return p
}
