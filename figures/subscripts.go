package figures

import (
	"math"
	"strings"
	"sync"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// Subscript digits (sub: e₁₁, t₁₀) in Liberation Sans are tabular: each
// has the advance of a full-size digit (0.556 em) and ink half as wide,
// so two of them stand 0.27 em apart, and "t₁₀" reads as "t₁ ₀". Between
// two subscript digits the labels kern the gap to 3/5 of the gap between
// the full-size digits (0.09 em for 1 0), the subscripts' scale.

// isSubDigit reports whether r is one of ₀…₉.
func isSubDigit(r rune) bool { return r >= '₀' && r <= '₉' }

// subGapScale is the gap between two subscript digits as a fraction of
// that between the same full-size digits.
const subGapScale = 0.6

var subKerns sync.Map // [2]rune{a, b} → float64, the kerning in ems

// subKern returns the kerning between the subscript digits a and b of the
// face: the gap their ink should have (subGapScale times that of the
// full-size digits) less the gap it has.
func subKern(face font.Face, a, b rune) vg.Length {
	key := [2]rune{a, b}
	em, ok := subKerns.Load(key)
	if !ok {
		var buf sfnt.Buffer
		ppem := fixed.Int26_6(face.Face.UnitsPerEm())
		ink := func(r rune) (lo, hi, adv float64) {
			idx, err := face.Face.GlyphIndex(&buf, r)
			if err != nil || idx == 0 {
				return 0, 0, 0
			}
			bounds, advance, err := face.Face.GlyphBounds(&buf, idx, ppem, xfont.HintingNone)
			if err != nil {
				return 0, 0, 0
			}
			return float64(bounds.Min.X), float64(bounds.Max.X), float64(advance)
		}
		gap := func(a, b rune) float64 {
			_, hi, adv := ink(a)
			lo, _, _ := ink(b)
			return adv - hi + lo
		}
		full := gap(a-'₀'+'0', b-'₀'+'0')
		em = (subGapScale*full - gap(a, b)) / float64(ppem)
		subKerns.Store(key, em)
	}
	return vg.Length(em.(float64)) * face.Font.Size
}

// kernedRuns splits a line at the kerned pairs: the runs of text, and the
// kerning after each run but the last.
func kernedRuns(face font.Face, line string) (runs []string, kerns []vg.Length) {
	rs := []rune(line)
	start := 0
	for i := 1; i < len(rs); i++ {
		if isSubDigit(rs[i-1]) && isSubDigit(rs[i]) {
			runs, kerns = append(runs, string(rs[start:i])), append(kerns, subKern(face, rs[i-1], rs[i]))
			start = i
		}
	}
	return append(runs, string(rs[start:])), kerns
}

// kernedWidth is the width of a line drawn with kernedRuns.
func kernedWidth(face font.Face, line string) vg.Length {
	runs, kerns := kernedRuns(face, line)
	var w vg.Length
	for i, r := range runs {
		w += face.Width(r)
		if i < len(kerns) {
			w += kerns[i]
		}
	}
	return w
}

// hasSubPair reports whether s has two subscript digits in a row.
func hasSubPair(s string) bool {
	prev := false
	for _, r := range s {
		sub := isSubDigit(r)
		if sub && prev {
			return true
		}
		prev = sub
	}
	return false
}

// drawKerned draws txt as text.Plain does, each line in its kerned runs.
func drawKerned(h text.Plain, c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	face := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		defer c.Pop()
		c.Rotate(sty.Rotation)
		// The point in the rotated frame.
		sin, cos := math.Sincos(sty.Rotation)
		pt = vg.Point{X: pt.X*vg.Length(cos) + pt.Y*vg.Length(sin), Y: pt.Y*vg.Length(cos) - pt.X*vg.Length(sin)}
	}
	lines := h.Lines(txt)
	pt.Y += sty.Height(txt)*vg.Length(sty.YAlign) - face.Extents().Ascent
	for i, line := range lines {
		x := pt.X + vg.Length(sty.XAlign)*kernedWidth(face, line)
		y := pt.Y + vg.Length(len(lines)-i)*sty.Font.Size
		runs, kerns := kernedRuns(face, line)
		for k, r := range runs {
			c.FillString(face, vg.Point{X: x, Y: y}, r)
			x += face.Width(r)
			if k < len(kerns) {
				x += kerns[k]
			}
		}
	}
}
