package figures

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"
)

// The panels of a sweep's figure: the loss curves and the drop times.

// sweepLossPanels: the loss of every run, or with -view median the median
// and the quartile band of each group of runs, on one panel or one per
// value of the panel field, coloured by the hue field and dashed by the
// style field; converged runs are held to the end of the time axis; the
// plateau levels are drawn where a panel's runs share them.
func sweepLossPanels(sd *sweepData, log bool, fig *Figure) []*Panel {
	var all [][]float64
	held := false
	for _, r := range sd.runs {
		all, held = append(all, r.t), held || r.converged
	}
	x := timeRange(concat(all), log, held)
	panels := make([]*Panel, sd.count(sd.panel))
	per := make([][]sweepRun, len(panels))
	for _, r := range sd.runs {
		k := sd.level(sd.panel, r)
		per[k] = append(per[k], r)
	}
	dropped := 0
	for k := range panels {
		p := &Panel{XLabel: "t / τ", YLabel: "loss", XLog: log, XRange: x, Legend: BottomLeft}
		if sd.panel != "" {
			p.Title = sd.label(sd.panel, k)
		}
		if sd.median {
			dropped += sd.medianCurves(p, per[k], log, x.Max)
		} else {
			dropped += sd.runCurves(p, per[k], log, x.Max)
		}
		if levels, ok := sharedLevels(per[k]); ok {
			ms := make([]int, len(levels))
			for m := range ms {
				ms[m] = m
			}
			p.HLines = plateauLines(levels, ms)
		} else if len(per[k]) > 0 {
			fig.addNote("the runs of a panel have different plateau levels (different spectra): none drawn")
		}
		if k == 0 && sd.panel == "" {
			p.Curves = append(p.Curves, sd.legendCurves()...)
			p.thinLegend(maxLegend)
		}
		if (k > 0 || sd.panel != "") && len(p.Bands) > 0 {
			p.Bands[0].Label = ""
		}
		panels[k] = p
	}
	fig.addNote(droppedNote(dropped))
	if held {
		fig.addNote("converged runs are drawn on at their final loss, dotted, to the end of the time axis")
	}
	return panels
}

// runCurves adds the loss of each run to p, and returns how many samples a
// log axis left out.
func (sd *sweepData) runCurves(p *Panel, runs []sweepRun, log bool, end float64) int {
	dropped := 0
	for _, r := range runs {
		t, loss, n := onAxis(r.t, r.loss, log)
		dropped += n
		c := sd.hueColor(sd.level(sd.hue, r))
		c.X, c.Y, c.Dash, c.Thin = t, loss, sd.level(sd.style, r), len(sd.runs) > 12
		p.Curves = append(p.Curves, c)
		if k := len(t) - 1; r.converged && k >= 0 && t[k] < end {
			p.Curves = append(p.Curves, Curve{X: []float64{t[k], end}, Y: []float64{loss[k], loss[k]}, Color: c.Color, Dotted: true, Thin: true})
		}
	}
	return dropped
}

// legendCurves are the legend's entries: a line in the colour of each hue
// value and one of each style value's dashes (those of runs drawn, for a
// field with two or more of them), and, so that the legend names every
// field that varies, a thin grey line for each other swept field: drawn
// alike, or with -view median summarized over.
func (sd *sweepData) legendCurves() []Curve {
	out := sd.toldApartCurves()
	for _, field := range sd.swept {
		if field == sd.hue || field == sd.style || field == sd.panel || sd.count(field) < 2 {
			continue
		}
		label := sd.valuesText(field) + ": drawn alike"
		if slices.Contains(sd.replicates, field) {
			label = "median over " + sd.valuesText(field)
		}
		out = append(out, Curve{Label: label, Color: lightGray, Thin: true})
	}
	return out
}

// valuesText names a swept field's values: all of them, or the first two
// and the last of more than four.
func (sd *sweepData) valuesText(field string) string {
	v := sd.values[field]
	if len(v) > 4 {
		return fmt.Sprintf("%s = %s, %s, …, %s", field, shorten(v[0]), shorten(v[1]), shorten(v[len(v)-1]))
	}
	short := make([]string, len(v))
	for i, x := range v {
		short[i] = shorten(x)
	}
	return field + " = " + strings.Join(short, ", ")
}

// toldApartCurves are the legend's entries of the hue and style fields.
func (sd *sweepData) toldApartCurves() []Curve {
	var out []Curve
	for _, field := range []string{sd.hue, sd.style} {
		var present []int
		for k := 0; field != "" && k < sd.count(field); k++ {
			if slices.ContainsFunc(sd.runs, func(r sweepRun) bool { return sd.level(field, r) == k }) {
				present = append(present, k)
			}
		}
		for _, k := range present {
			c := Curve{Label: sd.label(field, k), Color: black, Dash: k}
			if field == sd.hue {
				c = sd.hueColor(k)
				c.Label = sd.label(field, k)
			}
			if len(present) > 1 {
				out = append(out, c)
			}
		}
	}
	return out
}

// groups splits runs by their values of the hue and style fields, in the
// order of those values.
func (sd *sweepData) groups(runs []sweepRun) [][]sweepRun {
	out := make([][]sweepRun, sd.count(sd.hue)*sd.count(sd.style))
	for _, r := range runs {
		g := sd.level(sd.hue, r)*sd.count(sd.style) + sd.level(sd.style, r)
		out[g] = append(out[g], r)
	}
	return out
}

// medianCurves adds to p, for each group of runs, the median loss over the
// group at every output time of its runs and the band between the 25th and
// the 75th percentile; a converged run counts with its final loss after
// its end, a run that stopped early no more. It returns how many samples
// a log axis left out.
func (sd *sweepData) medianCurves(p *Panel, runs []sweepRun, log bool, end float64) int {
	dropped := 0
	for _, g := range sd.groups(runs) {
		if len(g) == 0 {
			continue
		}
		var times []float64
		last, allHeld := 0.0, true
		for _, r := range g {
			t, _, n := onAxis(r.t, r.loss, log)
			times, dropped = append(times, t...), dropped+n
			last, allHeld = math.Max(last, r.t[len(r.t)-1]), allHeld && r.converged
		}
		sort.Float64s(times)
		times = slices.Compact(times)
		med, lo, hi := quartileCurves(g, times)
		c := sd.hueColor(sd.level(sd.hue, g[0]))
		c.X, c.Y, c.Dash = times, med, sd.level(sd.style, g[0])
		p.Bands = append(p.Bands, Band{X: times, Lo: lo, Hi: hi, Color: c.Color})
		p.Curves = append(p.Curves, c)
		if n := len(times) - 1; allHeld && n >= 0 && last < end {
			p.Curves = append(p.Curves, Curve{X: []float64{times[n], end}, Y: []float64{med[n], med[n]}, Color: c.Color, Dotted: true, Thin: true})
		}
	}
	if len(p.Bands) > 0 {
		p.Bands[0].Label = "25th–75th percentile"
	}
	return dropped
}

// quartileCurves are the median and the 25th and 75th percentiles over
// the runs of their loss at the given times (NaN where no run has one).
func quartileCurves(runs []sweepRun, times []float64) (med, lo, hi []float64) {
	vals := make([]float64, 0, len(runs))
	for _, t := range times {
		vals = vals[:0]
		for _, r := range runs {
			if t <= r.t[len(r.t)-1] || r.converged {
				vals = append(vals, interpolate(r.t, r.loss, t))
			}
		}
		med, lo, hi = append(med, quantile(vals, 0.5)), append(lo, quantile(vals, 0.25)), append(hi, quantile(vals, 0.75))
	}
	return med, lo, hi
}

// quantile is the q-quantile of x with linear interpolation between order
// statistics (numpy.percentile's default, Hyndman & Fan type 7); NaN for
// no values. It sorts x.
func quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	sort.Float64s(x)
	h := float64(len(x)-1) * q
	i := int(math.Floor(h))
	if i+1 >= len(x) {
		return x[len(x)-1]
	}
	return x[i] + (h-float64(i))*(x[i+1]-x[i])
}

// sharedLevels returns the plateau levels of the runs when all are equal.
func sharedLevels(runs []sweepRun) ([]float64, bool) {
	if len(runs) == 0 {
		return nil, false
	}
	first := runs[0].levels
	for _, r := range runs[1:] {
		if !slices.Equal(r.levels, first) {
			return nil, false
		}
	}
	return first, true
}

// sweepDropPanel: the observed drop times t_m against the values of -by,
// one category each, coloured by m; the runs of one value side by side,
// in groups by the fields other than -by that are told apart (marker
// shapes); with -view median each group's median with a bar between the
// quartiles.
func sweepDropPanel(sd *sweepData) *Panel {
	p := &Panel{Title: "drop times", YLabel: "drop time / τ", YLog: true, XLabel: sd.by, Legend: Outside}
	cats := sd.count(sd.by)
	for k := 0; k < cats; k++ {
		label := "all runs"
		if sd.by != "" {
			label = shorten(sd.values[sd.by][k])
		}
		p.XTicks = append(p.XTicks, Tick{Value: float64(k), Label: label})
	}
	p.XRange = Range{-0.5, float64(cats) - 0.5}
	// Faint lines between the categories, so that a group's marker set off
	// from its category's tick reads as of that category, not of a value
	// between two (issue 45: a tasks marker read as an icl value).
	for k := 1; k < cats; k++ {
		p.VLines = append(p.VLines, RefLine{Value: float64(k) - 0.5})
	}
	// The groups within a category: the fields told apart other than -by.
	var fields []string
	for _, f := range []string{sd.panel, sd.hue, sd.style} {
		if f != "" && f != sd.by && !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	group := func(r sweepRun) (g int) {
		for _, f := range fields {
			g = g*sd.count(f) + sd.level(f, r)
		}
		return g
	}
	ngroups := 1
	for _, f := range fields {
		ngroups *= sd.count(f)
	}
	maxM := int64(0)
	for _, r := range sd.runs {
		for _, m := range r.transM {
			maxM = max(maxM, m)
		}
	}
	pts := sd.dropPoints(cats, ngroups, int(maxM), group)
	for m := 1; m <= int(maxM); m++ {
		for g := 0; g < ngroups; g++ {
			if q := pts[m-1][g]; len(q.X) > 0 {
				p.Points = append(p.Points, q)
			}
		}
	}
	p.thinLegend(maxLegend)
	p.Points = append(p.Points, groupShapes(sd, fields, ngroups)...)
	if sd.panel != "" {
		// The legend of the loss panels too, under the whole figure.
		p.Legend = Below
		p.Curves = append(p.Curves, sd.legendCurves()...)
		if sd.median {
			p.Bands = append(p.Bands, Band{Label: "25th–75th percentile", Color: black})
		}
	}
	return p
}

// dropPoints places every drop (or every group's median drop) of the runs:
// pts[m−1][g] for drop m of group g. The runs of one category and group
// stand side by side across 70% of its slot, in the order of the sweep.
func (sd *sweepData) dropPoints(cats, ngroups, maxM int, group func(sweepRun) int) [][]Points {
	pts := make([][]Points, maxM)
	for m := range pts {
		pts[m] = make([]Points, ngroups)
		for g := range pts[m] {
			pts[m][g] = groupMarker(g, ordered(m, maxM))
		}
		pts[m][0].Label = "m = " + fmt.Sprint(m+1)
		if sd.byOrder {
			pts[m][0].Label = ordinal(m+1) + " drop"
		}
	}
	slot := 0.7 / float64(ngroups)
	center := func(cat, g int) float64 { return float64(cat) + (float64(g)-float64(ngroups-1)/2)*slot }
	n := make([]int, cats*ngroups)
	for _, r := range sd.runs {
		n[sd.level(sd.by, r)*ngroups+group(r)]++
	}
	rank := make([]int, cats*ngroups)
	drops := make([][]float64, cats*ngroups*maxM) // by cell and m, for the medians
	for _, r := range sd.runs {
		cat, g := sd.level(sd.by, r), group(r)
		c := cat*ngroups + g
		x := center(cat, g) + slot*0.7*(float64(rank[c])/math.Max(1, float64(n[c]-1))-0.5)
		if n[c] == 1 {
			x = center(cat, g)
		}
		rank[c]++
		for k, tm := range r.trans {
			m := int(r.transM[k])
			if m < 1 || tm <= 0 {
				continue
			}
			drops[c*maxM+m-1] = append(drops[c*maxM+m-1], tm)
			if !sd.median {
				q := &pts[m-1][g]
				q.X, q.Y = append(q.X, x), append(q.Y, tm)
			}
		}
	}
	for c := 0; sd.median && c < cats*ngroups; c++ {
		for m := 0; m < maxM; m++ {
			if ts := drops[c*maxM+m]; len(ts) > 0 {
				q := &pts[m][c%ngroups]
				q.X, q.Y = append(q.X, center(c/ngroups, c%ngroups)), append(q.Y, quantile(ts, 0.5))
				q.Lo, q.Hi = append(q.Lo, quantile(ts, 0.25)), append(q.Hi, quantile(ts, 0.75))
			}
		}
	}
	return pts
}

// groupMarker is the marker of group g in colour c: filled and open
// circles and squares.
func groupMarker(g int, c color.Color) Points {
	return Points{Color: c, Square: g%2 == 1, Open: g%4 >= 2}
}

// groupShapes are legend entries for the marker of each group, when there
// are two to four.
func groupShapes(sd *sweepData, fields []string, ngroups int) []Points {
	if ngroups < 2 || ngroups > 4 {
		return nil
	}
	var out []Points
	for g := 0; g < ngroups; g++ {
		var parts []string
		rest := g
		for i := len(fields) - 1; i >= 0; i-- {
			n := sd.count(fields[i])
			parts = append([]string{sd.label(fields[i], rest%n)}, parts...)
			rest /= n
		}
		q := groupMarker(g, black)
		q.Label = strings.Join(parts, ", ")
		out = append(out, q)
	}
	return out
}

func concat(xs [][]float64) []float64 {
	var out []float64
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

// ordinal writes n ≥ 1 as 1st, 2nd, 3rd, 4th, ….
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprint(n) + suffix
}
