package figures

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The plotters that draw a panel's curves, markers and reference lines.

func curve(c Curve) polyline {
	l := polyline{xy: xys(c.X, c.Y), sty: draw.LineStyle{Color: c.Color, Width: curveWidth}}
	if c.Thin {
		l.sty.Width = thinWidth
	}
	switch {
	case c.Dash > 0:
		l.sty.Dashes = dashes[c.Dash%len(dashes)]
	case c.Dotted:
		l.sty.Dashes = []vg.Length{1, 2}
	case c.Dashed:
		l.sty.Dashes = []vg.Length{4, 2.5}
	}
	return l
}

// polyline draws a curve through its points, leaving out those that lie
// within simplifyTol of the line on through them: a plateau sampled a
// thousand times is drawn as one segment, and the files stay small.
type polyline struct {
	xy  plotter.XYs
	sty draw.LineStyle
}

// simplifyTol is far below what a screen or a printer resolves (1/1440 in).
const simplifyTol = vg.Length(0.05)

func (l polyline) Plot(c draw.Canvas, pl *plot.Plot) {
	c.StrokeLines(l.sty, l.runs(c, pl)...)
}

// runs are the polylines the curve draws on c: its points in canvas
// coordinates, split where a point has no place (NaN, or ≤ 0 on a log
// axis), simplified and clipped to c.
func (l polyline) runs(c draw.Canvas, pl *plot.Plot) [][]vg.Point {
	tx, ty := pl.Transforms(&c)
	var runs [][]vg.Point
	var run []vg.Point
	for _, p := range l.xy {
		ok := !math.IsNaN(p.X) && !math.IsNaN(p.Y) && !(isLog(pl.X) && p.X <= 0) && !(isLog(pl.Y) && p.Y <= 0)
		var x, y vg.Length
		if ok {
			x, y = tx(p.X), ty(p.Y)
			ok = !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) && !math.IsNaN(float64(y)) && !math.IsInf(float64(y), 0)
		}
		if !ok {
			if len(run) > 1 {
				runs = append(runs, simplify(run, simplifyTol))
			}
			run = nil
			continue
		}
		run = append(run, vg.Point{X: x, Y: y})
	}
	if len(run) > 1 {
		runs = append(runs, simplify(run, simplifyTol))
	}
	return c.ClipLinesXY(runs...)
}

// isLog reports whether an axis has a log scale.
func isLog(ax plot.Axis) bool {
	_, ok := ax.Scale.(plot.LogScale)
	return ok
}

func (l polyline) DataRange() (xmin, xmax, ymin, ymax float64) { return plotter.XYRange(l.xy) }

// Thumbnail draws the legend's sample of the line.
func (l polyline) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.sty, c.Min.X, y, c.Max.X, y)
}

// simplify keeps the points of pts needed to draw them within tol: the
// Ramer–Douglas–Peucker algorithm (Douglas & Peucker 1973), which keeps the
// point farthest from the chord of a stretch when it is farther than tol
// and splits the stretch there.
func simplify(pts []vg.Point, tol vg.Length) []vg.Point {
	if len(pts) < 3 {
		return pts
	}
	keep := make([]bool, len(pts))
	keep[0], keep[len(pts)-1] = true, true
	stack := [][2]int{{0, len(pts) - 1}}
	for len(stack) > 0 {
		a, b := stack[len(stack)-1][0], stack[len(stack)-1][1]
		stack = stack[:len(stack)-1]
		far, at := vg.Length(0), -1
		for i := a + 1; i < b; i++ {
			if d := distance(pts[i], pts[a], pts[b]); d > far {
				far, at = d, i
			}
		}
		if far > tol {
			keep[at] = true
			stack = append(stack, [2]int{a, at}, [2]int{at, b})
		}
	}
	out := make([]vg.Point, 0, len(pts))
	for i, k := range keep {
		if k {
			out = append(out, pts[i])
		}
	}
	return out
}

// distance is the distance from p to the segment [a, b].
func distance(p, a, b vg.Point) vg.Length {
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	px, py := float64(p.X-a.X), float64(p.Y-a.Y)
	l2 := dx*dx + dy*dy
	w := 0.0
	if l2 > 0 {
		w = math.Max(0, math.Min(1, (px*dx+py*dy)/l2))
	}
	return vg.Length(math.Hypot(px-w*dx, py-w*dy))
}

