package figures

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"

	"gonum.org/v1/plot/vg"
)

// sweepRun is one run of a sweep as its figure draws it.
type sweepRun struct {
	run        int
	params     map[string]string // the swept fields' values, as in index.json
	t, loss    []float64
	levels     []float64
	trans      []float64
	transM     []int64
	incomplete bool
	converged  bool
	file       *file
}

// sweepData is a sweep's index, the runs it could read, and the part each
// swept field plays in the figure: the field that splits the panels, the
// one that colours the curves (hue) and the one that dashes them (style),
// as seaborn's relplot(col=, hue=, style=) names them; by is -by, along the
// drop panel's x axis.
type sweepData struct {
	swept              []string
	values             map[string][]string // each swept field's values, in the sweep's order
	by, panel          string
	hue, style         string
	runs               []sweepRun
	median             bool
	dropsOnly          bool     // the runs are of linattn reduced: the drop times alone
	byOrder            bool     // drops are numbered by order, not by m (numberDrops)
	replicates, hidden []string // fields summarized over, and those not told apart
}

// replicateFields are the fields whose values are repetitions of one
// experiment: a median over them summarizes it.
var replicateFields = []string{"seed", "data-seed"}

// sweepFigure draws a sweep from its index: the loss of every run (or, with
// -view median, the median over seeds and the band between the quartiles)
// on one panel or one per value of -by, and the drop times against -by.
func sweepFigure(f *file, opt Options) (*Figure, error) {
	sd, err := readSweep(f, opt)
	if err != nil {
		return nil, err
	}
	if len(sd.runs) == 0 {
		return nil, fmt.Errorf("%s: no run of the sweep has output to draw", f.path)
	}
	first := sd.runs[0].file
	parts := problemParts(first, first.spec.D, first.spec.H, first.spec.R, first.spec.Model == flow.Merged, f.idx.Swept)
	parts = append(parts, fmt.Sprintf("%d runs", len(f.idx.Rows)))
	if len(f.idx.Swept) > 0 {
		parts[len(parts)-1] += " over " + strings.Join(f.idx.Swept, ", ")
	}
	fig := &Figure{Title: strings.Join(parts, ", ")}
	if n := len(f.idx.Rows) - len(sd.runs); n > 0 {
		fig.addNote(fmt.Sprintf("%d of %d runs not drawn: failed or not run (their errors are in index.json)", n, len(f.idx.Rows)))
	}
	sd.notes(fig)
	drops := sweepDropPanel(sd)
	if sd.dropsOnly {
		fig.Grid = [][]*Panel{{drops}}
		fig.Width, fig.Height = columnWidth, 3*vg.Inch
		fig.MinWidth, fig.MinHeight = minWidth, minHeight(1)
		return fig, nil
	}
	loss := sweepLossPanels(sd, opt.XScale != "lin", fig)
	if !opt.Panels {
		fig.Grid = [][]*Panel{{loss[0]}, {drops}}
		fig.Heights = []float64{1.5, 1}
		fig.Width, fig.Height = columnWidth, 5*vg.Inch
		fig.MinWidth, fig.MinHeight = minWidth, minHeight(2)+0.5*vg.Inch
		return fig, nil
	}
	// Rows of at most four loss panels; the drop times beside them when
	// there is room, else across the page below.
	cols := min(4, len(loss))
	for i := 0; i < len(loss); i += cols {
		row := loss[i:min(i+cols, len(loss))]
		for len(row) < cols {
			row = append(row, nil)
		}
		fig.Grid = append(fig.Grid, row)
	}
	if len(loss) < 4 {
		fig.Grid[0] = append(fig.Grid[0], drops)
	} else {
		fig.Grid = append(fig.Grid, []*Panel{drops})
	}
	fig.Width, fig.Height = pageWidth, vg.Length(0.4+2.1*float64(len(fig.Grid)))*vg.Inch
	fig.MinWidth, fig.MinHeight = minPageWidth, minHeight(len(fig.Grid))+0.3*vg.Inch*vg.Length(len(fig.Grid))
	return fig, nil
}

// notes says which fields the figure summarizes over or does not tell
// apart.
func (sd *sweepData) notes(fig *Figure) {
	if sd.median {
		what := "no field is a seed: each median is of one run"
		if len(sd.replicates) > 0 {
			what = "median over " + strings.Join(sd.replicates, " and ")
		}
		fig.addNote(what + "; the band and the bars span the 25th to the 75th percentile (numpy's linear percentiles)")
	}
	if len(sd.hidden) > 0 {
		fig.addNote("runs differing only in " + strings.Join(sd.hidden, ", ") + " are drawn alike (-by and -panels choose the fields told apart)")
	}
}

