package figures

import (
	"fmt"
	"github.com/linattn/linattn/output"
	"sort"

	"gonum.org/v1/plot/vg"
)

// classNames are the stability classes of the landscape's class array.
var classNames = output.ClassNames

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
	fig := &Figure{Width: columnWidth, Height: 3 * vg.Inch}
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
	fig.Grid = [][]*Panel{{landscapePanel(loss, size, class, onPath, d)}}
	return fig, nil
}

// landscapePanel: one marker per fixed point at (|S|, L(S)), spread
// horizontally within a column by loss rank so that none hides another,
// coloured by class, and the path from small initialization as a line.
func landscapePanel(loss []float64, size, class []int64, onPath []bool, d int) *Panel {
	p := &Panel{XLabel: "eigenvectors learned |S|", YLabel: "loss L(M(S))", Legend: TopRight}
	x := spreadColumns(loss, size)
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
	return p
}

// spreadColumns places the fixed points with |S| = m across [m − 0.3,
// m + 0.3] in the order of their loss, the path point (the lowest loss of
// its column, S = {1..m}) first.
func spreadColumns(loss []float64, size []int64) []float64 {
	cols := map[int64][]int{}
	for i, s := range size {
		cols[s] = append(cols[s], i)
	}
	x := make([]float64, len(loss))
	for s, idx := range cols {
		sort.SliceStable(idx, func(a, b int) bool { return loss[idx[a]] < loss[idx[b]] })
		for k, i := range idx {
			x[i] = float64(s)
			if len(idx) > 1 {
				x[i] += -0.3 + 0.6*float64(k)/float64(len(idx)-1)
			}
		}
	}
	return x
}

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
