package figures

import (
	"fmt"
	"math"
	"strings"
	"unicode"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logAxis gives an axis a log scale with ticks at the powers of ten.
func logAxis(ax *plot.Axis) {
	ax.Scale, ax.Tick.Marker = plot.LogScale{}, logTicks{}
	ax.Tick.Label.Handler = powerText{text.Plain{Fonts: font.DefaultCache}}
}

// logTicks marks the powers of ten, labelled 10^n (drawn as 10ⁿ by
// powerText), every decade up to about six labels and every few decades
// beyond, or fewer where room (the axis's length, when set) is too short
// for them; unlabelled minor ticks mark 2…9 times the powers when every
// decade is labelled. Within a decade it marks round values as
// linearTicks does.
type logTicks struct {
	room     vg.Length
	vertical bool
}

func (lt logTicks) Ticks(lo, hi float64) []plot.Tick {
	a, b := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if b-a < 2 && math.Pow(10, a+1) > hi {
		return linearTicks(lt).Ticks(lo, hi) // within a decade: round values
	}
	pos := func(v float64) float64 { return (math.Log10(v) - math.Log10(lo)) / (math.Log10(hi) - math.Log10(lo)) }
	for step := math.Max(1, math.Ceil((b-a)/6)); ; step++ {
		ticks := logAt(lo, hi, a, b, step)
		if lt.room <= 0 || labelsFit(ticks, pos, lt.room, lt.vertical) || step > b-a {
			return ticks
		}
	}
}

// logAt is the ticks of [lo, hi] at the powers 10^a … 10^b, labelled
// every step decades.
func logAt(lo, hi, a, b, step float64) []plot.Tick {
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

// powerText is a text handler that draws "B^E R" as B with E (letters,
// digits and minus signs) superscript, smaller and raised, then R, two subscript digits in a row kerned (drawKerned),
// and other text as text.Plain does. Tick labels need
// it: gonum's LaTeX handler has no superscripts, and Liberation Sans lacks
// the superscript 0, 9 and minus.
type powerText struct{ text.Plain }

const (
	supScale = 0.72 // superscript size / text size
	supRaise = 0.42 // baseline shift / text size
)

// cutPower splits txt at its first "^" into the base, the exponent (the
// letters, digits and minus signs that follow) and the rest.
func cutPower(txt string) (base, exp, rest string, ok bool) {
	base, exp, ok = strings.Cut(txt, "^")
	if end := strings.IndexFunc(exp, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '−' && r != '-' }); end >= 0 {
		exp, rest = exp[:end], exp[end:]
	}
	return base, exp, rest, ok
}

func (h powerText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	base, exp, rest, ok := cutPower(txt)
	if !ok {
		width, height, depth = h.Plain.Box(txt, fnt)
		if hasSubPair(txt) {
			width = kernedWidth(h.Fonts.Lookup(fnt, fnt.Size), txt)
		}
		return width, height, depth
	}
	big := h.Fonts.Lookup(fnt, fnt.Size)
	small := h.Fonts.Lookup(fnt, fnt.Size*supScale)
	e := big.Extents()
	width = big.Width(base) + small.Width(exp) + big.Width(rest)
	height = max(e.Ascent, fnt.Size*supRaise+small.Extents().Ascent)
	return width, height, e.Descent
}

func (h powerText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	base, exp, rest, ok := cutPower(txt)
	if !ok && hasSubPair(txt) {
		drawKerned(h.Plain, c, txt, sty, pt)
		return
	}
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
	if rest != "" {
		c.FillString(big, vg.Point{X: x + big.Width(base) + small.Width(exp), Y: baseline}, rest)
	}
}

// linearTicks marks about five round values (1, 2 or 5 times a power of
// ten apart), labelled in the shortest form, with 10^n notation from 10⁵,
// and four minor ticks between labels. With room (the axis's length) set,
// the labels are spaced further apart where they would otherwise touch.
type linearTicks struct {
	room     vg.Length
	vertical bool
}

func (lt linearTicks) Ticks(lo, hi float64) []plot.Tick {
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
	ticks := linearAt(lo, hi, step)
	pos := func(v float64) float64 { return (v - lo) / (hi - lo) }
	for lt.room > 0 && !labelsFit(ticks, pos, lt.room, lt.vertical) {
		// The next round step: 1 → 2 → 5 → 10.
		mant := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
		step *= map[bool]float64{true: 2.5, false: 2}[math.Abs(mant-2) < 1e-6]
		ticks = linearAt(lo, hi, step)
	}
	return ticks
}

// linearAt is the ticks of [lo, hi]: labels at the multiples of step and
// four minor ticks between.
func linearAt(lo, hi, step float64) []plot.Tick {
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

// labelsFit reports whether the labels of ticks, at the fractions pos of
// an axis of length room, keep a gap from each other.
func labelsFit(ticks []plot.Tick, pos func(float64) float64, room vg.Length, vertical bool) bool {
	sty := textStyle(tickSize)
	var prev vg.Length
	var prevHalf vg.Length = -1
	for _, t := range ticks {
		if t.Label == "" {
			continue
		}
		at := room * vg.Length(pos(t.Value))
		half := sty.Width(t.Label) / 2
		if vertical {
			half = sty.FontExtents().Height / 2
		}
		if prevHalf >= 0 && at-prev < prevHalf+half+tickGap {
			return false
		}
		prev, prevHalf = at, half
	}
	return true
}

// tickGap is the least space between two tick labels.
const tickGap = 4

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

// fitTicks tells the panel's linear tickers the length of their axes, so
// that they space their labels to fit.
func (pp *PanelLayout) fitTicks() {
	pp.pl.X.Tick.Marker = withRoom(pp.pl.X.Tick.Marker, pp.data.Max.X-pp.data.Min.X, false)
	pp.pl.Y.Tick.Marker = withRoom(pp.pl.Y.Tick.Marker, pp.data.Max.Y-pp.data.Min.Y, true)
}

func withRoom(t plot.Ticker, room vg.Length, vertical bool) plot.Ticker {
	switch m := t.(type) {
	case linearTicks:
		return linearTicks{room: room, vertical: vertical}
	case logTicks:
		return logTicks{room: room, vertical: vertical}
	case unlabelled:
		return unlabelled{withRoom(m.Ticker, room, vertical)}
	}
	return t
}

// tickLabels are the boxes of the labelled ticks gonum draws: centred on
// their ticks below the x axis and left of the y axis.
func (pp *PanelLayout) tickLabels() []PlacedText {
	if pp.p.Heat != nil {
		return nil
	}
	var out []PlacedText
	tx, ty := pp.pl.Transforms(&pp.data)
	for _, t := range pp.pl.X.Tick.Marker.Ticks(pp.pl.X.Min, pp.pl.X.Max) {
		if x := tx(t.Value); t.Label != "" && pp.data.ContainsX(x) {
			sty := pp.pl.X.Tick.Label
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
			out = append(out, newText("x tick", t.Label, sty, vg.Point{X: x, Y: pp.data.Min.Y - pp.pl.X.Tick.Length}))
		}
	}
	for _, t := range pp.pl.Y.Tick.Marker.Ticks(pp.pl.Y.Min, pp.pl.Y.Max) {
		if y := ty(t.Value); t.Label != "" && pp.data.ContainsY(y) {
			sty := pp.pl.Y.Tick.Label
			sty.XAlign, sty.YAlign = draw.XRight, draw.YCenter
			out = append(out, newText("y tick", t.Label, sty, vg.Point{X: pp.data.Min.X - pp.pl.Y.Tick.Length - 1, Y: y}))
		}
	}
	return out
}
