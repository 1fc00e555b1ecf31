package figures

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/linattn/linattn/output"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
)

// sweepRun is one run of a sweep as its figure draws it.
type sweepRun struct {
	run        int
	group      int // index of its value of the -by field
	t, loss    []float64
	levels     []float64
	trans      []float64
	transM     []int64
	incomplete bool
	file       *file
}

// sweepData is a sweep's index and the runs it could read.
type sweepData struct {
	by      string   // the field that groups the runs ("" when nothing was swept)
	values  []string // its values, as written in index.json
	numbers []float64
	numeric bool
	runs    []sweepRun
}

// sweepFigure draws a sweep from its index: the loss of every run on one
// axis coloured by the -by field (or one panel per value of it), and the
// drop times of every run against that field.
func sweepFigure(f *file, opt Options) (*Figure, error) {
	sd, err := readSweep(f, opt.By)
	if err != nil {
		return nil, err
	}
	log := opt.XScale != "lin"
	if len(sd.runs) == 0 {
		return nil, fmt.Errorf("%s: no run of the sweep has output to draw", f.path)
	}
	// The title states what the runs share (from the first run's sidecar)
	// and what was swept.
	first := sd.runs[0].file
	parts := problemParts(first, first.spec.D, first.spec.H, first.spec.R, first.spec.Model == "merged", f.idx.Swept)
	parts = append(parts, fmt.Sprintf("%d runs", len(f.idx.Rows)))
	if len(f.idx.Swept) > 0 {
		parts[len(parts)-1] += " over " + strings.Join(f.idx.Swept, ", ")
	}
	fig := &Figure{Title: strings.Join(parts, ", ")}
	if n := len(f.idx.Rows) - len(sd.runs); n > 0 {
		fig.addNote(fmt.Sprintf("%d of %d runs not drawn: failed or not run (their errors are in index.json)", n, len(f.idx.Rows)))
	}
	lossPanels := sweepLossPanels(sd, opt.Panels, log, fig)
	drops := sweepDropPanel(sd)
	if !opt.Panels {
		fig.Grid = [][]*Panel{{lossPanels[0]}, {drops}}
		fig.Heights = []float64{1.5, 1}
		fig.Width, fig.Height = columnWidth, 5*vg.Inch
		return fig, nil
	}
	// Rows of at most four loss panels, then the drop times across the
	// page.
	cols := min(4, len(lossPanels))
	for i := 0; i < len(lossPanels); i += cols {
		row := lossPanels[i:min(i+cols, len(lossPanels))]
		for len(row) < cols {
			row = append(row, nil)
		}
		fig.Grid = append(fig.Grid, row)
	}
	fig.Grid = append(fig.Grid, []*Panel{drops})
	fig.Width, fig.Height = pageWidth, vg.Length(0.4+2.1*float64(len(fig.Grid)))*vg.Inch
	return fig, nil
}

// readSweep reads the index and every run that has output.
func readSweep(f *file, by string) (*sweepData, error) {
	sd := &sweepData{by: chooseBy(f.idx.Swept, by)}
	if by != "" && sd.by != by {
		return nil, fmt.Errorf("-by %s: not a swept field of %s (swept: %s)", by, f.path, strings.Join(f.idx.Swept, ", "))
	}
	group := make([]int, len(f.idx.Rows))
	if sd.by != "" {
		raw := f.idx.ParamValues[sd.by]
		sd.numeric = true
		for _, v := range raw {
			sd.values = append(sd.values, compactJSON(v))
			var x float64
			if json.Unmarshal(v, &x) != nil {
				sd.numeric = false
			}
			sd.numbers = append(sd.numbers, x)
		}
		for i, row := range f.idx.Rows {
			group[i] = -1
			for k, v := range raw {
				if compactJSON(row.Params[sd.by]) == compactJSON(v) {
					group[i] = k
				}
			}
			if group[i] < 0 {
				return nil, fmt.Errorf("%s: run %d has %s = %s, not among param_values", f.path, row.Run, sd.by, row.Params[sd.by])
			}
		}
	}
	dir := filepath.Dir(f.path)
	for i, row := range f.idx.Rows {
		if row.Status != "complete" && row.Status != "incomplete" {
			continue
		}
		r, err := readSweepRun(filepath.Join(dir, filepath.FromSlash(row.File)))
		if err != nil {
			return nil, fmt.Errorf("run %d of %s: %w", row.Run, f.path, err)
		}
		r.run, r.group, r.incomplete = row.Run, group[i], row.Status == "incomplete"
		sd.runs = append(sd.runs, r)
	}
	return sd, nil
}

