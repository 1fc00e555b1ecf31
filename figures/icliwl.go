package figures

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"

	"gonum.org/v1/plot/vg"
)

// InContextInWeight draws the paper's figure icl-iwl-sweep (appendix
// supp:icl-iwl) from the exact flow: one panel per fraction c of in-context
// training sequences, each with the training loss and the in-context and
// in-weight test losses. exact are run outputs (linattn run -layer full
// -icl C, one per c, with their test losses); trained, optional, are
// training runs on the same problems (linattn train), drawn as thin dashed
// lines beside them, with a line at their final time. Panels go from c = 1 (0%
// fixed tasks) to c = 0, three to a row.
func InContextInWeight(exact, trained []string) (*Figure, error) {
	runs, err := openByICL(exact, false)
	if err != nil {
		return nil, err
	}
	finite, err := openByICL(trained, true)
	if err != nil {
		return nil, err
	}
	cs := make([]float64, 0, len(runs))
	for c := range runs {
		cs = append(cs, c)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(cs)))
	fig := &Figure{Width: 2 * columnWidth}
	var row []*Panel
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cs {
		p, r, err := iclIWLPanel(runs[c], finite[c], c)
		if err != nil {
			return nil, err
		}
		lo, hi = math.Min(lo, r.Min), math.Max(hi, r.Max)
		if row = append(row, p); len(row) == 3 {
			fig.Grid, row = append(fig.Grid, row), nil
		}
	}
	if len(row) > 0 {
		fig.Grid = append(fig.Grid, row)
	}
	lo = math.Max(lo, 1)
	for i, r := range fig.Grid {
		for j, p := range r {
			p.XRange, p.XLog, p.YRange = Range{lo, hi}, true, Range{-0.1, 2.1}
			p.XLabel = "t / τ"
			if j > 0 {
				p.YLabel = ""
			}
			if i > 0 || j > 0 {
				p.Legend = NoLegend
				for k := range p.Curves {
					p.Curves[k].Label = ""
				}
			}
		}
	}
	fig.Title = iclIWLTitle(runs[cs[0]])
	if len(finite) > 0 {
		fig.Caption = "Thick, solid: the exact population flow until converged. Thin, dashed: training on sampled sequences, to the dotted line (the paper's 4001 epochs)."
	}
	fig.Height = vg.Length(0.8+2.4*float64(len(fig.Grid))) * vg.Inch
	fig.MinWidth, fig.MinHeight = 6*vg.Inch, vg.Length(1+2*float64(len(fig.Grid)))*vg.Inch
	return fig, nil
}

// openByICL opens the outputs at paths by their -icl; trained says they
// must be training runs (else runs of the exact flow with test losses).
func openByICL(paths []string, trained bool) (map[float64]*file, error) {
	out := map[float64]*file{}
	for _, path := range paths {
		f, err := open(path)
		if err != nil {
			return nil, err
		}
		switch {
		case f.kind != "run" || f.trained != trained:
			return nil, fmt.Errorf("%s: want the output of linattn %s", path, map[bool]string{false: "run", true: "train"}[trained])
		case !f.Has(output.TestICL) || !f.Has(output.TestIWL):
			return nil, fmt.Errorf("%s has no test losses: want -layer full (or -icl below 1)", path)
		}
		c := 1.0
		if f.spec.Given("icl") {
			c = f.spec.ICL
		}
		if _, dup := out[c]; dup {
			return nil, fmt.Errorf("%s: a second output with -icl %g", path, c)
		}
		out[c] = f
	}
	return out, nil
}

// iclIWLPanel is one fraction c: the exact curves thick, the training
// run's thin, and the training's final time as a line; it returns the
// time range drawn.
func iclIWLPanel(exact, trained *file, c float64) (*Panel, Range, error) {
	p := &Panel{Title: fmt.Sprintf("c = %g: %.0f%% fixed tasks", c, 100*(1-c)), YLabel: "loss", Legend: TopRight}
	add := func(f *file, thin bool) (Range, error) {
		t, _, err := f.Floats(output.Times, -1)
		if err != nil {
			return Range{}, err
		}
		names := []string{output.Loss, output.TestICL, output.TestIWL}
		labels := []string{"training loss", "in-context test", "in-weight test"}
		for k, name := range names {
			y, _, err := f.Floats(name, len(t))
			if err != nil {
				return Range{}, err
			}
			x, y, _ := onAxis(t, y, true)
			label := labels[k]
			if thin {
				label = "" // the colours say which loss; the legend's last two entries which kind
			}
			p.Curves = append(p.Curves, Curve{Label: label, X: x, Y: y, Color: []color.Color{black, okabeIto[2], okabeIto[4]}[k], Thin: thin, Dashed: thin})
		}
		lo, hi := dataRange(true, t)
		return Range{lo, hi}, nil
	}
	r, err := add(exact, false)
	if err != nil || trained == nil {
		return p, r, err
	}
	tr, err := add(trained, true)
	if err != nil {
		return nil, r, err
	}
	// The two kinds of line, as legend entries of their own, in grey: the
	// colours are the losses'.
	p.Curves = append(p.Curves, Curve{Label: "exact flow", Color: refGray},
		Curve{Label: fmt.Sprintf("sampled, P = %d", trained.spec.P), Color: refGray, Thin: true, Dashed: true})
	p.VLines = append(p.VLines, RefLine{Value: tr.Max})
	return p, Range{math.Min(r.Min, tr.Min), math.Max(r.Max, tr.Max)}, nil
}

