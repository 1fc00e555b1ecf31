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
	if c.Dashed {
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
	tx, ty := pl.Transforms(&c)
	var runs [][]vg.Point
	var run []vg.Point
	for _, p := range l.xy {
		x, y := tx(p.X), ty(p.Y)
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || math.IsNaN(float64(y)) || math.IsInf(float64(y), 0) {
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
	c.StrokeLines(l.sty, c.ClipLinesXY(runs...)...)
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

// pointText writes each point's text beside it: to its right, or to its
// left in the last tenth of the x axis, leaving out a text that would
// overlap one already written.
type pointText struct{ Points }

func (p pointText) Plot(c draw.Canvas, pl *plot.Plot) {
	tx, ty := pl.Transforms(&c)
	sty := textStyle(noteSize)
	sty.Color, sty.YAlign = p.Color, draw.YCenter
	var placed []vg.Rectangle
	for i, s := range p.Text {
		x, y := tx(p.X[i]), ty(p.Y[i])
		w, h := sty.Width(s), sty.Height(s)
		r := vg.Rectangle{Min: vg.Point{X: x + markRadius + 2, Y: y - h/2}, Max: vg.Point{X: x + markRadius + 2 + w, Y: y + h/2}}
		if pl.X.Norm(p.X[i]) >= 0.9 {
			r.Min.X, r.Max.X = x-markRadius-2-w, x-markRadius-2
		}
		free := true
		for _, q := range placed {
			free = free && (r.Max.X <= q.Min.X || r.Min.X >= q.Max.X || r.Max.Y <= q.Min.Y || r.Min.Y >= q.Max.Y)
		}
		if free {
			placed = append(placed, r)
			c.FillText(sty, vg.Point{X: r.Min.X, Y: y}, s)
		}
	}
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
