package figures

import (
	"image/color"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A panel's legend: what it lists, its size, and where it goes.

// legendEntry is a legend's line: a sample of a curve or of markers, and
// its label.
type legendEntry struct {
	label string
	curve *Curve
	pts   *Points
	band  *Band
}

// legendBox is a legend's entries, in cols columns (0 is one), filled
// column by column as matplotlib's ncol does.
type legendBox struct {
	entries []legendEntry
	cols    int
}

// PlacedLegend is a legend and its rectangle, margin included: the white
// box drawn under it inside a panel.
type PlacedLegend struct {
	legendBox
	Box vg.Rectangle
}

// Sizes of a legend: the sample's width, the gap between it and the text,
// the spacing of the lines, the margin around them, and the inset from the
// data area's edges.
const (
	thumbWidth    = 17 // 4 + 2.5 + 4 + 2.5 + 4: a dashed sample ends on a whole dash
	thumbGap      = 3
	legendPad     = 0.5
	legendMargin  = 2
	legendInset   = 3
	legendOutside = 6 // gap between the line labels and a legend outside
)

// legend lists the panel's labelled curves (thick ones first), then its
// labelled points and bands.
func (p *Panel) legend() legendBox {
	var l legendBox
	for pass := 0; pass < 2; pass++ {
		for i := range p.Curves {
			if c := &p.Curves[i]; c.Label != "" && c.Thin == (pass == 1) {
				l.entries = append(l.entries, legendEntry{label: c.Label, curve: c})
			}
		}
	}
	for i := range p.Points {
		if pts := &p.Points[i]; pts.Label != "" {
			l.entries = append(l.entries, legendEntry{label: pts.Label, pts: pts})
		}
	}
	for i := range p.Bands {
		if b := &p.Bands[i]; b.Label != "" {
			l.entries = append(l.entries, legendEntry{label: b.Label, band: b})
		}
	}
	return l
}

// lineHeight is the pitch of a legend's lines.
func (l legendBox) lineHeight() vg.Length {
	return textStyle(legendSize).FontExtents().Height
}

// rows is the number of lines, and columns the number of columns used.
func (l legendBox) rows() int {
	c := max(1, min(l.cols, len(l.entries)))
	return max(1, (len(l.entries)+c-1)/c)
}

func (l legendBox) columns() int { return max(1, (len(l.entries)+l.rows()-1)/l.rows()) }

// entryWidth is the width of the widest entry.
func (l legendBox) entryWidth() vg.Length {
	sty := textStyle(legendSize)
	var w vg.Length
	for _, e := range l.entries {
		w = max(w, sty.Width(e.label))
	}
	return thumbWidth + thumbGap + w
}

// legendColGap is the space between the columns of a legend.
const legendColGap = 10

// width and height are the legend's size with its margin.
func (l legendBox) width() vg.Length {
	c := vg.Length(l.columns())
	return c*l.entryWidth() + (c-1)*legendColGap + 2*legendMargin
}

func (l legendBox) height() vg.Length {
	n := vg.Length(l.rows())
	return n*l.lineHeight() + (n-1)*legendPad + 2*legendMargin
}

// fit sets the most columns (up to one per entry) whose width is within w.
func (l *legendBox) fit(w vg.Length) {
	for l.cols = len(l.entries); l.cols > 1 && l.width() > w; l.cols-- {
	}
}

// legendSpots are the places a legend may take inside a panel, the
// preferred one first, then as matplotlib's loc="best" orders them: the
// corners, then the middles of the edges.
func legendSpots(preferred Placement) []Placement {
	return append([]Placement{preferred}, TopRight, TopLeft, BottomLeft, BottomRight, centerRight, centerLeft, bottomCenter, topCenter)
}

// The middles of the edges, where a legend may go too.
const (
	centerRight Placement = iota + 100
	centerLeft
	bottomCenter
	topCenter
)

// spot is the w×h rectangle at a place in box.
func spot(box vg.Rectangle, at Placement, w, h vg.Length) vg.Rectangle {
	x, y := box.Min.X, box.Max.Y-h
	switch at {
	case TopRight, BottomRight, centerRight:
		x = box.Max.X - w
	case topCenter, bottomCenter:
		x = (box.Min.X + box.Max.X - w) / 2
	}
	switch at {
	case BottomLeft, BottomRight, bottomCenter:
		y = box.Min.Y
	case centerLeft, centerRight:
		y = (box.Min.Y + box.Max.Y - h) / 2
	}
	return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}}
}

