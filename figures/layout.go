package figures

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The layout of a Figure with gonum.org/v1/plot: one plot.Plot per panel,
// on a grid whose data areas line up along rows and columns.

// draw lays out the title and the grid of panels on dc.
func (f *Figure) draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if f.Title != "" {
		sty := textStyle(titleSize)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - 3}, f.Title)
		dc = draw.Crop(dc, 0, 0, 0, -(titleSize*1.3 + 3))
	}
	dc = draw.Crop(dc, 2, -6, 2, -4)
	if len(f.Grid) == 0 {
		return
	}
	plots := make([][]*plot.Plot, len(f.Grid))
	for i, r := range f.Grid {
		plots[i] = make([]*plot.Plot, len(r))
		for j, p := range r {
			if p != nil {
				plots[i][j] = p.plot()
			}
		}
	}
	cells := f.cells(dc)
	areas := alignData(f.Grid, plots, cells)
	// Heat maps are drawn as squares of one size, the smallest that fits.
	side := vg.Length(math.Inf(1))
	for i := range plots {
		for j, pl := range plots[i] {
			if pl != nil && f.Grid[i][j].Heat != nil {
				d := pl.DataCanvas(f.Grid[i][j].inner(areas[i][j]))
				side = min(side, d.Max.X-d.Min.X, d.Max.Y-d.Min.Y)
			}
		}
	}
	for i := range plots {
		for j, pl := range plots[i] {
			if pl == nil {
				continue
			}
			p := f.Grid[i][j]
			if p.Heat != nil {
				areas[i][j] = square(pl, p.inner(areas[i][j]), areas[i][j], side)
			}
			pl.Draw(p.inner(areas[i][j]))
			p.drawExtras(pl, areas[i][j], cells[i][j])
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
// room for the axis labels is kept aside, since they are drawn by
// drawExtras (gonum places the glyph box of a centred axis label at the
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
)

// cells splits dc into the grid's cells: rows weighted by Heights, each
// row split equally among its own panels. A row with a panel title keeps
// room for it in every cell (the titles are drawn by drawExtras).
func (f *Figure) cells(dc draw.Canvas) [][]draw.Canvas {
	rows := len(f.Grid)
	weights, total := shares(f.Heights, rows)
	height := float64(dc.Max.Y-dc.Min.Y) - rowGap*float64(rows-1)
	out := make([][]draw.Canvas, rows)
	top := dc.Max.Y
	for i, r := range f.Grid {
		h := vg.Length(height * weights[i] / total)
		cols := len(r)
		widths, wsum := shares(f.Widths, cols)
		free := float64(dc.Max.X - dc.Min.X - colGap*vg.Length(cols-1))
		titled := false
		for _, p := range r {
			titled = titled || p != nil && p.Title != ""
		}
		out[i] = make([]draw.Canvas, cols)
		x0 := dc.Min.X
		for j := range out[i] {
			width := vg.Length(free * widths[j] / wsum)
			c := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x0, Y: top - h}, Max: vg.Point{X: x0 + width, Y: top},
			}}
			x0 += width + colGap
			if titled {
				c = draw.Crop(c, 0, 0, 0, -(labelSize * 1.3))
			}
			out[i][j] = c
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
func alignData(grid [][]*Panel, plots [][]*plot.Plot, cells [][]draw.Canvas) [][]draw.Canvas {
	room := map[gridColumn]vg.Length{}
	for _, r := range grid {
		for j, p := range r {
			if p == nil {
				continue
			}
			k := gridColumn{len(r), j}
			w := p.lineLabelWidth()
			if p.Legend == Outside {
				w += legendWidth(p) + 6
			}
			room[k] = max(room[k], w)
		}
	}
	left, right := map[gridColumn]vg.Length{}, map[gridColumn]vg.Length{}
	bottom, top := make([]vg.Length, len(plots)), make([]vg.Length, len(plots))
	canvas := func(i, j int) (draw.Canvas, draw.Canvas) {
		c := draw.Crop(cells[i][j], 0, -room[gridColumn{len(plots[i]), j}], 0, 0)
		return c, plots[i][j].DataCanvas(grid[i][j].inner(c))
	}
	for i := range plots {
		for j, p := range plots[i] {
			if p == nil {
				continue
			}
			c, d := canvas(i, j)
			k := gridColumn{len(plots[i]), j}
			left[k] = max(left[k], d.Min.X-c.Min.X)
			right[k] = max(right[k], c.Max.X-d.Max.X)
			bottom[i] = max(bottom[i], d.Min.Y-c.Min.Y)
			top[i] = max(top[i], c.Max.Y-d.Max.Y)
		}
	}
	out := make([][]draw.Canvas, len(plots))
	for i := range plots {
		out[i] = make([]draw.Canvas, len(plots[i]))
		for j, p := range plots[i] {
			if p == nil {
				continue
			}
			c, d := canvas(i, j)
			k := gridColumn{len(plots[i]), j}
			out[i][j] = draw.Crop(c, left[k]-(d.Min.X-c.Min.X), -(right[k] - (c.Max.X - d.Max.X)),
				bottom[i]-(d.Min.Y-c.Min.Y), -(top[i] - (c.Max.Y - d.Max.Y)))
		}
	}
	return out
}
