package figures

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The layout of a Figure with gonum.org/v1/plot: one plot.Plot per panel,
// on a grid whose data areas line up along rows and columns. Everything's
// place is decided before anything is drawn, so that legends and labels go
// where they cover no data; Figure.Layout returns it (layoutview.go).

// layout is where everything of a figure goes on a canvas.
type Layout struct {
	// Canvas is the figure's whole area.
	Canvas vg.Rectangle
	// Title and Caption hold the lines of the figure's title and caption;
	// Legend is the legend under the grid (Placement Below), if any.
	Title, Caption []PlacedText
	Legend         *PlacedLegend
	Panels         []*PanelLayout
}

// PanelLayout is a panel's place, what it draws of its data (Ink) and the
// texts and legend drawn over or beside it.
type PanelLayout struct {
	p      *Panel
	pl     *plot.Plot
	area   draw.Canvas // the canvas the plot draws in
	data   draw.Canvas // its data area
	titles []string    // the lines of the panel's title
	// Ink is the panel's data as drawn; Texts its titles, axis labels,
	// reference-line labels and point labels; Legend its legend, if any.
	Ink    Ink
	Texts  []PlacedText
	Legend *PlacedLegend
	// Ticks are the tick labels gonum draws, with their boxes (their
	// extent along the axis exact, across it approximate).
	Ticks []PlacedText
	// spot is where the legend goes: inside the data area, to the right
	// of the panel, or above it.
	spot  legendSpot
	cell  draw.Canvas // the panel's grid cell
	above vg.Length   // the room kept above the row's data areas for legends
}

// legendSpot is where a legend goes relative to its panel.
type legendSpot int

const (
	spotInside  legendSpot = iota
	spotOutside            // to the right of the panel
	spotAbove              // above the data area, under the title
	spotNone               // under the grid (Below): the figure's legend
)

// Margins of the figure around its title and grid, in points.
const (
	edgeLeft, edgeRight, edgeBottom, edgeTop = 2, 6, 2, 4
)

// layout places the figure on dc: the title's and caption's lines, the
// panels (a legend that covers data wherever it goes inside moves to the
// right of its panel, or above it when it would take more than a third of
// the cell's width there), then the labels of reference lines and points,
// and every text's box.
func (f *Figure) layout(dc draw.Canvas) *Layout {
	lay := &Layout{Canvas: dc.Rectangle}
	dc = lay.placeTitle(f.Title, dc)
	dc = lay.placeCaption(f.Caption, dc)
	dc = draw.Crop(dc, edgeLeft, -edgeRight, edgeBottom, -edgeTop)
	var panels [][]*PanelLayout
	for _, r := range f.Grid {
		row := make([]*PanelLayout, len(r))
		for j, p := range r {
			if p != nil {
				row[j] = &PanelLayout{p: p, pl: p.plot()}
				switch p.Legend {
				case Outside:
					row[j].spot = spotOutside
				case Below:
					row[j].spot = spotNone
					dc = lay.placeBelow(p, dc)
				}
				lay.Panels = append(lay.Panels, row[j])
			}
		}
		panels = append(panels, row)
	}
	if len(panels) == 0 {
		return lay
	}
	// A legend that moves out of its panel changes the panel's size: place
	// again until none moves.
	for pass := 0; pass <= 2*len(lay.Panels); pass++ {
		f.placePanels(panels, dc)
		moved := false
		for _, pp := range lay.Panels {
			if next := pp.moveLegend(); next != pp.spot {
				pp.spot, moved = next, true
			}
		}
		if !moved {
			break
		}
	}
	for _, pp := range lay.Panels {
		pp.placeLegend()
		pp.placeTexts()
	}
	return lay
}

// placeTitle wraps the title to the width of dc, records its lines and
// returns the canvas below it.
func (lay *Layout) placeTitle(title string, dc draw.Canvas) draw.Canvas {
	if title == "" {
		return dc
	}
	sty := textStyle(titleSize)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	y := dc.Max.Y - textEdge
	for _, line := range wrap(sty, title, dc.Max.X-dc.Min.X-edgeLeft-edgeRight) {
		lay.Title = append(lay.Title, newText("title", line, sty, vg.Point{X: dc.Center().X, Y: y}))
		y -= titleLead
	}
	return draw.Crop(dc, 0, 0, 0, y-titleSize*0.1-dc.Max.Y)
}

// The title's and caption's lines: their distance from the canvas's edge
// and from line to line.
const (
	textEdge    = vg.Length(3)
	titleLead   = titleSize * 1.2
	captionLead = noteSize * 1.25
)

// titleHeight is the height placeTitle takes on a canvas of width w.
func titleHeight(title string, w vg.Length) vg.Length {
	if title == "" {
		return 0
	}
	n := len(wrap(textStyle(titleSize), title, w-edgeLeft-edgeRight))
	return textEdge + vg.Length(n)*titleLead + titleSize*0.1
}

