package figures

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Ink is what a panel draws of its data, in the canvas's coordinates
// (points): legends and labels are placed where they touch none of it.
// Reference lines (plateau levels, drop times) are guides, not data.
type Ink struct {
	// Lines are the polylines of the curves and error bars as drawn:
	// simplified and clipped to the data area.
	Lines [][]vg.Point
	// Marks are the boxes of the markers inside the data area.
	Marks []vg.Rectangle
	// Areas are the polygons of bands, heat maps and colour bars.
	Areas [][]vg.Point
}

// ink is the panel's data as its plot pl draws it in the data area.
func (p *Panel) ink(pl *plot.Plot, data draw.Canvas) Ink {
	var k Ink
	if p.Heat != nil || p.ColorBar > 0 {
		r := data.Rectangle
		k.Areas = append(k.Areas, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
		return k
	}
	for _, b := range p.Bands {
		if poly := bandPolygon(b, data, pl); len(poly) > 2 {
			k.Areas = append(k.Areas, poly)
		}
	}
	for _, c := range p.Curves {
		k.Lines = append(k.Lines, curve(c).runs(data, pl)...)
	}
	for _, pts := range p.Points {
		k.Lines = append(k.Lines, errorBars{pts}.lines(data, pl)...)
		r := scatter(pts).GlyphStyle.Radius + 0.5
		tx, ty := pl.Transforms(&data)
		for i := range pts.X {
			if !usable(p, pts.X[i], pts.Y[i]) {
				continue
			}
			c := vg.Point{X: tx(pts.X[i]), Y: ty(pts.Y[i])}
			if data.Contains(c) {
				k.Marks = append(k.Marks, vg.Rectangle{Min: vg.Point{X: c.X - r, Y: c.Y - r}, Max: vg.Point{X: c.X + r, Y: c.Y + r}})
			}
		}
	}
	return k
}

// usable reports whether (x, y) has a place on the panel's axes.
func usable(p *Panel, x, y float64) bool {
	finite := !math.IsNaN(x) && !math.IsInf(x, 0) && !math.IsNaN(y) && !math.IsInf(y, 0)
	return finite && !(p.XLog && x <= 0 || p.YLog && y <= 0)
}

// Touches reports whether any ink lies within pad of the rectangle r.
func (k *Ink) Touches(r vg.Rectangle, pad vg.Length) bool {
	r = grow(r, pad)
	for _, line := range k.Lines {
		for i := 1; i < len(line); i++ {
			if segmentHits(line[i-1], line[i], r) {
				return true
			}
		}
		if len(line) == 1 && inside(line[0], r) {
			return true
		}
	}
	for _, m := range k.Marks {
		if overlap(m, r) {
			return true
		}
	}
	for _, poly := range k.Areas {
		if polygonHits(poly, r) {
			return true
		}
	}
	return false
}

// grow widens r by d on every side.
func grow(r vg.Rectangle, d vg.Length) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: r.Min.X - d, Y: r.Min.Y - d}, Max: vg.Point{X: r.Max.X + d, Y: r.Max.Y + d}}
}

func inside(p vg.Point, r vg.Rectangle) bool {
	return p.X >= r.Min.X && p.X <= r.Max.X && p.Y >= r.Min.Y && p.Y <= r.Max.Y
}

// overlap reports whether two rectangles share more than an edge.
func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// segmentHits reports whether the segment [a, b] meets r (Liang–Barsky
// clipping: the parameter interval of the segment inside every slab).
func segmentHits(a, b vg.Point, r vg.Rectangle) bool {
	t0, t1 := 0.0, 1.0
	d := [2]float64{float64(b.X - a.X), float64(b.Y - a.Y)}
	lo := [2]float64{float64(r.Min.X - a.X), float64(r.Min.Y - a.Y)}
	hi := [2]float64{float64(r.Max.X - a.X), float64(r.Max.Y - a.Y)}
	for k := 0; k < 2; k++ {
		if d[k] == 0 {
			if lo[k] > 0 || hi[k] < 0 {
				return false
			}
			continue
		}
		u, v := lo[k]/d[k], hi[k]/d[k]
		if u > v {
			u, v = v, u
		}
		t0, t1 = math.Max(t0, u), math.Min(t1, v)
		if t0 > t1 {
			return false
		}
	}
	return true
}

// polygonHits reports whether the closed polygon meets r: an edge crosses
// it, or r lies inside the polygon (even–odd rule at its centre).
func polygonHits(poly []vg.Point, r vg.Rectangle) bool {
	n := len(poly)
	for i := range poly {
		if segmentHits(poly[i], poly[(i+1)%n], r) {
			return true
		}
	}
	c := vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2}
	in := false
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		a, b := poly[i], poly[j]
		if (a.Y > c.Y) != (b.Y > c.Y) && c.X < (b.X-a.X)*(c.Y-a.Y)/(b.Y-a.Y)+a.X {
			in = !in
		}
	}
	return in
}
