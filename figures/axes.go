package figures

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// The gonum plot of a panel: its axes, ranges and text style.

// textStyle is the style of every text: Liberation Sans at size, with
// "B^E" drawn as B with E superscript (powerText).
func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: textFont(size), Handler: powerText{text.Plain{Fonts: font.DefaultCache}}}
}

// plot builds the gonum plot of a panel: axes, bands, curves, markers,
// error bars, reference lines and heat map; the texts and the legend are
// drawn after it (layout).
func (p *Panel) plot() *plot.Plot {
	pl := plot.New()
	for _, ax := range []*plot.Axis{&pl.X, &pl.Y} {
		ax.Label.TextStyle.Font = textFont(labelSize)
		ax.Tick.Label.Font = textFont(tickSize)
		ax.Tick.Length = 3
		ax.Padding = 0
		ax.Label.Padding = 2
	}
	if p.Heat != nil {
		p.addHeat(pl)
		return pl
	}
	if p.ColorBar > 0 {
		pl.Add(&plotter.ColorBar{ColorMap: diverging(p.ColorBar), Vertical: true})
		pl.HideX()
		pl.Y.Min, pl.Y.Max = -p.ColorBar, p.ColorBar
		pl.Y.Tick.Marker = linearTicks{}
		return pl
	}
	for _, h := range p.HLines {
		pl.Add(refLine(h.Value, true))
	}
	for _, v := range p.VLines {
		pl.Add(refLine(v.Value, false))
	}
	for _, b := range p.Bands {
		pl.Add(band{b})
	}
	for _, c := range p.Curves {
		pl.Add(curve(c))
	}
	p.setAxes(pl)
	for _, pts := range p.Points {
		pl.Add(errorBars{pts}, scatter(pts))
	}
	return pl
}

// setAxes fixes the ranges, scales and tickers.
func (p *Panel) setAxes(pl *plot.Plot) {
	xlo, xhi := p.dataX()
	ylo, yhi := p.dataY()
	pl.X.Min, pl.X.Max = axisRange(p.XRange, xlo, xhi, p.XLog, 0.03)
	pl.Y.Min, pl.Y.Max = axisRange(p.YRange, ylo, yhi, p.YLog, 0.07)
	pl.X.Tick.Marker, pl.Y.Tick.Marker = linearTicks{}, linearTicks{}
	if p.XLog {
		logAxis(&pl.X)
	}
	if p.YLog {
		logAxis(&pl.Y)
	}
	if len(p.XTicks) > 0 {
		ticks := make(plot.ConstantTicks, len(p.XTicks))
		for i, t := range p.XTicks {
			ticks[i] = plot.Tick{Value: t.Value, Label: t.Label}
		}
		pl.X.Tick.Marker = ticks
	}
	if p.HideXLabels {
		pl.X.Tick.Marker = unlabelled{pl.X.Tick.Marker}
	}
}

// axisRange is r when set, else [lo, hi] widened by the fraction margin
// (of the span, or of the decades on a log axis).
func axisRange(r Range, lo, hi float64, log bool, margin float64) (float64, float64) {
	if r.Set() {
		return r.Min, r.Max
	}
	if math.IsNaN(lo) {
		lo, hi = 0, 1
		if log {
			lo = 0.1
		}
	}
	if log {
		a, b := math.Log10(lo), math.Log10(hi)
		if b-a < 1e-9 {
			a, b = a-0.5, b+0.5
		}
		m := (b - a) * margin
		return math.Pow(10, a-m), math.Pow(10, b+m)
	}
	if hi-lo < 1e-12*math.Max(1, math.Abs(hi)) {
		d := math.Max(0.5*math.Abs(hi), 0.5)
		return lo - d, hi + d
	}
	m := (hi - lo) * margin
	return lo - m, hi + m
}

func (p *Panel) dataX() (float64, float64) {
	var xs [][]float64
	for _, c := range p.Curves {
		xs = append(xs, c.X)
	}
	for _, pt := range p.Points {
		xs = append(xs, pt.X)
	}
	return dataRange(p.XLog, xs...)
}

func (p *Panel) dataY() (float64, float64) {
	var ys [][]float64
	for _, c := range p.Curves {
		ys = append(ys, c.Y)
	}
	for _, pt := range p.Points {
		ys = append(ys, pt.Y, pt.Lo, pt.Hi)
	}
	for _, b := range p.Bands {
		ys = append(ys, b.Lo, b.Hi)
	}
	hl := make([]float64, len(p.HLines))
	for i, h := range p.HLines {
		hl[i] = h.Value
	}
	return dataRange(p.YLog, append(ys, hl)...)
}

func xys(x, y []float64) plotter.XYs {
	out := make(plotter.XYs, len(x))
	for i := range x {
		out[i].X, out[i].Y = x[i], y[i]
	}
	return out
}

// addHeat draws the panel's matrix as cells, row 0 at the top, with no
// ticks.
func (p *Panel) addHeat(pl *plot.Plot) {
	h := plotter.NewHeatMap(heatGrid{p.Heat.Z}, diverging(p.Heat.Max).Palette(255))
	h.Min, h.Max = -p.Heat.Max, p.Heat.Max
	pl.Add(h)
	rows, cols := len(p.Heat.Z), len(p.Heat.Z[0])
	pl.X.Min, pl.X.Max = -0.5, float64(cols)-0.5
	pl.Y.Min, pl.Y.Max = -0.5, float64(rows)-0.5
	for _, ax := range []*plot.Axis{&pl.X, &pl.Y} {
		ax.Tick.Marker = plot.ConstantTicks{}
		ax.LineStyle.Width = 0
		ax.Tick.Length = 0
	}
}

// heatGrid is a matrix as a plotter.GridXYZ, row 0 at the top.
type heatGrid struct{ z [][]float64 }

func (g heatGrid) Dims() (c, r int)   { return len(g.z[0]), len(g.z) }
func (g heatGrid) Z(c, r int) float64 { return g.z[len(g.z)-1-r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }
