package figures

import (
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Layout, PanelLayout and PlacedText are the layout's types, for the
// tests of package figures_test.
type (
	Layout      = layout
	PanelLayout = panelLayout
	PlacedText  = placedText
)

// LayoutOf lays f out at the size s as Write does.
func LayoutOf(f *Figure, s Size) *Layout {
	s = f.size(s)
	dc := draw.New(vgimg.New(s.Width, s.Height))
	return f.layout(dc)
}

// Data is the panel's data area.
func (pp *panelLayout) Data() vg.Rectangle { return pp.data.Rectangle }

// Panel is the panel laid out.
func (pp *panelLayout) Panel() *Panel { return pp.p }

// LegendBox is the legend's box, margin included, and whether there is a
// legend.
func (pp *panelLayout) LegendBox() (vg.Rectangle, bool) {
	if pp.Legend == nil {
		return vg.Rectangle{}, false
	}
	return pp.Legend.Box, true
}

// LegendBox is the box of the legend under the grid, and whether there is
// one.
func (lay *layout) LegendBox() (vg.Rectangle, bool) {
	if lay.Legend == nil {
		return vg.Rectangle{}, false
	}
	return lay.Legend.Box, true
}

// Style is the text's style.
func (t placedText) Style() text.Style { return t.sty }
