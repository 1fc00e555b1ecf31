package figures

import (
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The texts of a panel: its title, axis labels, the labels of its
// horizontal reference lines and those of its points, each placed with
// its box before anything is drawn.

// PlacedText is a text at its place, with the box it covers.
type PlacedText struct {
	// Kind says what the text is: title, panel title, x label, y label,
	// line label or point label.
	Kind string
	Text string
	Box  vg.Rectangle
	// Anchor is what a line or point label names: the point where its
	// line meets the data area's right edge, or its marker; nil for other
	// texts.
	Anchor *vg.Point
	at     vg.Point
	sty    text.Style
}

func newText(kind, s string, sty text.Style, at vg.Point) PlacedText {
	r := sty.Rectangle(s)
	return PlacedText{Kind: kind, Text: s, at: at, sty: sty,
		Box: vg.Rectangle{Min: vg.Point{X: at.X + r.Min.X, Y: at.Y + r.Min.Y}, Max: vg.Point{X: at.X + r.Max.X, Y: at.Y + r.Max.Y}}}
}

func (t PlacedText) draw(c draw.Canvas) { c.FillText(t.sty, t.at, t.Text) }

// wrap breaks s into lines no wider than width: after its commas, and
// within a part still too wide at its spaces. A word wider than width
// stays whole on its line.
func wrap(sty text.Style, s string, width vg.Length) []string {
	var words []string
	for _, part := range strings.SplitAfter(s, ", ") {
		part = strings.TrimSuffix(part, " ")
		if sty.Width(part) <= width {
			words = append(words, part)
			continue
		}
		words = append(words, strings.Fields(part)...)
	}
	var lines []string
	for _, w := range words {
		if n := len(lines); n > 0 && sty.Width(lines[n-1]+" "+w) <= width {
			lines[n-1] += " " + w
			continue
		}
		lines = append(lines, w)
	}
	return lines
}

// placeTexts places the panel's title lines, axis labels, the labels of
// its horizontal reference lines and those of its points.
func (pp *PanelLayout) placeTexts() {
	p, data, area := pp.p, pp.data, pp.area
	pp.Texts = nil
	sty := textStyle(labelSize)
	sty.XAlign = draw.XCenter
	for k, line := range pp.titles {
		y := data.Max.Y + pp.above + labelSize*0.45 + titleLine*vg.Length(len(pp.titles)-1-k)
		pp.Texts = append(pp.Texts, newText("panel title", line, sty, vg.Point{X: data.Center().X, Y: y}))
	}
	if p.XLabel != "" {
		sty.YAlign = draw.YBottom
		pp.Texts = append(pp.Texts, newText("x label", p.XLabel, sty, vg.Point{X: data.Center().X, Y: area.Min.Y}))
	}
	if p.YLabel != "" {
		sty.YAlign, sty.Rotation = draw.YTop, math.Pi/2
		pp.Texts = append(pp.Texts, newText("y label", p.YLabel, sty, vg.Point{X: area.Min.X, Y: data.Center().Y}))
	}
	pp.placeLineLabels()
	pp.placePointLabels()
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

// placeLineLabels writes the labels of the horizontal reference lines to
// the right of the data area, level with their lines where they do not
// overlap and moved apart just enough where they would (spread).
func (pp *PanelLayout) placeLineLabels() {
	sty := lineLabelStyle()
	h := sty.FontExtents().Height
	_, ty := pp.pl.Transforms(&pp.data)
	var labels []RefLine
	var want []vg.Length
	for _, l := range pp.p.HLines {
		if y := ty(l.Value); l.Label != "" && pp.data.ContainsY(y) {
			labels, want = append(labels, l), append(want, y)
		}
	}
	// From the bottom of the data area, clear of the tick labels below it,
	// to half a label over its top.
	at := spread(want, h, pp.data.Min.Y, pp.data.Max.Y+h/2)
	for i, l := range labels {
		if !math.IsNaN(float64(at[i])) {
			t := newText("line label", l.Label, sty, vg.Point{X: pp.data.Max.X + 3, Y: at[i]})
			t.Anchor = &vg.Point{X: pp.data.Max.X, Y: want[i]}
			pp.Texts = append(pp.Texts, t)
		}
	}
}

// spread places labels of height h, centred as near as it can to the
// heights want, so that none overlaps another, within [lo, hi]. When all
// fit within maxShift of their heights, labels that would overlap are
// stacked in a group centred on the mean of their heights (the 1-D label
// placement of Tufte-style direct labelling). Otherwise each label kept
// sits at its own height (clamped to the range), and a label within h of
// one kept before it is left out (NaN): first the lowest and the highest,
// then from the top down, where levels are far apart (the first plateaus
// of a run) — a label far from its line would name the wrong one.
func spread(want []vg.Length, h, lo, hi vg.Length) []vg.Length {
	n := len(want)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return want[order[a]] < want[order[b]] })
	out := make([]vg.Length, n)
	if n == 0 {
		return out
	}
	if vg.Length(n)*h <= hi-lo {
		ys := make([]vg.Length, n)
		for k, i := range order {
			ys[k] = want[i]
		}
		ys = stack(ys, h, lo, hi)
		fits := true
		for k, i := range order {
			out[i] = ys[k]
			fits = fits && math.Abs(float64(ys[k]-want[i])) <= float64(maxShift*h)
		}
		if fits {
			return out
		}
	}
	for i := range out {
		out[i] = vg.Length(math.NaN())
	}
	clamp := func(y vg.Length) vg.Length { return max(min(y, hi-h/2), lo+h/2) }
	var kept []vg.Length
	try := func(i int) {
		y := clamp(want[i])
		for _, k := range kept {
			if math.Abs(float64(y-k)) < float64(h) {
				return
			}
		}
		kept, out[i] = append(kept, y), y
	}
	try(order[0])
	for k := n - 1; k > 0; k-- {
		try(order[k])
	}
	return out
}