func readSweepRun(path string) (sweepRun, error) {
	var r sweepRun
	f, err := open(path)
	if err != nil {
		return r, err
	}
	if f.kind != "run" {
		return r, fmt.Errorf("%s is the output of linattn %s, not of a run", path, f.command())
	}
	if err := f.vectors([]string{output.Times, output.Loss, output.Plateaus, output.Transitions}, &r.t, &r.loss, &r.levels, &r.trans); err != nil {
		return r, err
	}
	if len(r.loss) != len(r.t) {
		return r, fmt.Errorf("%s: t has %d samples, loss %d", path, len(r.t), len(r.loss))
	}
	r.transM, _, err = f.Ints(output.TransitionM, len(r.trans))
	r.file = f
	return r, err
}

// chooseBy is the field that groups the runs: by when it was swept, else
// the first swept field other than seed, else seed, else none.
func chooseBy(swept []string, by string) string {
	for _, s := range swept {
		if s == by {
			return by
		}
	}
	if by != "" {
		return ""
	}
	for _, s := range swept {
		if s != "seed" {
			return s
		}
	}
	if len(swept) > 0 {
		return swept[0]
	}
	return ""
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return strings.Trim(b.String(), `"`)
}

// groupColor is the colour of the runs with the k-th value of the -by
// field: Okabe–Ito for a few values, viridis in order for many.
func (sd *sweepData) groupColor(k int) color.Color {
	if len(sd.values) <= len(okabeIto) {
		return categorical(k, len(sd.values))
	}
	return ordered(k, len(sd.values))
}

func (sd *sweepData) groupLabel(k int) string {
	if sd.by == "" {
		return ""
	}
	return sd.by + " = " + sd.values[k]
}

// sweepLossPanels draws every run once: on one panel coloured by group, or
// on one panel per group in black. Plateau levels are drawn where all runs
// of a panel share them.
func sweepLossPanels(sd *sweepData, split, log bool, fig *Figure) []*Panel {
	groups := max(1, len(sd.values))
	panels := make([]*Panel, 1)
	if split {
		panels = make([]*Panel, groups)
	}
	var all [][]float64
	for _, r := range sd.runs {
		all = append(all, r.t)
	}
	x := timeRange(concat(all), log)
	for i := range panels {
		panels[i] = &Panel{XLabel: "t / τ", YLabel: "loss", XLog: log, XRange: x}
		if split {
			panels[i].Title = sd.groupLabel(i)
		}
	}
	labelled := map[int]bool{}
	perPanel := make([][]sweepRun, len(panels))
	dropped := 0
	for _, r := range sd.runs {
		k := 0
		if split {
			k = r.group
		}
		perPanel[k] = append(perPanel[k], r)
		t, loss, n := onAxis(r.t, r.loss, log)
		dropped += n
		c := Curve{X: t, Y: loss, Color: black, Thin: len(sd.runs) > 12, Dashed: r.incomplete}
		if !split {
			c.Color = sd.groupColor(r.group)
			if !labelled[r.group] {
				c.Label, labelled[r.group] = sd.groupLabel(r.group), true
			}
		}
		panels[k].Curves = append(panels[k].Curves, c)
	}
	fig.addNote(droppedNote(dropped))
	for k, p := range panels {
		if levels, ok := sharedLevels(perPanel[k]); ok {
			ms := make([]int, len(levels))
			for m := range ms {
				ms[m] = m
			}
			p.HLines = plateauLines(levels, ms)
		} else if len(perPanel[k]) > 0 {
			fig.addNote("the runs of a panel have different plateau levels (different spectra): none drawn")
		}
		p.thinLegend(maxLegend)
		if !split && len(sd.values) > 1 {
			p.Legend = BottomLeft
			if len(sd.values) > 6 {
				p.Legend = Outside
			}
		}
	}
	return panels
}