// TransientICL draws the exact in-context test loss of runs under fixed
// tasks (linattn run -layer full -icl C -tasks K): one panel per number K
// of fixed tasks, a curve per fraction c, coloured by c. It shows whether
// in-context learning is transient: whether the loss rises again after
// its first drop.
func TransientICL(paths []string) (*Figure, error) {
	byK := map[int][]*file{}
	for _, path := range paths {
		f, err := open(path)
		if err != nil {
			return nil, err
		}
		if f.kind != "run" || f.trained || !f.Has(output.TestICL) {
			return nil, fmt.Errorf("%s: want the output of linattn run -layer full with its test losses", path)
		}
		byK[f.spec.Tasks] = append(byK[f.spec.Tasks], f)
	}
	ks := make([]int, 0, len(byK))
	for k := range byK {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	fig := &Figure{Width: 2 * columnWidth, Height: 5.6 * vg.Inch, Heights: []float64{1, 1},
		MinWidth: 6 * vg.Inch, MinHeight: 5 * vg.Inch}
	var top, bottom []*Panel
	for i, k := range ks {
		p, rise, err := transientPanels(byK[k], k)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			p.YLabel, rise.YLabel, p.Legend = "", "", NoLegend
		}
		top, bottom = append(top, p), append(bottom, rise)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range top {
		for _, c := range p.Curves {
			l, h := dataRange(true, c.X)
			lo, hi = math.Min(lo, l), math.Max(hi, h)
		}
	}
	for i := range top {
		top[i].XRange, bottom[i].XRange = Range{lo, hi}, Range{lo, hi}
	}
	fig.Grid = [][]*Panel{top, bottom}
	if len(ks) > 0 {
		f := byK[ks[0]][0]
		fig.Title = "in-context test loss under fixed tasks (exact flow): " +
			strings.Join(problemParts(f, f.spec.D, f.spec.H, f.spec.R, f.spec.Model == flow.Merged, []string{"icl", "tasks"}), ", ")
	}
	return fig, nil
}

// transientPanels are the in-context test loss of the runs with K fixed
// tasks, a curve per c, and below it how far it has risen since its first
// drop: L(t) − min_{s ≤ t} L(s), from where it first falls below half-way
// to its least value (log scale: zero is not drawn).
func transientPanels(runs []*file, k int) (loss, rise *Panel, err error) {
	sort.Slice(runs, func(i, j int) bool { return runs[i].spec.ICL < runs[j].spec.ICL })
	loss = &Panel{Title: fmt.Sprintf("K = %d fixed tasks", k), YLabel: "in-context test loss", XLog: true, HideXLabels: true, Legend: TopRight}
	rise = &Panel{YLabel: "rise since drop", XLabel: "t / τ", XLog: true, YLog: true, YRange: Range{1e-7, 0.1}}
	for i, f := range runs {
		t, _, err := f.Floats(output.Times, -1)
		if err != nil {
			return nil, nil, err
		}
		y, _, err := f.Floats(output.TestICL, len(t))
		if err != nil {
			return nil, nil, err
		}
		c := categorical(i, len(runs))
		x, yy, _ := onAxis(t, y, true)
		loss.Curves = append(loss.Curves, Curve{Label: fmt.Sprintf("c = %g", f.spec.ICL), X: x, Y: yy, Color: c})
		rx, ry := riseSinceDrop(t, y)
		rise.Curves = append(rise.Curves, Curve{X: rx, Y: ry, Color: c})
	}
	return loss, rise, nil
}

// riseSinceDrop returns, from the first time y falls below half-way
// between y[0] and its least value, the points where it stands above its
// running minimum, and by how much.
func riseSinceDrop(t, y []float64) (xs, ys []float64) {
	least := y[0]
	for _, v := range y {
		least = math.Min(least, v)
	}
	half := 0.5 * (y[0] + least)
	run := math.Inf(1)
	for i, v := range y {
		if run == math.Inf(1) && v > half {
			continue
		}
		run = math.Min(run, v)
		if d := v - run; d > 0 && t[i] > 0 {
			xs, ys = append(xs, t[i]), append(ys, d)
		}
	}
	return xs, ys
}

// iclIWLTitle names the problem of the sweep's runs.
func iclIWLTitle(f *file) string {
	return "in-context against in-weight learning, exact flow: " + problemTitle(f, f.spec.D, f.spec.H, f.spec.R, f.spec.Model == flow.Merged)
}