// captionHeight is the height placeCaption takes on a canvas of width w.
func captionHeight(caption string, w vg.Length) vg.Length {
	if caption == "" {
		return 0
	}
	n := len(wrap(textStyle(noteSize), caption, w-edgeLeft-edgeRight))
	return textEdge + vg.Length(n)*captionLead
}

// placeCaption wraps the caption to the width of dc, records its lines at
// the bottom and returns the canvas above it.
func (lay *Layout) placeCaption(caption string, dc draw.Canvas) draw.Canvas {
	if caption == "" {
		return dc
	}
	sty := textStyle(noteSize)
	sty.Color, sty.XAlign, sty.YAlign = captionGray, draw.XCenter, draw.YBottom
	lines := wrap(sty, caption, dc.Max.X-dc.Min.X-edgeLeft-edgeRight)
	y := dc.Min.Y + textEdge
	for k := len(lines) - 1; k >= 0; k-- {
		lay.Caption = append(lay.Caption, newText("caption", lines[k], sty, vg.Point{X: dc.Center().X, Y: y}))
		y += captionLead
	}
	return draw.Crop(dc, 0, 0, y-dc.Min.Y, 0)
}

// placeBelow puts the legend of panel p under the grid, centred, in as
// many columns as fit the width of dc, and returns the canvas above it.
func (lay *Layout) placeBelow(p *Panel, dc draw.Canvas) draw.Canvas {
	l := p.legend()
	if len(l.entries) == 0 || lay.Legend != nil {
		return dc
	}
	l.fit(dc.Max.X - dc.Min.X - edgeLeft - edgeRight)
	w, h := l.width(), l.height()
	x, y := dc.Center().X-w/2, dc.Min.Y+edgeBottom
	lay.Legend = &PlacedLegend{l, vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}}}
	return draw.Crop(dc, 0, 0, h+2*legendInset, 0)
}

// placePanels sets every panel's canvas, data area and ink: twice, the
// second time with the tickers told the length of their axes.
func (f *Figure) placePanels(panels [][]*PanelLayout, dc draw.Canvas) {
	for fit := 0; fit < 2; fit++ {
		cells := f.cells(panels, dc)
		areas := alignData(panels, cells)
		// Heat maps are drawn as squares of one size, the smallest that fits.
		side := vg.Length(math.Inf(1))
		for i := range panels {
			for j, pp := range panels[i] {
				if pp != nil && pp.p.Heat != nil {
					d := pp.pl.DataCanvas(pp.p.inner(areas[i][j]))
					side = min(side, d.Max.X-d.Min.X, d.Max.Y-d.Min.Y)
				}
			}
		}
		for i := range panels {
			for j, pp := range panels[i] {
				if pp == nil {
					continue
				}
				if pp.p.Heat != nil {
					areas[i][j] = square(pp.pl, pp.p.inner(areas[i][j]), areas[i][j], side)
				}
				pp.area = areas[i][j]
				pp.data = pp.pl.DataCanvas(pp.p.inner(pp.area))
				if fit == 0 {
					pp.fitTicks()
				}
			}
		}
	}
	for _, r := range panels {
		for _, pp := range r {
			if pp != nil {
				pp.Ink = pp.p.ink(pp.pl, pp.data)
				pp.Ticks = pp.tickLabels()
			}
		}
	}
}

// draw draws the laid-out figure on dc.
func (lay *Layout) draw(dc draw.Canvas) {
	dc.SetColor(white)
	dc.Fill(dc.Rectangle.Path())
	for _, t := range append(lay.Title, lay.Caption...) {
		t.draw(dc)
	}
	if lay.Legend != nil {
		lay.Legend.draw(dc, false)
	}
	for _, pp := range lay.Panels {
		pp.pl.Draw(pp.p.inner(pp.area))
		for _, t := range pp.Texts {
			t.draw(pp.area)
		}
		if pp.Legend != nil {
			pp.Legend.draw(pp.data, pp.spot == spotInside)
		}
	}
}

// square crops area, the canvas of a heat map whose plot draws in inner,
// so that its data area is a square of the given side, centred where it
// was.
func square(pl *plot.Plot, inner, area draw.Canvas, side vg.Length) draw.Canvas {
	d := pl.DataCanvas(inner)
	dw, dh := (d.Max.X-d.Min.X-side)/2, (d.Max.Y-d.Min.Y-side)/2
	return draw.Crop(area, dw, -dw, dh, -dh)
}

// inner is the part of a panel's canvas that its gonum plot draws in: the
// room for the axis labels is kept aside, since they are drawn with the
// other texts (gonum places the glyph box of a centred axis label at the
// arithmetic midpoint of the range, which on a log axis is near its end,
// and pads the plot for it).
func (p *Panel) inner(c draw.Canvas) draw.Canvas {
	var left, bottom vg.Length
	if p.YLabel != "" {
		left = rowLabelRoom
	}
	if p.XLabel != "" {
		bottom = labelSize * 1.3
	}
	return draw.Crop(c, left, 0, bottom, 0)
}

