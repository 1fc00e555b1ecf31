package figures

import (
	"fmt"
	"math"

	"github.com/linattn/linattn/output"

	"gonum.org/v1/plot/vg"
)

// reducedFigure draws the output of linattn reduced (docs/cli.md,
// "reduced"): for the separate model the value weight of each learning head
// beside the 1-D theory and the predicted against the observed drop times;
// for the merged model the loss beside the closed form.
func reducedFigure(f *file, opt Options) (*Figure, error) {
	if f.Has(output.TDropPaper) {
		return reducedMergedFigure(f, opt)
	}
	if !f.Has(output.Drop) && f.spec.R > 1 {
		return nil, fmt.Errorf("%s has no per-drop comparison: the 1-D theory is for rank-one heads (R = %d); nothing to draw", f.path, f.spec.R)
	}
	var level, curveT, curveFull, curveRed []float64
	if err := f.vectors([]string{output.PlateauLevel, output.CurveT, output.CurveVFull, output.CurveVReduced}, &level, &curveT, &curveFull, &curveRed); err != nil {
		return nil, err
	}
	title := problemTitle(f, len(level), f.spec.H, f.spec.R, false)
	drops, _, err := f.Ints(output.Drop, -1)
	if err != nil {
		return nil, err
	}
	k := len(drops)
	var obs, pred, fromStart []float64
	if err := f.vectors([]string{output.TObserved, output.TPredicted, output.TPredictedFromStart}, &obs, &pred, &fromStart); err != nil {
		return nil, err
	}
	if len(obs) != k || len(pred) != k || len(fromStart) != k {
		return nil, fmt.Errorf("%s: the per-drop arrays have lengths %d, %d, %d, %d, want equal", f.path, k, len(obs), len(pred), len(fromStart))
	}
	curveDrop, _, err := f.Ints(output.CurveDrop, len(curveT))
	if err != nil {
		return nil, err
	}
	if len(curveFull) != len(curveT) || len(curveRed) != len(curveT) {
		return nil, fmt.Errorf("%s: curve_t, curve_v_full and curve_v_reduced differ in length", f.path)
	}
	var dev []float64
	if dev, _, err = f.Floats(output.MaxDeviation, k); err != nil {
		return nil, err
	}
	heads, _, err := f.Ints(output.DropHead, k)
	if err != nil {
		return nil, err
	}
	fig := &Figure{Title: title, Width: pageWidth, MinWidth: minPageWidth}
	// One panel per drop, four to a row, each on its own time scale; then
	// the drop times and the deviations.
	var row []*Panel
	for i, m := range drops {
		p := reducedCurvesPanel(i, len(drops), m, heads[i], curveDrop, curveT, curveFull, curveRed, obs[i])
		if i%4 == 0 {
			p.YLabel = "|v| of the learning head"
		}
		if row = append(row, p); len(row) == 4 || i == len(drops)-1 {
			fig.Grid = append(fig.Grid, row)
			row = nil
		}
	}
	if len(fig.Grid) > 0 {
		first := fig.Grid[0][0]
		first.Curves[0].Label, first.Curves[1].Label, first.Legend = "flow", "1-D theory", TopLeft
	}
	fig.Grid = append(fig.Grid, []*Panel{dropTimesPanel(drops, obs, pred, fromStart), deviationPanel(drops, dev)})
	rows := len(fig.Grid)
	fig.Height = vg.Length(0.4+1.9*float64(rows)) * vg.Inch
	fig.MinHeight = minHeight(rows) + vg.Length(rows)*0.2*vg.Inch
	return fig, nil
}

// reducedCurvesPanel: for drop m, the |v| of the head that learns e_m in
// the full flow (solid, in the colour of the i-th of n drops) and in the
// 1-D theory started where the head is aligned (dashed, black, drawn over
// the flow so that where they agree its dashes lie on the coloured curve),
// against the time from the observed drop.
func reducedCurvesPanel(i, n int, m, head int64, curveDrop []int64, t, full, red []float64, obs float64) *Panel {
	p := &Panel{Title: fmt.Sprintf("drop %d: e%s, head %d", m, sub(int(m)), head+1), XLabel: "(t − t" + sub(int(m)) + ") / τ"}
	var ct, cf, cr []float64
	for j, dm := range curveDrop {
		if dm == m {
			ct, cf, cr = append(ct, t[j]-obs), append(cf, full[j]), append(cr, red[j])
		}
	}
	p.Curves = []Curve{{X: ct, Y: cf, Color: categorical(i, n)}, {X: ct, Y: cr, Color: black, Dashed: true, Thin: true}}
	return p
}

