package figures

import (
	"image/color"
	"math"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/vg"
)

// The look of every figure: sizes for a figure printed at its own size in a
// two-column paper (a column is 3.25 in), sans-serif text no smaller than
// 7 pt, and colours that stay distinct under the common colour-vision
// deficiencies.

// Text sizes.
const (
	titleSize  = vg.Length(9)
	labelSize  = vg.Length(8.5)
	tickSize   = vg.Length(7.5)
	legendSize = vg.Length(7.5)
	noteSize   = vg.Length(7)
)

// Line widths and marker size.
const (
	curveWidth = vg.Length(1.2)
	thinWidth  = vg.Length(0.7)
	refWidth   = vg.Length(0.6)
	markRadius = vg.Length(2.2)
)

// dashes are the line styles of the values of a field (Curve.Dash):
// solid, dashed, dash-dotted, long-dashed and densely dotted, as
// matplotlib's named line styles.
var dashes = [][]vg.Length{nil, {4, 2.5}, {4, 1.5, 1, 1.5}, {7, 2}, {1.2, 1.2}}

// maxLegend is the most entries a legend lists (Panel.thinLegend).
const maxLegend = 10

// Default figure sizes.
var (
	columnWidth = 3.5 * vg.Inch
	pageWidth   = 7 * vg.Inch
)

// textFont is Liberation Sans (metrically Helvetica), which gonum/plot
// carries and which has the Greek and sub- and superscript digits the
// labels use.
func textFont(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// okabeIto is the Okabe–Ito palette (Okabe & Ito 2008, "Color Universal
// Design"), without its yellow, which is too light on white, and with
// black last.
var okabeIto = []color.Color{
	rgb(0x00, 0x72, 0xB2), // blue
	rgb(0xD5, 0x5E, 0x00), // vermillion
	rgb(0x00, 0x9E, 0x73), // bluish green
	rgb(0xCC, 0x79, 0xA7), // reddish purple
	rgb(0xE6, 0x9F, 0x00), // orange
	rgb(0x56, 0xB4, 0xE9), // sky blue
	rgb(0x00, 0x00, 0x00), // black
}

// viridis anchors (matplotlib's viridis at 0, 1/7, …, 1; van der Walt &
// Smith 2015), a sequential map that stays ordered in grey scale and under
// colour-vision deficiencies; interpolated linearly between them.
var viridis = []color.RGBA{
	rgb(0x44, 0x01, 0x54), rgb(0x46, 0x33, 0x7E), rgb(0x36, 0x5C, 0x8D), rgb(0x27, 0x7F, 0x8E),
	rgb(0x1F, 0xA1, 0x87), rgb(0x4A, 0xC1, 0x6D), rgb(0x9F, 0xDA, 0x3A), rgb(0xFD, 0xE7, 0x25),
}

var (
	white       = rgb(0xFF, 0xFF, 0xFF)
	black       = color.RGBA{A: 0xFF}
	refGray     = rgb(0x80, 0x80, 0x80)
	captionGray = rgb(0x40, 0x40, 0x40)
	lightGray   = rgb(0xC8, 0xC8, 0xC8)
)

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{R: r, G: g, B: b, A: 0xFF} }

// categorical returns the colour of item i of n unordered categories:
// Okabe–Ito up to seven, viridis beyond.
func categorical(i, n int) color.Color {
	if n <= len(okabeIto) {
		return okabeIto[i%len(okabeIto)]
	}
	return sequential(float64(i) / float64(n-1))
}

// sequential returns the viridis colour at x in [0, 1], for ordered values
// (drop m, parameter values). The top eighth is left out: the light yellow
// end is hard to see on white.
func sequential(x float64) color.Color {
	x = math.Max(0, math.Min(1, x)) * 0.875
	f := x * float64(len(viridis)-1)
	i := int(f)
	if i >= len(viridis)-1 {
		return viridis[len(viridis)-1]
	}
	a, b, w := viridis[i], viridis[i+1], f-float64(i)
	mix := func(p, q uint8) uint8 { return uint8(math.Round(float64(p)*(1-w) + float64(q)*w)) }
	return color.RGBA{R: mix(a.R, b.R), G: mix(a.G, b.G), B: mix(a.B, b.B), A: 0xFF}
}

// ordered returns the colour of item i of n ordered items.
func ordered(i, n int) color.Color {
	if n <= 1 {
		return sequential(0)
	}
	return sequential(float64(i) / float64(n-1))
}

// diverging is Moreland's smooth cool–warm map (Moreland 2009, "Diverging
// color maps for scientific visualization"), blue through light grey to
// red over [−max, max], for signed matrices.
func diverging(max float64) palette.ColorMap {
	m := moreland.SmoothBlueRed()
	m.SetMin(-max)
	m.SetMax(max)
	return m
}

// tint is c at a quarter of its opacity: the shade of a band, through which
// the bands and grid lines under it stay visible.
func tint(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x40}
}

// The smallest sizes at which a figure's texts fit beside its data: 3 in
// wide for a figure of one column, 6 in for one of a page, and 0.6 in
// plus 1.1 in per row of panels high.
const (
	minWidth     = 3 * vg.Inch
	minPageWidth = 6 * vg.Inch
)

func minHeight(rows int) vg.Length { return vg.Length(0.6+1.1*float64(rows)) * vg.Inch }