// maxShift is how far, in label heights, spread may move a label from its
// line when it stacks them all.
const maxShift = 0.75

// stack moves the increasing centres ys apart to at least h, each group
// of touching labels centred on the mean of its wanted centres and kept
// within [lo, hi], merging groups until none overlap.
func stack(ys []vg.Length, h, lo, hi vg.Length) []vg.Length {
	type group struct {
		first, n int
		sum, at  vg.Length // the sum of the wanted centres; the lowest centre
	}
	var groups []group
	for i, y := range ys {
		groups = append(groups, group{first: i, n: 1, sum: y, at: y})
		for len(groups) > 0 {
			g := &groups[len(groups)-1]
			g.at = g.sum/vg.Length(g.n) - h*vg.Length(g.n-1)/2
			g.at = max(min(g.at, hi-h/2-h*vg.Length(g.n-1)), lo+h/2)
			if len(groups) < 2 {
				break
			}
			prev := &groups[len(groups)-2]
			if prev.at+h*vg.Length(prev.n) <= g.at {
				break
			}
			prev.n, prev.sum = prev.n+g.n, prev.sum+g.sum
			groups = groups[:len(groups)-1]
		}
	}
	out := make([]vg.Length, len(ys))
	for _, g := range groups {
		for k := 0; k < g.n; k++ {
			out[g.first+k] = g.at + h*vg.Length(k)
		}
	}
	return out
}

// placePointLabels writes each point's text beside it, at the first of
// eight places around the marker where it stays in the data area, touches
// no ink, no other text and no legend, and is nearer its own marker than
// any other (by a factor nearOwn); a text with no such place is left out,
// as one that could be read as another marker's would mislead.
func (pp *PanelLayout) placePointLabels() {
	tx, ty := pp.pl.Transforms(&pp.data)
	var marks []vg.Point
	for _, pts := range pp.p.Points {
		for i := range pts.X {
			if usable(pp.p, pts.X[i], pts.Y[i]) {
				marks = append(marks, vg.Point{X: tx(pts.X[i]), Y: ty(pts.Y[i])})
			}
		}
	}
	for _, pts := range pp.p.Points {
		sty := textStyle(noteSize)
		sty.Color = pts.Color
		d := scatter(pts).GlyphStyle.Radius + 2
		for i, s := range pts.Text {
			if s == "" || i >= len(pts.X) || !usable(pp.p, pts.X[i], pts.Y[i]) {
				continue
			}
			c := vg.Point{X: tx(pts.X[i]), Y: ty(pts.Y[i])}
			for _, off := range [][2]vg.Length{{1, 0}, {-1, 0}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}, {0, 1}, {0, -1}} {
				sty.XAlign = draw.XAlignment(-(1 - off[0]) / 2)
				sty.YAlign = draw.YAlignment(-(1 - off[1]) / 2)
				t := newText("point label", s, sty, vg.Point{X: c.X + off[0]*d, Y: c.Y + off[1]*d})
				t.Anchor = &vg.Point{X: c.X, Y: c.Y}
				if pp.free(t.Box) && ownNearest(t.Box, c, marks) {
					pp.Texts = append(pp.Texts, t)
					break
				}
			}
		}
	}
}

// nearOwn is how much nearer a point label must be to its own marker than
// to any other.
const nearOwn = 1.5

// ownNearest reports whether the box r is nearer own than any other of
// marks by the factor nearOwn.
func ownNearest(r vg.Rectangle, own vg.Point, marks []vg.Point) bool {
	d := boxDistance(r, own)
	for _, m := range marks {
		if m != own && boxDistance(r, m) < nearOwn*d {
			return false
		}
	}
	return true
}

// boxDistance is the distance from the point p to the rectangle r (0
// inside it).
func boxDistance(r vg.Rectangle, p vg.Point) vg.Length {
	dx := max(r.Min.X-p.X, 0, p.X-r.Max.X)
	dy := max(r.Min.Y-p.Y, 0, p.Y-r.Max.Y)
	return vg.Length(math.Hypot(float64(dx), float64(dy)))
}

// free reports whether the box r lies in the data area clear of the ink,
// the texts placed so far and the legend.
func (pp *PanelLayout) free(r vg.Rectangle) bool {
	d := pp.data.Rectangle
	if r.Min.X < d.Min.X || r.Max.X > d.Max.X || r.Min.Y < d.Min.Y || r.Max.Y > d.Max.Y || pp.Ink.Touches(r, inkPad) {
		return false
	}
	if pp.Legend != nil && overlap(r, pp.Legend.Box) {
		return false
	}
	for _, t := range pp.Texts {
		if overlap(r, t.Box) {
			return false
		}
	}
	return true
}