// readSweep reads the index and every run that has output, and gives the
// swept fields their parts.
func readSweep(f *file, opt Options) (*sweepData, error) {
	sd := &sweepData{swept: f.idx.Swept, values: map[string][]string{}, median: opt.View == "median"}
	sd.by = chooseBy(f.idx.Swept, opt.By)
	if opt.By != "" && sd.by != opt.By {
		return nil, fmt.Errorf("-by %s: not a swept field of %s (swept: %s)", opt.By, f.path, strings.Join(f.idx.Swept, ", "))
	}
	for _, name := range f.idx.Swept {
		for _, v := range f.idx.ParamValues[name] {
			sd.values[name] = append(sd.values[name], compactJSON(v))
		}
	}
	sd.assign(opt.Panels)
	dir := filepath.Dir(f.path)
	for _, row := range f.idx.Rows {
		if row.Status != "complete" && row.Status != "incomplete" {
			continue
		}
		r, err := readSweepRun(filepath.Join(dir, filepath.FromSlash(row.File)), row)
		if err != nil {
			return nil, fmt.Errorf("run %d of %s: %w", row.Run, f.path, err)
		}
		sd.dropsOnly = sd.dropsOnly || r.t == nil
		r.run, r.incomplete, r.params = row.Run, row.Status == "incomplete", map[string]string{}
		for _, name := range f.idx.Swept {
			r.params[name] = compactJSON(row.Params[name])
			if !slices.Contains(sd.values[name], r.params[name]) {
				return nil, fmt.Errorf("%s: run %d has %s = %s, not among param_values", f.path, row.Run, name, row.Params[name])
			}
		}
		sd.runs = append(sd.runs, r)
	}
	sd.numberDrops()
	return sd, nil
}

// numberDrops numbers the drops of every run by their order when some run
// has fixed tasks: there a drop's m counts drops read off the run, while
// in context it counts the eigenvectors learned (the merged model's one
// drop is m = D), so the same first drop would be m = D in one run and
// m = 1 in the next (docs/math.md, "Plateaus and drops without theory").
func (sd *sweepData) numberDrops() {
	for _, r := range sd.runs {
		if r.file != nil && !r.file.spec.InContext() {
			sd.byOrder = true
		}
	}
	if !sd.byOrder {
		return
	}
	for i := range sd.runs {
		for k := range sd.runs[i].transM {
			sd.runs[i].transM[k] = int64(k + 1)
		}
	}
}

// assign gives the swept fields their parts: -by splits the panels (with
// -panels) or colours the curves; the next fields that are not seeds
// colour and dash them; seeds are drawn alike, and with -view median
// summarized over.
func (sd *sweepData) assign(panels bool) {
	var free []string
	for _, s := range sd.swept {
		switch {
		case sd.median && slices.Contains(replicateFields, s):
			sd.replicates = append(sd.replicates, s)
		case s != sd.by:
			free = append(free, s)
		}
	}
	if sd.median && slices.Contains(replicateFields, sd.by) {
		sd.by = ""
	}
	next := func() string {
		for i, s := range free {
			if !slices.Contains(replicateFields, s) {
				free = append(free[:i:i], free[i+1:]...)
				return s
			}
		}
		return ""
	}
	if panels {
		sd.panel, sd.hue = sd.by, next()
	} else {
		sd.hue = sd.by
	}
	sd.style = next()
	for _, s := range free {
		if !slices.Contains(replicateFields, s) {
			sd.hidden = append(sd.hidden, s)
		}
	}
}

// readSweepRun reads a run of a sweep: the loss and the drops of a run of
// linattn run or train, or only the drops (from its row) of linattn
// reduced.
func readSweepRun(path string, row output.IndexRow) (sweepRun, error) {
	var r sweepRun
	f, err := open(path)
	if err != nil {
		return r, err
	}
	switch f.kind {
	case "run":
	case "reduced":
		r.file, r.trans = f, row.Transitions
		for _, m := range row.TransitionM {
			r.transM = append(r.transM, int64(m))
		}
		return r, nil
	default:
		return r, fmt.Errorf("%s is the output of linattn %s, which has no figure over a sweep; draw one output: linattn plot %s", path, f.command(), path)
	}
	if err := f.vectors([]string{output.Times, output.Loss, output.Plateaus, output.Transitions}, &r.t, &r.loss, &r.levels, &r.trans); err != nil {
		return r, err
	}
	if len(r.loss) != len(r.t) {
		return r, fmt.Errorf("%s: t has %d samples, loss %d", path, len(r.t), len(r.loss))
	}
	r.transM, _, err = f.Ints(output.TransitionM, len(r.trans))
	r.file, r.converged = f, f.meta.Status == "converged"
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

// level is the index of the run's value of field among the field's values
// (0 when the field is "").
func (sd *sweepData) level(field string, r sweepRun) int {
	if field == "" {
		return 0
	}
	return slices.Index(sd.values[field], r.params[field])
}

// count is the number of values of field (1 when the field is "").
func (sd *sweepData) count(field string) int {
	if field == "" {
		return 1
	}
	return len(sd.values[field])
}

// hueColor is the colour of the k-th value of the hue field: Okabe–Ito for
// a few values, viridis in order for many; black without a hue field.
func (sd *sweepData) hueColor(k int) (c Curve) {
	n := sd.count(sd.hue)
	switch {
	case sd.hue == "":
		c.Color = black
	case n <= len(okabeIto):
		c.Color = categorical(k, n)
	default:
		c.Color = ordered(k, n)
	}
	return c
}

func (sd *sweepData) label(field string, k int) string {
	return field + " = " + shorten(sd.values[field][k])
}

func shorten(s string) string {
	if r := []rune(s); len(r) > 14 {
		return string(r[:13]) + "…"
	}
	return s
}
