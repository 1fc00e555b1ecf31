package figures

import (
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Layout lays f out at the size s as Write does, and returns where each
// text, legend and panel went: what the layout tests check (no text over
// data, legends inside the frame), and what a program that annotates a
// figure needs to find free room.
func (f *Figure) Layout(s Size) *Layout {
	s = f.size(s)
	dc := draw.New(vgimg.New(s.Width, s.Height))
	return f.layout(dc)
}

// Data is the panel's data area.
func (pp *PanelLayout) Data() vg.Rectangle { return pp.data.Rectangle }

// Panel is the panel laid out.
func (pp *PanelLayout) Panel() *Panel { return pp.p }

// LegendBox is the legend's box, margin included, and whether there is a
// legend.
func (pp *PanelLayout) LegendBox() (vg.Rectangle, bool) {
	if pp.Legend == nil {
		return vg.Rectangle{}, false
	}
	return pp.Legend.Box, true
}

// LegendBox is the box of the legend under the grid, and whether there is
// one.
func (lay *Layout) LegendBox() (vg.Rectangle, bool) {
	if lay.Legend == nil {
		return vg.Rectangle{}, false
	}
	return lay.Legend.Box, true
}

// Style is the text's style.
func (t PlacedText) Style() text.Style { return t.sty }