// sharedLevels returns the plateau levels of the runs when all are equal.
func sharedLevels(runs []sweepRun) ([]float64, bool) {
	if len(runs) == 0 {
		return nil, false
	}
	first := runs[0].levels
	for _, r := range runs[1:] {
		if len(r.levels) != len(first) {
			return nil, false
		}
		for i := range first {
			if r.levels[i] != first[i] {
				return nil, false
			}
		}
	}
	return first, true
}

// sweepDropPanel: every observed drop t_m of every run against the run's
// value of the -by field (runs with equal values spread a little apart),
// coloured by m.
func sweepDropPanel(sd *sweepData) *Panel {
	p := &Panel{Title: "drop times", YLabel: "drop time / τ", YLog: true}
	pos, ticks, log := sd.positions()
	p.XLog, p.XTicks = log, ticks
	p.XLabel = sd.by
	if sd.by == "" {
		p.XLabel = "run"
	}
	maxM := int64(0)
	for _, r := range sd.runs {
		for _, m := range r.transM {
			maxM = max(maxM, m)
		}
	}
	byM := make([]Points, maxM)
	for m := range byM {
		byM[m] = Points{Label: "m = " + fmt.Sprint(m+1), Color: ordered(m, int(maxM))}
	}
	for i, r := range sd.runs {
		for k, tm := range r.trans {
			m := r.transM[k]
			if m < 1 || tm <= 0 {
				continue
			}
			byM[m-1].X, byM[m-1].Y = append(byM[m-1].X, pos[i]), append(byM[m-1].Y, tm)
		}
	}
	for _, pts := range byM {
		if len(pts.X) > 0 {
			p.Points = append(p.Points, pts)
		}
	}
	p.Legend = Outside
	p.thinLegend(maxLegend)
	return p
}

// positions are the x of each run on the drop-time panel: its value of
// the -by field (spread by a little for repeated values), or the value's
// index for non-numeric values; the ticks name the values; log reports a
// log axis (positive values spanning more than a decade).
func (sd *sweepData) positions() (pos []float64, ticks []Tick, log bool) {
	count := map[int]int{}
	for _, r := range sd.runs {
		count[r.group]++
	}
	x := make([]float64, len(sd.values))
	log = sd.numeric && len(sd.values) > 1
	for k := range sd.values {
		x[k] = float64(k)
		if sd.numeric {
			x[k] = sd.numbers[k]
			log = log && x[k] > 0
		}
	}
	if log {
		lo, hi := dataRange(true, x)
		log = hi/lo > 10
	}
	for k, v := range sd.values {
		ticks = append(ticks, Tick{Value: x[k], Label: shorten(v)})
	}
	seen := map[int]int{}
	for _, r := range sd.runs {
		if sd.by == "" {
			pos = append(pos, float64(r.run))
			continue
		}
		base := x[r.group]
		// Runs with the same value side by side over a fortieth of the
		// axis, or of a factor 1.1 on a log axis.
		spread := (float64(seen[r.group]) - float64(count[r.group]-1)/2) / float64(max(count[r.group], 1))
		seen[r.group]++
		if log {
			pos = append(pos, base*math.Pow(1.15, spread))
		} else {
			lo, hi := dataRange(false, x)
			pos = append(pos, base+spread*math.Max(hi-lo, 1)*0.06)
		}
	}
	if sd.by == "" {
		ticks = nil
	}
	return pos, ticks, log
}

func shorten(s string) string {
	if r := []rune(s); len(r) > 14 {
		return string(r[:13]) + "…"
	}
	return s
}

func concat(xs [][]float64) []float64 {
	var out []float64
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}
