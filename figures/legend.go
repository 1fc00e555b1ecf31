package figures

import (
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// What is drawn over a panel after its plot: axis labels, titles, the
// labels of reference lines and the legend.

// drawExtras writes the labels of the horizontal reference lines and the
// legend over the drawn plot pl; area is the plot's canvas and cell its
// grid cell (an outside legend goes in the room on the right).
func (p *Panel) drawExtras(pl *plot.Plot, area, cell draw.Canvas) {
	data := pl.DataCanvas(p.inner(area))
	_, ty := pl.Transforms(&data)
	if p.XLabel != "" {
		sty := textStyle(labelSize)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		area.FillText(sty, vg.Point{X: data.Center().X, Y: area.Min.Y}, p.XLabel)
	}
	if p.YLabel != "" {
		sty := textStyle(labelSize)
		sty.XAlign, sty.YAlign, sty.Rotation = draw.XCenter, draw.YTop, math.Pi/2
		area.FillText(sty, vg.Point{X: area.Min.X, Y: data.Center().Y}, p.YLabel)
	}
	if p.Title != "" {
		sty := textStyle(labelSize)
		sty.XAlign = draw.XCenter
		data.FillText(sty, vg.Point{X: data.Center().X, Y: data.Max.Y + labelSize*0.45}, p.Title)
	}
	p.drawLineLabels(data, ty)
	if p.Legend == NoLegend || p.legendEntries() == 0 {
		return
	}
	p.drawLegend(pl, data, cell)
}

// drawLineLabels writes the labels of the horizontal reference lines to
// the right of the data area, level with their lines, leaving out those
// that would overlap a label above them (keeping the lowest).
func (p *Panel) drawLineLabels(data draw.Canvas, ty func(float64) vg.Length) {
	sty := lineLabelStyle()
	h := sty.Height("m")
	var lines []RefLine
	var tops []vg.Length
	for _, l := range p.HLines {
		if l.Label != "" && data.ContainsY(ty(l.Value)) {
			lines, tops = append(lines, l), append(tops, ty(l.Value)+h/2)
		}
	}
	keep := stackLabels(tops, h)
	for i, l := range lines {
		if keep[i] {
			data.FillText(sty, vg.Point{X: data.Max.X + 3, Y: ty(l.Value)}, l.Label)
		}
	}
}

func lineLabelStyle() text.Style {
	sty := textStyle(noteSize)
	sty.Color = refGray
	sty.YAlign = draw.YCenter
	return sty
}

// lineLabelWidth is the room the labels of the horizontal reference lines
// take to the right of the data area.
func (p *Panel) lineLabelWidth() vg.Length {
	var w vg.Length
	sty := lineLabelStyle()
	for _, l := range p.HLines {
		if l.Label != "" {
			w = max(w, sty.Width(l.Label)+5)
		}
	}
	return w
}

// stackLabels chooses which of the labels with the given tops and height
// h to write so that none overlaps another: greedily from the highest,
// then the lowest one in place of those it would overlap.
func stackLabels(tops []vg.Length, h vg.Length) []bool {
	order := make([]int, len(tops))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return tops[order[a]] > tops[order[b]] })
	keep := make([]bool, len(tops))
	bottom := vg.Length(math.Inf(1))
	for _, i := range order {
		if tops[i] <= bottom-1 {
			keep[i], bottom = true, tops[i]-h
		}
	}
	if n := len(order); n > 0 && !keep[order[n-1]] {
		low := order[n-1]
		keep[low] = true
		for _, i := range order[:n-1] {
			if keep[i] && tops[i]-h < tops[low]+1 {
				keep[i] = false
			}
		}
	}
	return keep
}

// legendOf builds the panel's legend: the labelled curves (thick ones
// first), then the labelled points.
func (p *Panel) legendOf() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle = textStyle(legendSize)
	l.ThumbnailWidth = 14
	l.Padding = 0.5
	for pass := 0; pass < 2; pass++ {
		for _, c := range p.Curves {
			if c.Label != "" && c.Thin == (pass == 1) {
				l.Add(c.Label, curve(c))
			}
		}
	}
	for _, pts := range p.Points {
		if pts.Label != "" {
			l.Add(pts.Label, scatter(pts))
		}
	}
	return l
}