func scatter(p Points) *plotter.Scatter {
	s := &plotter.Scatter{XYs: xys(p.X, p.Y)}
	s.GlyphStyle = draw.GlyphStyle{Color: p.Color, Radius: markRadius, Shape: draw.CircleGlyph{}}
	switch {
	case p.Square && p.Open:
		s.GlyphStyle.Shape = draw.SquareGlyph{}
		s.GlyphStyle.Radius *= 1.3
	case p.Square:
		s.GlyphStyle.Shape = draw.BoxGlyph{}
	case p.Open:
		s.GlyphStyle.Shape = draw.RingGlyph{}
		s.GlyphStyle.Radius *= 1.3
	}
	return s
}

// errorBars draws a vertical bar from Lo[i] to Hi[i] through each point.
type errorBars struct{ Points }

func (e errorBars) Plot(c draw.Canvas, pl *plot.Plot) {
	sty := draw.LineStyle{Color: e.Color, Width: thinWidth}
	c.StrokeLines(sty, e.lines(c, pl)...)
}

// lines are the bars on c, clipped to it.
func (e errorBars) lines(c draw.Canvas, pl *plot.Plot) [][]vg.Point {
	if len(e.Lo) != len(e.X) || len(e.Hi) != len(e.X) {
		return nil
	}
	tx, ty := pl.Transforms(&c)
	var out [][]vg.Point
	for i, x := range e.X {
		lo, hi := e.Lo[i], e.Hi[i]
		if math.IsNaN(lo) || math.IsNaN(hi) || isLog(pl.Y) && (lo <= 0 || hi <= 0) || isLog(pl.X) && x <= 0 {
			continue
		}
		out = append(out, []vg.Point{{X: tx(x), Y: ty(lo)}, {X: tx(x), Y: ty(hi)}})
	}
	return c.ClipLinesXY(out...)
}

// band shades the area between two curves in a light tint of its colour.
type band struct{ Band }

func (b band) Plot(c draw.Canvas, pl *plot.Plot) {
	if poly := bandPolygon(b.Band, c, pl); len(poly) > 2 {
		c.FillPolygon(tint(b.Color), poly)
	}
}

// bandPolygon is the outline of the band on c: along Lo, back along Hi,
// clipped to c; the points without a place on the axes are left out.
func bandPolygon(b Band, c draw.Canvas, pl *plot.Plot) []vg.Point {
	tx, ty := pl.Transforms(&c)
	ok := func(i int) bool {
		return !math.IsNaN(b.Lo[i]) && !math.IsNaN(b.Hi[i]) && !(isLog(pl.X) && b.X[i] <= 0) &&
			!(isLog(pl.Y) && (b.Lo[i] <= 0 || b.Hi[i] <= 0))
	}
	var lo, hi []vg.Point
	for i := range b.X {
		if ok(i) {
			lo = append(lo, vg.Point{X: tx(b.X[i]), Y: ty(b.Lo[i])})
			hi = append(hi, vg.Point{X: tx(b.X[i]), Y: ty(b.Hi[i])})
		}
	}
	lo, hi = simplify(lo, simplifyTol), simplify(hi, simplifyTol)
	for i := len(hi) - 1; i >= 0; i-- {
		lo = append(lo, hi[i])
	}
	return c.ClipPolygonXY(lo)
}

func (b band) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = dataRange(false, b.X)
	ymin, ymax = dataRange(false, b.Lo, b.Hi)
	return
}

// refLine is a dotted grey line across the panel at value, horizontal or
// vertical.
type refLineT struct {
	value      float64
	horizontal bool
}

func refLine(value float64, horizontal bool) plot.Plotter { return refLineT{value, horizontal} }

func (r refLineT) Plot(c draw.Canvas, pl *plot.Plot) {
	tx, ty := pl.Transforms(&c)
	sty := draw.LineStyle{Color: refGray, Width: refWidth, Dashes: []vg.Length{1, 2}}
	if r.horizontal {
		if r.value < pl.Y.Min || r.value > pl.Y.Max {
			return
		}
		y := ty(r.value)
		c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
		return
	}
	if r.value < pl.X.Min || r.value > pl.X.Max {
		return
	}
	sty.Color = lightGray
	x := tx(r.value)
	c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
}