// Gaps between cells, and the room of a y axis label.
const (
	rowGap, colGap = 8, 12
	rowLabelRoom   = labelSize * 1.7
	titleLine      = labelSize * 1.3
)

// cells splits dc into the grid's cells: rows weighted by Heights, each
// row split among its own panels by Widths when it has as many (equally
// otherwise). A row with panel titles keeps room for the most lines any
// of them wraps to, and one with a legend above a panel room for the
// tallest, in every cell (both are drawn with the texts).
func (f *Figure) cells(panels [][]*PanelLayout, dc draw.Canvas) [][]draw.Canvas {
	rows := len(panels)
	weights, total := shares(f.Heights, rows)
	height := float64(dc.Max.Y-dc.Min.Y) - rowGap*float64(rows-1)
	out := make([][]draw.Canvas, rows)
	top := dc.Max.Y
	for i, r := range panels {
		h := vg.Length(height * weights[i] / total)
		cols := len(r)
		widths, wsum := shares(f.Widths, cols)
		free := float64(dc.Max.X - dc.Min.X - colGap*vg.Length(cols-1))
		out[i] = make([]draw.Canvas, cols)
		lines := 0
		var above vg.Length
		x0 := dc.Min.X
		for j := range out[i] {
			width := vg.Length(free * widths[j] / wsum)
			out[i][j] = draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x0, Y: top - h}, Max: vg.Point{X: x0 + width, Y: top},
			}}
			x0 += width + colGap
			pp := r[j]
			if pp == nil {
				continue
			}
			pp.cell = out[i][j]
			if pp.p.Title != "" {
				pp.titles = wrap(textStyle(labelSize), pp.p.Title, width)
				lines = max(lines, len(pp.titles))
			}
			if pp.spot == spotAbove {
				l := pp.p.legend()
				l.fit(width - rowLabelRoom)
				above = max(above, l.height()+legendInset)
			}
		}
		for j := range out[i] {
			out[i][j] = draw.Crop(out[i][j], 0, 0, 0, -titleLine*vg.Length(lines)-above)
			if r[j] != nil {
				r[j].above = above
			}
		}
		top -= h + rowGap
	}
	return out
}

// shares returns the relative sizes of n cells, w if it gives one per cell
// and equal ones otherwise, and their sum.
func shares(w []float64, n int) (sizes []float64, total float64) {
	sizes = w
	if len(sizes) != n {
		sizes = make([]float64, n)
		for i := range sizes {
			sizes[i] = 1
		}
	}
	for _, s := range sizes {
		total += s
	}
	return sizes, total
}

// gridColumn identifies the cells that share left and right edges: the j-th
// of the rows with cols panels.
type gridColumn struct{ cols, j int }

// alignData crops each cell so that the data areas of the plots in a
// column share their left and right edges and those in a row their top and
// bottom edges (as plot.Align does for equal tiles). A column with a
// legend outside its panels keeps room for it on the right in every row.
func alignData(panels [][]*PanelLayout, cells [][]draw.Canvas) [][]draw.Canvas {
	room := map[gridColumn]vg.Length{}
	for _, r := range panels {
		for j, pp := range r {
			if pp == nil {
				continue
			}
			k := gridColumn{len(r), j}
			w := pp.p.lineLabelWidth()
			if pp.spot == spotOutside {
				w += pp.p.legend().width() + legendOutside
			}
			room[k] = max(room[k], w)
		}
	}
	left, right := map[gridColumn]vg.Length{}, map[gridColumn]vg.Length{}
	bottom, top := make([]vg.Length, len(panels)), make([]vg.Length, len(panels))
	canvas := func(i, j int) (draw.Canvas, draw.Canvas) {
		c := draw.Crop(cells[i][j], 0, -room[gridColumn{len(panels[i]), j}], 0, 0)
		return c, panels[i][j].pl.DataCanvas(panels[i][j].p.inner(c))
	}
	for i := range panels {
		for j, pp := range panels[i] {
			if pp == nil {
				continue
			}
			c, d := canvas(i, j)
			k := gridColumn{len(panels[i]), j}
			left[k] = max(left[k], d.Min.X-c.Min.X)
			right[k] = max(right[k], c.Max.X-d.Max.X)
			bottom[i] = max(bottom[i], d.Min.Y-c.Min.Y)
			top[i] = max(top[i], c.Max.Y-d.Max.Y)
		}
	}
	out := make([][]draw.Canvas, len(panels))
	for i := range panels {
		out[i] = make([]draw.Canvas, len(panels[i]))
		for j, pp := range panels[i] {
			if pp == nil {
				continue
			}
			c, d := canvas(i, j)
			k := gridColumn{len(panels[i]), j}
			out[i][j] = draw.Crop(c, left[k]-(d.Min.X-c.Min.X), -(right[k] - (c.Max.X - d.Max.X)),
				bottom[i]-(d.Min.Y-c.Min.Y), -(top[i] - (c.Max.Y - d.Max.Y)))
		}
	}
	return out
}