func legendWidth(p *Panel) vg.Length {
	l := p.legendOf()
	w, _ := legendBox(&l, p)
	return w
}

// legendBox is the width and height of the legend's entries.
func legendBox(l *plot.Legend, p *Panel) (vg.Length, vg.Length) {
	var w vg.Length
	labels := []string{}
	for _, c := range p.Curves {
		labels = append(labels, c.Label)
	}
	for _, pt := range p.Points {
		labels = append(labels, pt.Label)
	}
	n := 0
	for _, s := range labels {
		if s == "" {
			continue
		}
		n++
		w = max(w, l.ThumbnailWidth+l.TextStyle.Width(" "+s))
	}
	h := l.TextStyle.Height("Xy")
	return w, vg.Length(n)*(h+l.Padding) - l.Padding
}

// drawLegend draws the legend on a white box in the corner of the data
// area that hides the fewest drawn points, the panel's Placement first
// among equals, or to the right of the data area (Outside).
func (p *Panel) drawLegend(pl *plot.Plot, data, cell draw.Canvas) {
	l := p.legendOf()
	w, h := legendBox(&l, p)
	const inset, margin = 3, 2
	var r vg.Rectangle
	if p.Legend == Outside {
		x := data.Max.X + p.lineLabelWidth() + 6
		r = vg.Rectangle{Min: vg.Point{X: x, Y: data.Max.Y - h}, Max: vg.Point{X: x + w, Y: data.Max.Y}}
	} else {
		box := draw.Crop(data, inset, -inset, inset, -inset)
		best := -1
		for _, corner := range append([]Placement{p.Legend}, TopLeft, TopRight, BottomLeft, BottomRight) {
			c := cornerRect(box, corner, w, h)
			if n := p.pointsIn(pl, data, c); best < 0 || n < best {
				best, r = n, c
			}
		}
		bg := vg.Rectangle{Min: vg.Point{X: r.Min.X - margin, Y: r.Min.Y - margin}, Max: vg.Point{X: r.Max.X + margin, Y: r.Max.Y + margin}}
		data.SetColor(color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xE6})
		data.Fill(bg.Path())
	}
	// plot.Legend draws its icons on the side named by Left; it is given
	// the legend's own rectangle.
	l.Left, l.Top = true, true
	l.Draw(draw.Canvas{Canvas: data.Canvas, Rectangle: r})
}

// cornerRect is the w×h rectangle in a corner of box.
func cornerRect(box draw.Canvas, corner Placement, w, h vg.Length) vg.Rectangle {
	x, y := box.Min.X, box.Max.Y-h
	if corner == TopRight || corner == BottomRight {
		x = box.Max.X - w
	}
	if corner == BottomLeft || corner == BottomRight {
		y = box.Min.Y
	}
	return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}}
}

// pointsIn counts the markers of the panel drawn inside r, and the points
// of its curves there, eight per segment so that a long straight segment
// counts too.
func (p *Panel) pointsIn(pl *plot.Plot, data draw.Canvas, r vg.Rectangle) int {
	tx, ty := pl.Transforms(&data)
	n := 0
	inside := func(x, y vg.Length) bool { return x >= r.Min.X && x <= r.Max.X && y >= r.Min.Y && y <= r.Max.Y }
	usable := func(x, y float64) bool { return !(p.XLog && x <= 0 || p.YLog && y <= 0) }
	for _, c := range p.Curves {
		for i := 1; i < len(c.X); i++ {
			if !usable(c.X[i-1], c.Y[i-1]) || !usable(c.X[i], c.Y[i]) {
				continue
			}
			x0, y0, x1, y1 := tx(c.X[i-1]), ty(c.Y[i-1]), tx(c.X[i]), ty(c.Y[i])
			for k := vg.Length(0); k < 8; k++ {
				if inside(x0+(x1-x0)*k/8, y0+(y1-y0)*k/8) {
					n++
				}
			}
		}
	}
	for _, pt := range p.Points {
		for i := range pt.X {
			if usable(pt.X[i], pt.Y[i]) && inside(tx(pt.X[i]), ty(pt.Y[i])) {
				n += 8
			}
		}
	}
	return n
}