// moveLegend is where the panel's legend should go now: inside while a
// place there is free of ink, else to the right of the panel while that
// leaves two thirds of the cell's width to it, else above it.
func (pp *PanelLayout) moveLegend() legendSpot {
	l := pp.p.legend()
	if pp.p.Legend == NoLegend || len(l.entries) == 0 || pp.spot == spotAbove || pp.spot == spotNone {
		return pp.spot
	}
	if pp.spot == spotInside {
		if _, ok := pp.insideSpot(l); ok {
			return spotInside
		}
	}
	if room := pp.p.lineLabelWidth() + l.width() + legendOutside; room <= (pp.cell.Max.X-pp.cell.Min.X)/3 {
		return spotOutside
	}
	return spotAbove
}

// insideSpot is the first place inside the data area where the legend
// touches no ink.
func (pp *PanelLayout) insideSpot(l legendBox) (vg.Rectangle, bool) {
	w, h := l.width(), l.height()
	box := grow(pp.data.Rectangle, -legendInset)
	if w > box.Max.X-box.Min.X || h > box.Max.Y-box.Min.Y {
		return vg.Rectangle{}, false
	}
	for _, at := range legendSpots(pp.p.Legend) {
		if r := spot(box, at, w, h); !pp.Ink.Touches(r, inkPad) {
			return r, true
		}
	}
	return vg.Rectangle{}, false
}

// placeLegend puts the panel's legend where moveLegend chose: at the free
// place inside, to the right of the panel (after the labels of its
// reference lines) or above its data area, from the cell's left edge
// after the y label's room, in as many columns as fit the cell.
func (pp *PanelLayout) placeLegend() {
	pp.Legend = nil
	l := pp.p.legend()
	if pp.p.Legend == NoLegend || len(l.entries) == 0 {
		return
	}
	w, h := l.width(), l.height()
	d := pp.data.Rectangle
	var r vg.Rectangle
	switch pp.spot {
	case spotInside:
		r, _ = pp.insideSpot(l)
	case spotOutside:
		x := d.Max.X + pp.p.lineLabelWidth() + legendOutside
		r = vg.Rectangle{Min: vg.Point{X: x, Y: d.Max.Y - h}, Max: vg.Point{X: x + w, Y: d.Max.Y}}
	case spotAbove:
		x := pp.cell.Min.X + rowLabelRoom
		l.fit(pp.cell.Max.X - x)
		w, h = l.width(), l.height()
		y := d.Max.Y + legendInset
		r = vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}}
	case spotNone:
		return
	}
	pp.Legend = &PlacedLegend{l, r}
}

// inkPad is the clearance kept between a text or legend and the data: half
// the width of a curve, and a little.
const inkPad = curveWidth/2 + 0.25

// draw draws the legend in its box, on a white ground when inside a panel.
func (l *PlacedLegend) draw(c draw.Canvas, ground bool) {
	if ground {
		c.SetColor(color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xE6})
		c.Fill(l.Box.Path())
	}
	sty := textStyle(legendSize)
	sty.YAlign = draw.YCenter
	h := l.lineHeight()
	for i, e := range l.entries {
		row, col := i%l.rows(), i/l.rows()
		x := l.Box.Min.X + legendMargin + vg.Length(col)*(l.entryWidth()+legendColGap)
		y := l.Box.Max.Y - legendMargin - vg.Length(row)*(h+legendPad) - h/2
		thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y - h/2}, Max: vg.Point{X: x + thumbWidth, Y: y + h/2}}}
		switch {
		case e.curve != nil:
			curve(*e.curve).Thumbnail(&thumb)
		case e.pts != nil:
			thumb.DrawGlyphNoClip(scatter(*e.pts).GlyphStyle, thumb.Center())
		case e.band != nil:
			r := grow(thumb.Rectangle, -h/5)
			r.Min.X, r.Max.X = thumb.Min.X, thumb.Max.X
			thumb.SetColor(tint(e.band.Color))
			thumb.Fill(r.Path())
		}
		c.FillText(sty, vg.Point{X: x + thumbWidth + thumbGap, Y: y}, e.label)
	}
}