// deviationPanel: the largest deviation of the learning head's |v| from
// the 1-D theory after the head is aligned, relative to v*, per drop.
func deviationPanel(drops []int64, dev []float64) *Panel {
	p := &Panel{Title: "flow against 1-D theory", XLabel: "drop m", YLabel: "max |Δv| / v*", YLog: true}
	pts := Points{Color: black}
	for i, m := range drops {
		p.XTicks = append(p.XTicks, Tick{Value: float64(m), Label: fmt.Sprint(m)})
		if dev[i] > 0 {
			pts.X, pts.Y = append(pts.X, float64(m)), append(pts.Y, dev[i])
		}
	}
	if len(drops) > 0 {
		p.XRange = Range{float64(drops[0]) - 0.5, float64(drops[len(drops)-1]) + 0.5}
	}
	p.Points = []Points{pts}
	return p
}

// dropTimesPanel: the predicted drop times against the observed ones, with
// the diagonal: the 1-D theory started where the head is aligned (filled)
// and started at the previous drop (open; −1 in the file when there is
// none).
func dropTimesPanel(drops []int64, obs, pred, fromStart []float64) *Panel {
	p := &Panel{Title: "drop times: 1-D theory", XLabel: "observed / τ", YLabel: "predicted / τ", XLog: true, YLog: true, Legend: TopLeft}
	aligned := Points{Label: "from the aligned head", Color: okabeIto[0]}
	early := Points{Label: "from the previous drop", Color: okabeIto[1], Open: true, Square: true}
	for i := range drops {
		if obs[i] <= 0 {
			continue
		}
		if pred[i] > 0 {
			aligned.X, aligned.Y = append(aligned.X, obs[i]), append(aligned.Y, pred[i])
		}
		if fromStart[i] > 0 {
			early.X, early.Y = append(early.X, obs[i]), append(early.Y, fromStart[i])
		}
	}
	lo, hi := dataRange(true, aligned.X, aligned.Y, early.X, early.Y)
	if !math.IsNaN(lo) {
		lo, hi = lo/2, hi*2
		p.XRange, p.YRange = Range{lo, hi}, Range{lo, hi}
		p.Curves = append(p.Curves, Curve{Label: "predicted = observed", X: []float64{lo, hi}, Y: []float64{lo, hi}, Color: refGray, Thin: true, Dashed: true})
	}
	p.Points = []Points{early, aligned}
	return p
}

// reducedMergedFigure: the merged model's loss beside the white-Λ closed
// form (paper eq. attnM-solution) when the file has it, with the observed
// drop and the two predicted drop times.
func reducedMergedFigure(f *file, opt Options) (*Figure, error) {
	var t, loss, levels, eig []float64
	if err := f.vectors([]string{output.Times, output.Loss, output.Plateaus, output.Eigvals}, &t, &loss, &levels, &eig); err != nil {
		return nil, err
	}
	if len(loss) != len(t) {
		return nil, fmt.Errorf("%s: t has %d samples, loss %d", f.path, len(t), len(loss))
	}
	d := len(eig)
	log := opt.XScale != "lin"
	fig := &Figure{Title: problemTitle(f, d, f.spec.H, 0, true), Width: columnWidth, Height: 2.9 * vg.Inch,
		MinWidth: minWidth, MinHeight: minHeight(1) + 0.5*vg.Inch}
	x, y, n := onAxis(t, loss, log)
	fig.addNote(droppedNote(n))
	p := &Panel{XLabel: "t / τ", YLabel: "loss", XLog: log, Legend: BottomLeft, XRange: timeRange(t, log, false)}
	p.Curves = append(p.Curves, Curve{Label: "flow", X: x, Y: y, Color: black})
	if f.Has(output.LossClosedForm) {
		cf, _, err := f.Floats(output.LossClosedForm, len(t))
		if err != nil {
			return nil, err
		}
		_, yc, _ := onAxis(t, cf, log)
		var mr output.MergedResult
		balanced := !(f.meta.DecodeResult(&mr) == nil && mr.ClosedFormExact != nil && !*mr.ClosedFormExact)
		if !balanced {
			fig.Caption = closedFormNote
			fig.addNote(closedFormNote)
		}
		p.Curves = append(p.Curves, closedFormCurve(x, yc, balanced))
	}
	p.HLines = plateauLines(levels, []int{0, d})
	for i, name := range []string{output.TDropObserved, output.TDropPaper, output.TDropRefined} {
		if !f.Has(name) {
			continue
		}
		v, _, err := f.Floats(name)
		if err != nil {
			return nil, err
		}
		label := []string{"observed drop", "paper: τ ln(1/s₀)/(2‖Λ²‖)", "refined estimate"}[i]
		p.Points = append(p.Points, Points{Label: label, X: v, Y: []float64{interpolate(t, loss, v[0])},
			Color: okabeIto[[]int{1, 0, 3}[i]], Open: i > 0, Square: i == 2})
	}
	fig.Grid = [][]*Panel{{p}}
	return fig, nil
}
