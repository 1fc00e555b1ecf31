package figures

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// logAxis gives an axis a log scale with ticks at the powers of ten.
func logAxis(ax *plot.Axis) {
	ax.Scale, ax.Tick.Marker = plot.LogScale{}, logTicks{}
	ax.Tick.Label.Handler = powerText{text.Plain{Fonts: font.DefaultCache}}
}

// logTicks marks the powers of ten, labelled 10^n (drawn as 10ⁿ by powerText), and unlabelled minor
// ticks between them; over less than a decade it falls back to plain ticks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	a, b := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if b-a < 2 && math.Pow(10, a+1) > hi {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	step := math.Max(1, math.Ceil((b-a)/6)) // at most about 6 labels
	var ticks []plot.Tick
	for e := a; e <= b; e++ {
		base := math.Pow(10, e)
		if base >= lo && base <= hi {
			label := ""
			if math.Mod(e-a, step) == 0 {
				label = "10^" + strings.Replace(fmt.Sprint(int(e)), "-", "−", 1)
			}
			ticks = append(ticks, plot.Tick{Value: base, Label: label})
		}
		for k := 2.0; k <= 9 && step == 1; k++ {
			if v := k * base; v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

// unlabelled keeps a ticker's marks without their labels, for a panel
// above another on the same axis.
type unlabelled struct{ plot.Ticker }

func (u unlabelled) Ticks(lo, hi float64) []plot.Tick {
	marker := u.Ticker
	if marker == nil {
		marker = plot.DefaultTicks{}
	}
	ticks := marker.Ticks(lo, hi)
	for i := range ticks {
		ticks[i].Label = ""
	}
	return ticks
}

// powerText is a text handler that draws "B^E" as B with E superscript,
// smaller and raised, and other text as text.Plain does. Tick labels need
// it: gonum's LaTeX handler has no superscripts, and Liberation Sans lacks
// the superscript 0, 9 and minus.
type powerText struct{ text.Plain }

const (
	supScale = 0.72 // superscript size / text size
	supRaise = 0.42 // baseline shift / text size
)

func (h powerText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	base, exp, ok := strings.Cut(txt, "^")
	if !ok {
		return h.Plain.Box(txt, fnt)
	}
	big := h.Fonts.Lookup(fnt, fnt.Size)
	small := h.Fonts.Lookup(fnt, fnt.Size*supScale)
	e := big.Extents()
	width = big.Width(base) + small.Width(exp)
	height = max(e.Ascent, fnt.Size*supRaise+small.Extents().Ascent)
	return width, height, e.Descent
}

func (h powerText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	base, exp, ok := strings.Cut(txt, "^")
	if !ok || sty.Rotation != 0 {
		h.Plain.Draw(c, txt, sty, pt)
		return
	}
	big := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	small := h.Fonts.Lookup(sty.Font, sty.Font.Size*supScale)
	w, ht, depth := h.Box(txt, sty.Font)
	// The box of height ht + depth moved by the alignment, with the
	// baseline where text.Plain puts it for the same alignment.
	baseline := pt.Y + (ht+depth)*vg.Length(sty.YAlign) + sty.Font.Size - big.Extents().Ascent
	x := pt.X + w*vg.Length(sty.XAlign)
	c.SetColor(sty.Color)
	c.FillString(big, vg.Point{X: x, Y: baseline}, base)
	c.FillString(small, vg.Point{X: x + big.Width(base), Y: baseline + sty.Font.Size*supRaise}, exp)
}

// linearTicks marks about five round values (1, 2 or 5 times a power of
// ten apart), labelled in the shortest form, with 10^n notation from 10⁵,
// and four minor ticks between labels.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 5
	step := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{2, 5, 10} {
		if step*1.5 >= raw {
			break
		}
		step = math.Pow(10, math.Floor(math.Log10(raw))) * m
	}
	var ticks []plot.Tick
	minor := step / 5
	for k := math.Ceil(lo / minor); k*minor <= hi*(1+1e-12); k++ {
		v := k * minor
		if math.Abs(v) < minor*1e-9 {
			v = 0
		}
		t := plot.Tick{Value: v}
		if math.Mod(math.Abs(k), 5) == 0 {
			t.Label = tickLabel(v, step)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// tickLabel writes v, a multiple of step, with no more digits than step
// needs; values from 10⁵ on as m·10^n.
func tickLabel(v, step float64) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e5 || a < 1e-3 {
		e := math.Floor(math.Log10(math.Abs(v)))
		m := v / math.Pow(10, e)
		s := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", m), "0"), ".")
		if s == "1" {
			s = ""
		} else {
			s += "·"
		}
		return s + "10^" + strings.Replace(fmt.Sprint(int(e)), "-", "−", 1)
	}
	digits := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	return strings.Replace(fmt.Sprintf("%.*f", digits, v), "-", "−", 1)
}
