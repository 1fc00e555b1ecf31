package cli_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linattn/linattn/figures"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// layoutCase is a figure of a kind linattn plot draws, from an output the
// test writes.
type layoutCase struct {
	name string
	file string // under the test's directory
	opt  figures.Options
	// sizes beyond the default and the figure's smallest (WxH inches).
	sizes [][2]float64
}

// writeLayoutOutputs writes an output of every kind into dir: the
// README's default run, a merged run with its closed form, the docs'
// training runs (small), reduced, landscape (both models) and a sweep
// over R, winit and seeds.
func writeLayoutOutputs(t *testing.T, dir string) {
	p := func(name string) string { return filepath.Join(dir, name) }
	spec := p("sweep.json")
	if err := os.WriteFile(spec, []byte(`{"seed": [1, 2, 3], "winit": [0.01, 0.001], "R": [1, 2], "samples": 400}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "-o", p("run.npz")},
		{"run", "-spectrum", "power:1", "-D", "16", "-o", p("run16.npz")},
		{"run", "-layer", "full", "-icl", "0.5", "-tasks", "4", "-o", p("full.npz")},
		{"run", "-model", "merged", "-white", "1", "-D", "4", "-H", "8", "-balanced", "-o", p("merged.npz")},
		{"train", "-P", "2000", "-steps", "4000", "-samples", "201", "-o", p("train.npz")},
		{"train", "-model", "merged", "-H", "8", "-white", "0.25", "-D", "4", "-icl", "0", "-P", "2000", "-lr", "0.5", "-steps", "4000", "-samples", "201", "-o", p("train_merged.npz")},
		{"reduced", "-o", p("reduced.npz")},
		{"reduced", "-model", "merged", "-white", "1", "-D", "4", "-N", "31", "-H", "8", "-o", p("reduced_merged.npz")},
		{"landscape", "-o", p("landscape.npz")},
		{"landscape", "-model", "merged", "-o", p("landscape_merged.npz")},
		{"sweep", "-spec", spec, "-o", p("sweep")},
	} {
		linattn(t, 0, args...)
	}
}

var layoutCases = []layoutCase{
	{name: "run", file: "run.npz", sizes: [][2]float64{{7, 4}}},
	{name: "run lin", file: "run.npz", opt: figures.Options{XScale: "lin"}, sizes: [][2]float64{{7, 4}}},
	{name: "run merged", file: "merged.npz"},
	{name: "run D = 16", file: "run16.npz", sizes: [][2]float64{{9, 11}}},
	{name: "run full layer", file: "full.npz"},
	{name: "pcr", file: "run.npz", opt: figures.Options{View: "pcr"}},
	{name: "train", file: "train.npz"},
	{name: "train merged", file: "train_merged.npz"},
	{name: "reduced", file: "reduced.npz"},
	{name: "reduced merged", file: "reduced_merged.npz", opt: figures.Options{XScale: "lin"}},
	{name: "landscape", file: "landscape.npz"},
	{name: "landscape merged", file: "landscape_merged.npz"},
	{name: "sweep", file: "sweep/index.npz"},
	{name: "sweep lin", file: "sweep/index.npz", opt: figures.Options{XScale: "lin"}},
	{name: "sweep panels", file: "sweep/index.npz", opt: figures.Options{By: "R", Panels: true}},
	{name: "sweep median", file: "sweep/index.npz", opt: figures.Options{View: "median"}},
	{name: "sweep median panels", file: "sweep/index.npz", opt: figures.Options{By: "R", Panels: true, View: "median"}},
}

// TestLayoutCoversNoData draws every kind of figure at its default size,
// at its smallest (Figure.MinSize, which the error of a smaller -size
// states)
// and at the sizes the case adds, and checks from the layout itself, not
// by eye: every text (title, caption, panel titles, axis labels, tick
// labels, the labels of reference lines and points) and every legend lies
// on the canvas, none overlaps another, and none touches a drawn point of
// the data (curves, markers, error bars, bands, heat maps); each label
// names its own line or point (labelProblems); two subscript digits stand
// as close as full-size digits (subscriptProblems).
func TestLayoutCoversNoData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeLayoutOutputs(t, dir)
	for _, lc := range layoutCases {
		fig := load(t, filepath.Join(dir, lc.file), lc.opt)
		sizes := []figures.Size{{}, fig.MinSize()}
		for _, wh := range lc.sizes {
			sizes = append(sizes, figures.Size{Width: vg.Length(wh[0]) * vg.Inch, Height: vg.Length(wh[1]) * vg.Inch})
		}
		for _, s := range sizes {
			lay := fig.Layout(s)
			name := fmt.Sprintf("%s at %.3gx%.3g in", lc.name, (lay.Canvas.Max.X-lay.Canvas.Min.X)/vg.Inch, (lay.Canvas.Max.Y-lay.Canvas.Min.Y)/vg.Inch)
			problems := append(layoutProblems(lay), labelProblems(lay)...)
			for _, problem := range append(problems, subscriptProblems(lay)...) {
				t.Errorf("%s: %s", name, problem)
			}
		}
	}
}

// box is a text or legend of a layout.
type box struct {
	what string
	r    vg.Rectangle
}

// layoutBoxes lists the texts and legends of a layout.
func layoutBoxes(lay *figures.Layout) []box {
	var out []box
	add := func(ts []figures.PlacedText, panel int) {
		for _, tx := range ts {
			out = append(out, box{fmt.Sprintf("%s %q (panel %d)", tx.Kind, tx.Text, panel), tx.Box})
		}
	}
	add(lay.Title, -1)
	add(lay.Caption, -1)
	if r, ok := lay.LegendBox(); ok {
		out = append(out, box{"the figure's legend", r})
	}
	for i, pp := range lay.Panels {
		add(pp.Texts, i)
		add(pp.Ticks, i)
		if r, ok := pp.LegendBox(); ok {
			out = append(out, box{fmt.Sprintf("legend (panel %d)", i), r})
		}
	}
	return out
}

// layoutProblems lists what is wrong with a layout: a box off the canvas,
// two boxes that overlap by more than a quarter point each way, a box
// within half a curve's width of the data.
func layoutProblems(lay *figures.Layout) []string {
	var out []string
	boxes := layoutBoxes(lay)
	for _, b := range boxes {
		if !within(b.r, lay.Canvas, 0.25) {
			out = append(out, fmt.Sprintf("%s at %v is off the canvas %v", b.what, b.r, lay.Canvas))
		}
	}
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			a, b := boxes[i].r, boxes[j].r
			if min(a.Max.X, b.Max.X)-max(a.Min.X, b.Min.X) > 0.25 && min(a.Max.Y, b.Max.Y)-max(a.Min.Y, b.Min.Y) > 0.25 {
				out = append(out, fmt.Sprintf("%s overlaps %s", boxes[i].what, boxes[j].what))
			}
		}
	}
	for i, pp := range lay.Panels {
		for _, b := range boxes {
			if where, hit := inkIn(pp.Ink, b.r, 0.6); hit {
				out = append(out, fmt.Sprintf("%s covers data of panel %d at %v", b.what, i, where))
			}
		}
	}
	return out
}

func within(r, c vg.Rectangle, tol vg.Length) bool {
	return r.Min.X >= c.Min.X-tol && r.Min.Y >= c.Min.Y-tol && r.Max.X <= c.Max.X+tol && r.Max.Y <= c.Max.Y+tol
}

// inkIn finds a point of the ink within pad of r: along every line at
// steps of 0.2 pt, the markers' boxes, and the outlines and insides of
// areas (an independent check of Ink.Touches, by sampling).
func inkIn(k figures.Ink, r vg.Rectangle, pad vg.Length) (vg.Point, bool) {
	g := vg.Rectangle{Min: vg.Point{X: r.Min.X - pad, Y: r.Min.Y - pad}, Max: vg.Point{X: r.Max.X + pad, Y: r.Max.Y + pad}}
	in := func(p vg.Point) bool { return p.X >= g.Min.X && p.X <= g.Max.X && p.Y >= g.Min.Y && p.Y <= g.Max.Y }
	sample := func(a, b vg.Point) (vg.Point, bool) {
		n := int(math.Hypot(float64(b.X-a.X), float64(b.Y-a.Y))/0.2) + 1
		for s := 0; s <= n; s++ {
			f := vg.Length(s) / vg.Length(n)
			if p := (vg.Point{X: a.X + (b.X-a.X)*f, Y: a.Y + (b.Y-a.Y)*f}); in(p) {
				return p, true
			}
		}
		return vg.Point{}, false
	}
	for _, line := range k.Lines {
		for i := 1; i < len(line); i++ {
			if p, hit := sample(line[i-1], line[i]); hit {
				return p, true
			}
		}
	}
	for _, m := range k.Marks {
		if m.Min.X < g.Max.X && g.Min.X < m.Max.X && m.Min.Y < g.Max.Y && g.Min.Y < m.Max.Y {
			return m.Min, true
		}
	}
	for _, poly := range k.Areas {
		for i := range poly {
			if p, hit := sample(poly[i], poly[(i+1)%len(poly)]); hit {
				return p, true
			}
		}
		if c := (vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2}); insidePolygon(c, poly) {
			return c, true
		}
	}
	return vg.Point{}, false
}

// insidePolygon is the even–odd test: a ray to the right crosses the
// outline an odd number of times.
func insidePolygon(c vg.Point, poly []vg.Point) bool {
	in := false
	for i, j := 0, len(poly)-1; i < len(poly); j, i = i, i+1 {
		a, b := poly[i], poly[j]
		if (a.Y > c.Y) != (b.Y > c.Y) && c.X < (b.X-a.X)*(c.Y-a.Y)/(b.Y-a.Y)+a.X {
			in = !in
		}
	}
	return in
}

// TestRunFigureShowsFinalPlateau: the default run's figure, at its default
// size and at 7x4 in, on log and linear time, shows the run through its
// final plateau: the time axis goes on past the end of the run by a tenth
// of its length, every curve of a converged run is held there (dotted) at
// its final value, the last drop's mark stands clear of the right frame,
// and the figure says so in a note.
func TestRunFigureShowsFinalPlateau(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run.npz")
	linattn(t, 0, "run", "-o", out)
	tt := arrays(t, out)["t"].Float
	end := tt[len(tt)-1]
	for _, opt := range []figures.Options{{}, {XScale: "lin"}} {
		fig := load(t, out, opt)
		if !strings.Contains(strings.Join(fig.Notes, "\n"), "the final state is drawn on, dotted") {
			t.Errorf("%+v: notes %q say nothing of the held final state", opt, fig.Notes)
		}
		for _, row := range fig.Grid {
			p := row[0]
			x := p.XRange
			share := (x.Max - end) / (x.Max - x.Min)
			if p.XLog {
				share = math.Log(x.Max/end) / math.Log(x.Max/x.Min)
			}
			if math.Abs(share-0.1) > 1e-9 {
				t.Errorf("%+v: the held part is %.3g of the time axis, want 0.1", opt, share)
			}
			held := 0
			for _, c := range p.Curves {
				if c.Dotted && c.X[0] == end && c.X[1] == x.Max && c.Y[0] == c.Y[1] {
					held++
				}
			}
			if solid := len(p.Curves) - held; held != solid {
				t.Errorf("%+v: %d of %d curves held to the end of the axis", opt, held, solid)
			}
		}
		for _, s := range []figures.Size{{}, {Width: 7 * vg.Inch, Height: 4 * vg.Inch}} {
			lay := fig.Layout(s)
			loss := lay.Panels[0]
			last := loss.Ink.Marks[len(loss.Ink.Marks)-1]
			if gap := loss.Data().Max.X - last.Max.X; gap < 10 {
				t.Errorf("%+v at %v: the last drop's mark is %.3g pt from the right frame, want ≥ 10", opt, s, gap)
			}
		}
	}
}

// TestLayoutProblemsFindsThem: the check of TestLayoutCoversNoData finds
// a text on a curve, a text on a marker, a text in a band, two texts
// that overlap and a text off the canvas, and passes a clear layout.
func TestLayoutProblemsFindsThem(t *testing.T) {
	t.Parallel()
	rect := func(x0, y0, x1, y1 vg.Length) vg.Rectangle {
		return vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}
	}
	text := func(r vg.Rectangle) figures.PlacedText { return figures.PlacedText{Kind: "label", Text: "x", Box: r} }
	ink := figures.Ink{
		Lines: [][]vg.Point{{{X: 0, Y: 50}, {X: 100, Y: 50}}},
		Marks: []vg.Rectangle{rect(60, 80, 64, 84)},
		Areas: [][]vg.Point{{{X: 10, Y: 10}, {X: 40, Y: 10}, {X: 40, Y: 30}, {X: 10, Y: 30}}},
	}
	for _, tc := range []struct {
		texts []figures.PlacedText
		want  string
	}{
		{[]figures.PlacedText{text(rect(5, 60, 30, 70))}, ""},
		{[]figures.PlacedText{text(rect(40, 45, 50, 55))}, "covers data"},
		{[]figures.PlacedText{text(rect(40, 50.5, 50, 60))}, "covers data"}, // within half a curve's width
		{[]figures.PlacedText{text(rect(55, 75, 61, 81))}, "covers data"},
		{[]figures.PlacedText{text(rect(20, 15, 25, 20))}, "covers data"}, // inside a band
		{[]figures.PlacedText{text(rect(5, 60, 30, 70)), text(rect(20, 65, 40, 75))}, "overlaps"},
		{[]figures.PlacedText{text(rect(90, 90, 110, 95))}, "off the canvas"},
	} {
		lay := &figures.Layout{Canvas: rect(0, 0, 100, 100), Panels: []*figures.PanelLayout{{Ink: ink, Texts: tc.texts}}}
		got := strings.Join(layoutProblems(lay), "; ")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("texts at %v: problems %q, want %q", tc.texts[0].Box, got, tc.want)
		}
	}
}

// labelProblems lists the labels that do not name their own line or
// point unambiguously: a line label whose centre is more than three
// quarters of its height from its line (the "m = 2" of a D = 32 run once
// sat 0.28 in loss above its line), a point label nearer to another
// marker of its panel than 1/1.5 of the distance to its own (a t_m beside
// a crowd of drops).
func labelProblems(lay *figures.Layout) []string {
	var out []string
	for i, pp := range lay.Panels {
		var marks []vg.Point
		for _, m := range pp.Ink.Marks {
			marks = append(marks, vg.Point{X: (m.Min.X + m.Max.X) / 2, Y: (m.Min.Y + m.Max.Y) / 2})
		}
		for _, tx := range pp.Texts {
			if tx.Anchor == nil {
				continue
			}
			a, b := *tx.Anchor, tx.Box
			switch tx.Kind {
			case "line label":
				h := b.Max.Y - b.Min.Y
				if d := math.Abs(float64((b.Min.Y+b.Max.Y)/2 - a.Y)); d > float64(0.75*h)+0.25 {
					out = append(out, fmt.Sprintf("line label %q (panel %d) is %.3g pt from its line, more than 3/4 of its height %.3g", tx.Text, i, d, h))
				}
			case "point label":
				own := rectDistance(b, a)
				for _, m := range marks {
					if d := rectDistance(b, m); math.Hypot(float64(m.X-a.X), float64(m.Y-a.Y)) > 0.5 && d < own*1.5-0.01 {
						out = append(out, fmt.Sprintf("point label %q (panel %d) is %.3g pt from its marker and %.3g from another at %v", tx.Text, i, own, d, m))
						break
					}
				}
			}
		}
	}
	return out
}

// rectDistance is the distance from p to the rectangle r.
func rectDistance(r vg.Rectangle, p vg.Point) float64 {
	dx := math.Max(math.Max(float64(r.Min.X-p.X), 0), float64(p.X-r.Max.X))
	dy := math.Max(math.Max(float64(r.Min.Y-p.Y), 0), float64(p.Y-r.Max.Y))
	return math.Hypot(dx, dy)
}

// subscriptProblems lists the texts with two subscript digits in a row
// (t₁₀, e₁₁) whose ink stands further apart than that of the same two
// full-size digits at the text's size: the gap between the glyphs' ink,
// their advance less the right side of the first and plus the left side
// of the second (Liberation Sans's metrics, through gonum's font cache),
// plus the kerning the text's box has beyond the plain width (the box's
// width less text.Plain's, for a text with one such pair).
func subscriptProblems(lay *figures.Layout) []string {
	var out []string
	check := func(tx figures.PlacedText) {
		rs := []rune(tx.Text)
		var pairs [][2]rune
		for k := 1; k < len(rs); k++ {
			if isSub(rs[k-1]) && isSub(rs[k]) {
				pairs = append(pairs, [2]rune{rs[k-1], rs[k]})
			}
		}
		if len(pairs) != 1 || tx.Style().Rotation != 0 {
			return
		}
		sty := tx.Style()
		face := font.DefaultCache.Lookup(sty.Font, sty.Font.Size)
		kern := (tx.Box.Max.X - tx.Box.Min.X) - face.Width(tx.Text)
		a, b := pairs[0][0], pairs[0][1]
		sub := inkGap(face, a, b) + kern
		full := inkGap(face, a-'₀'+'0', b-'₀'+'0')
		if sub > full+0.01 {
			out = append(out, fmt.Sprintf("%s %q: its subscripts stand %.3g pt apart, full-size digits %.3g", tx.Kind, tx.Text, sub, full))
		}
	}
	add := func(ts []figures.PlacedText) {
		for _, tx := range ts {
			check(tx)
		}
	}
	add(lay.Title)
	add(lay.Caption)
	for _, pp := range lay.Panels {
		add(pp.Texts)
	}
	return out
}

func isSub(r rune) bool { return r >= '₀' && r <= '₉' }

// inkGap is the gap between the ink of the glyphs a and b set one after
// the other with the face's advances.
func inkGap(face font.Face, a, b rune) vg.Length {
	var buf sfnt.Buffer
	ppem := fixed.Int26_6(face.Face.UnitsPerEm())
	metrics := func(r rune) (lo, hi, adv float64) {
		idx, _ := face.Face.GlyphIndex(&buf, r)
		bounds, advance, _ := face.Face.GlyphBounds(&buf, idx, ppem, xfont.HintingNone)
		return float64(bounds.Min.X), float64(bounds.Max.X), float64(advance)
	}
	_, hiA, advA := metrics(a)
	loB, _, _ := metrics(b)
	return vg.Length((advA-hiA+loB)/float64(ppem)) * face.Font.Size
}

// TestRunFigureShowsFirstPlateau: on a log time axis the run figure shows
// a decade of the first plateau before the first drop t₁ (the drops grid
// samples it from t₁/10 or before: flow's TestDropsGridSamplesFirstPlateau),
// for the paper's example, λ_d ∝ 1/d at D = 16 and the separate full layer
// under fixed tasks.
func TestRunFigureShowsFirstPlateau(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"run.npz":  {"run"},
		"d16.npz":  {"run", "-spectrum", "power:1", "-D", "16"},
		"full.npz": {"run", "-layer", "full", "-icl", "0.5", "-tasks", "4"},
	} {
		out := filepath.Join(dir, name)
		linattn(t, 0, append(args, "-o", out)...)
		t1 := arrays(t, out)["transitions"].Float[0]
		x := load(t, out, figures.Options{}).Grid[0][0].XRange
		if x.Min > t1/10 {
			t.Errorf("%v: the time axis starts at %.4g, after t₁/10 = %.4g", args, x.Min, t1/10)
		}
	}
}
