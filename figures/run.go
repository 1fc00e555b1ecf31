package figures

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

// runData is what the figures of a run file draw (docs/cli.md, "run").
type runData struct {
	t, loss   []float64 // (S,)
	ts        []float64 // the times of the states (S'): state_t, or t
	v         []float64 // (S', H): an untied stack's (S', L, H) as L·H heads
	alignment []float64 // key_alignment (S, H, R, D), separate model (a stack's heads as v's)
	keyNorms  []float64 // (H, R): ‖k_{i,r}‖² at the last state, separate model
	m         []float64 // M (S, D, D), or each layer's (S, L, D, D)
	lambda    []float64 // Lambda (D, D)
	eigvecs   []float64 // (D, D), columns e_d
	eigvals   []float64 // (D,)
	levels    []float64 // plateaus (D+1,): L(M_m); under another law than the paper's those read off the run
	fixed     bool      // fixed tasks (-icl < 1): the heads learn the tasks too
	readOff   bool      // a law other than the paper's: the plateaus have no theory, levels are read off the run
	trans     []float64 // observed drop times t_m
	transM    []int64   // their m
	h, d, r   int
	merged    bool
	// layers is the number of untied layers whose heads v holds one after
	// the other (1: one layer, or a tied stack's one set).
	layers int
}

func readRun(f *file) (*runData, error) {
	rd := &runData{}
	var err error
	if rd.t, _, err = f.Floats(output.Times, -1); err != nil {
		return nil, err
	}
	s := len(rd.t)
	if s < 2 {
		return nil, fmt.Errorf("%s: %d output time(s), want at least 2", f.path, s)
	}
	if rd.loss, _, err = f.Floats(output.Loss, s); err != nil {
		return nil, err
	}
	rd.ts = rd.t
	if f.Has(output.StateTimes) { // the states at some of the times only
		if rd.ts, _, err = f.Floats(output.StateTimes, -1); err != nil {
			return nil, err
		}
	}
	s = len(rd.ts)
	rd.layers = 1
	lead := []int{s} // the leading axes of the heads' arrays
	if f.spec.Layers > 1 && !f.spec.Tie {
		rd.layers = f.spec.Layers
		lead = append(lead, rd.layers)
	}
	var shape []int
	if rd.v, shape, err = f.Floats(output.Values, append(lead, -1)...); err != nil {
		return nil, err
	}
	rd.h = rd.layers * shape[len(shape)-1]
	if err := f.vectors([]string{output.Eigvals, output.Plateaus, output.Transitions}, &rd.eigvals, &rd.levels, &rd.trans); err != nil {
		return nil, err
	}
	rd.d = len(rd.eigvals)
	rd.fixed, rd.readOff = !f.spec.InContext(), !paperLaw(f) || f.spec.Layers > 1
	if len(rd.levels) != rd.d+1 && !rd.readOff {
		return nil, fmt.Errorf("%s: %d plateau levels for D = %d, want D+1", f.path, len(rd.levels), rd.d)
	}
	if rd.transM, _, err = f.Ints(output.TransitionM, len(rd.trans)); err != nil {
		return nil, err
	}
	d := rd.d
	if rd.m, _, err = f.Floats(output.Map, append(lead, d, d)...); err != nil {
		return nil, err
	}
	if rd.lambda, _, err = f.Floats(output.Covariance, d, d); err != nil {
		return nil, err
	}
	if rd.eigvecs, _, err = f.Floats(output.Eigvecs, d, d); err != nil {
		return nil, err
	}
	rd.merged = f.Has(output.KeyQuery) && !f.Has(output.KeyAlignment)
	if !rd.merged {
		if rd.alignment, shape, err = f.Floats(output.KeyAlignment, append(lead, rd.h/rd.layers, -1, d)...); err != nil {
			return nil, err
		}
		rd.r = shape[len(shape)-2]
		keys, _, err := f.Floats(output.Keys, append(lead, rd.h/rd.layers, rd.r, d)...)
		if err != nil {
			return nil, err
		}
		rd.keyNorms = make([]float64, rd.h*rd.r)
		for i := range rd.keyNorms {
			for _, k := range keys[((s-1)*rd.h*rd.r+i)*d:][:d] {
				rd.keyNorms[i] += k * k
			}
		}
	}
	return rd, nil
}

// runFigure draws a run: the loss with the plateau levels and the drops,
// the value weight of every head and, for the separate model, the
// alignment of each head's keys with the eigenvectors it learns.
func runFigure(f *file, opt Options) (*Figure, error) {
	rd, err := readRun(f)
	if err != nil {
		return nil, err
	}
	log := opt.XScale != "lin"
	fig := &Figure{Title: problemTitle(f, rd.d, rd.h/rd.layers, rd.r, rd.merged), Width: columnWidth, MinWidth: minWidth}
	held := f.meta.Status == "converged"
	x := timeRange(rd.t, log, held)
	heads := learnedHeads(rd)
	lossPanel := runLossPanel(f, rd, log, fig)
	vPanel := valuePanel(rd, heads, log)
	panels := []*Panel{lossPanel}
	if tp := testPanel(f, rd.t, log, fig); tp != nil {
		panels = append(panels, tp)
	}
	panels = append(panels, vPanel)
	if !rd.merged {
		panels = append(panels, alignmentPanel(rd, heads, log))
	}
	for i, p := range panels {
		p.XRange, p.XLog = x, log
		p.HideXLabels = i < len(panels)-1
		if i > 0 {
			p.VLines = dropLines(rd.trans)
		}
		fig.Grid = append(fig.Grid, []*Panel{p})
	}
	panels[len(panels)-1].XLabel = "t / τ"
	fig.Heights = append([]float64{1.5}, slices.Repeat([]float64{1}, len(panels)-1)...)
	fig.Height = vg.Length(0.9+1.45*float64(len(panels))) * vg.Inch
	fig.MinHeight = minHeight(len(panels))
	if vPanel.Legend == Outside {
		// A long legend beside its panel, as at the default width: set
		// above a narrower one it would leave the panel too short for its
		// axis label.
		fig.MinWidth = max(fig.MinWidth, columnWidth)
	}
	_, _, n := onAxis(rd.t, rd.loss, log)
	fig.addNote(droppedNote(n))
	if held {
		holdFinal(panels, x.Max)
		floor := "L_min" // where it is not known, the run stopped at L_lb (flow.System.LossFloor)
		if f.meta.Problem.LMin == nil {
			floor = "L_lb"
		}
		fig.addNote(fmt.Sprintf("converged at t = %.6g (L − %s ≤ %g·(L(0) − %s)): the final state is drawn on, dotted, to the end of the time axis",
			rd.t[len(rd.t)-1], floor, f.spec.Tol, floor))
	}
	return fig, nil
}

// timeRange is the time axis of the output times t: from the first
// positive time on a log axis (0 on a linear one) to the last, and on by a
// twentieth of the axis (matplotlib's default margin), or by a tenth when
// the final state is held there, so that the last drop stands clear of the
// frame and the final plateau shows.
func timeRange(t []float64, log, held bool) Range {
	lo, hi := dataRange(log, t)
	frac := 0.05
	if held {
		frac = 0.1
	}
	if !log {
		lo = math.Min(0, lo)
		return Range{lo, hi + (hi-lo)*frac/(1-frac)}
	}
	if !(hi > lo) {
		return Range{lo, hi}
	}
	return Range{lo, hi * math.Pow(hi/lo, frac/(1-frac))}
}

// holdFinal continues every curve of the panels that ends before end,
// dotted and thin, at its last value: the final state of a converged run,
// where the gradient flow's loss, never increasing and never below L_min,
// stays within the convergence tolerance of its last value.
func holdFinal(panels []*Panel, end float64) {
	for _, p := range panels {
		for _, c := range p.Curves {
			k := len(c.X) - 1
			if k < 0 || c.X[k] >= end || c.Dotted {
				continue
			}
			p.Curves = append(p.Curves, Curve{X: []float64{c.X[k], end}, Y: []float64{c.Y[k], c.Y[k]}, Color: c.Color, Dotted: true, Thin: true})
		}
	}
}

// runLossPanel: the loss against t/τ, the plateau levels L(M_m) that the
// run can reach as dotted lines labelled with m, the observed drops t_m
// marked on the curve and, for the merged model with white Λ, the closed
// form (reduced.MergedWhite, paper eq. attnM-solution).
func runLossPanel(f *file, rd *runData, log bool, fig *Figure) *Panel {
	t, loss, _ := onAxis(rd.t, rd.loss, log)
	// The plateau levels are labelled to the right of the panel and the
	// drops beside their marks, so the panel needs a legend only for a
	// closed form.
	p := &Panel{YLabel: "loss"}
	if f.trained {
		// Training: the loss on the P sequences, and the population flow
		// from the same start on the same times.
		p.Curves = append(p.Curves, Curve{Label: "training (finite data)", X: t, Y: loss, Color: black})
		if fl, err := f.Array(output.FlowLoss, len(rd.t)); err == nil {
			ft, floss, _ := onAxis(rd.t, fl.Float, log)
			p.Curves = append(p.Curves, Curve{Label: "population flow", X: ft, Y: floss, Color: okabeIto[0], Dashed: true})
			p.Legend = BottomLeft
		}
	} else {
		p.Curves = append(p.Curves, Curve{Label: "flow", X: t, Y: loss, Color: black})
	}
	p.HLines = plateauLines(rd.levels, reachableLevels(rd))
	p.Points = append(p.Points, dropMarks(rd.t, rd.loss, rd.trans, rd.transM))
	if cf, ok := mergedClosedForm(f, rd, log); ok {
		p.Curves = append(p.Curves, closedFormCurve(t, cf, f.spec.Balanced))
		p.Legend = BottomLeft
		if !f.spec.Balanced {
			fig.Caption = closedFormNote
			fig.addNote(closedFormNote)
		}
	}
	return p
}

// testPanel draws every test loss a file holds, each with its own legend
// entry, nil without them: the in-context, in-weight and in-distribution
// test losses of a run (exact) or of a training run (on the test
// sequences, solid) beside the population flow's (exact, dashed, which the
// figure's caption says).
func testPanel(f *file, t []float64, log bool, fig *Figure) *Panel {
	p := &Panel{YLabel: "test loss", Legend: BottomLeft}
	add := func(name, label string, c color.Color, dashed bool) {
		if a, err := f.Array(name, len(t)); err == nil {
			x, y, _ := onAxis(t, a.Float, log)
			p.Curves = append(p.Curves, Curve{Label: label, X: x, Y: y, Color: c, Dashed: dashed})
		}
	}
	tests := []struct {
		name, flow, label string
		color             color.Color
	}{
		{output.TestICL, output.FlowTestICL, "in-context", okabeIto[2]},
		{output.TestIWL, output.FlowTestIWL, "in-weight", okabeIto[4]},
		{output.TestIDG, output.FlowTestIDG, "in-distribution", okabeIto[3]},
	}
	for _, ts := range tests {
		add(ts.name, ts.label, ts.color, false)
	}
	if f.trained && f.Has(output.FlowTestICL) {
		for _, ts := range tests {
			add(ts.flow, "", ts.color, true)
		}
		fig.Caption = joinSentences(fig.Caption, "Test losses: solid on the test sequences, dashed of the exact population flow.")
	}
	if len(p.Curves) == 0 {
		return nil
	}
	return p
}

// joinSentences appends sentence b to a.
func joinSentences(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// reachableLevels are the plateaus m the model can visit: 0 … min(D, R·H)
// for the separate model, 0 and D for the merged one; under another law
// than the paper's the plateaus read off the run, all of them.
func reachableLevels(rd *runData) []int {
	if rd.readOff {
		ms := make([]int, len(rd.levels))
		for m := range ms {
			ms[m] = m
		}
		return ms
	}
	if rd.merged {
		return []int{0, rd.d}
	}
	top := min(rd.d, rd.r*rd.h)
	ms := make([]int, top+1)
	for m := range ms {
		ms[m] = m
	}
	return ms
}

// dropMarks are the observed drops (t_m, L(t_m)), labelled t_m.
func dropMarks(t, loss, trans []float64, ms []int64) Points {
	pts := Points{Label: "observed drops", Color: okabeIto[1]}
	for i, tm := range trans {
		pts.X = append(pts.X, tm)
		pts.Y = append(pts.Y, interpolate(t, loss, tm))
		pts.Text = append(pts.Text, "t"+sub(int(ms[i])))
	}
	return pts
}

// dropLines are faint vertical lines at the drops, for the panels below
// the loss.
func dropLines(trans []float64) []RefLine {
	out := make([]RefLine, len(trans))
	for i, tm := range trans {
		out[i] = RefLine{Value: tm}
	}
	return out
}

// mergedClosedForm is the white-Λ closed-form loss of a merged run that
// the file holds (output.LossClosedForm) on the time axis.
func mergedClosedForm(f *file, rd *runData, log bool) ([]float64, bool) {
	if !rd.merged || !f.Has(output.LossClosedForm) {
		return nil, false
	}
	cf, _, err := f.Floats(output.LossClosedForm, len(rd.t))
	if err != nil {
		return nil, false
	}
	_, cf, _ = onAxis(rd.t, cf, log)
	return cf, true
}

// closedFormNote is the caveat of a closed form drawn from a start that
// is not balanced.
const closedFormNote = "The closed form σ(t) (s₀ = ‖v(0)‖²) is exact only from a balanced, aligned start (-balanced); from this start it is an approximation."

// closedFormCurve draws the merged model's closed form in a style of its
// own (bluish green, dash-dotted), saying on the figure when its start is
// not balanced and it is only an approximation.
func closedFormCurve(x, y []float64, balanced bool) Curve {
	label := "closed form σ(t)"
	if !balanced {
		label += " (approximate)"
	}
	return Curve{Label: label, X: x, Y: y, Color: okabeIto[2], Dash: 2}
}

// head describes one head of a run: its index (from 0, as in the arrays;
// the legends number heads from 1, as the paper does), the eigenvectors it
// learned (from 1, from the keys' alignment at the end) or none when its
// value weight stayed small, and its colour.
type head struct {
	index   int
	learned []int
	color   color.Color
}

// learnedHeads finds what each head learned: a head whose final |v| is
// below a twentieth of the largest is dormant; the others learned, one per
// key that grew (‖k_r‖² at least a twentieth of the head's largest: a rank
// of a head that stays small learns nothing), the eigenvectors e_d with
// the largest Σ_r ‖k_r‖²|⟨k̂_r, e_d⟩|² at the end, but none with a twentieth
// of the first's (several keys of a head can learn the same eigenvector).
// Heads are coloured in the order of the first eigenvector they learned.
func learnedHeads(rd *runData) []head {
	s, h, d, r := len(rd.ts), rd.h, rd.d, rd.r
	final := rd.v[(s-1)*h:]
	big := 0.0
	for _, v := range final {
		big = math.Max(big, math.Abs(v))
	}
	heads := make([]head, h)
	var active []int
	for i := range heads {
		heads[i] = head{index: i, color: lightGray}
		if math.Abs(final[i]) < big/20 || big == 0 || rd.merged {
			continue
		}
		norms := rd.keyNorms[i*r : (i+1)*r]
		largest, grown := slices.Max(norms), 0
		weight := make([]float64, d)
		for k, n := range norms {
			if n < largest/20 {
				continue
			}
			grown++
			for e := 0; e < d; e++ {
				a := rd.alignment[(((s-1)*h+i)*r+k)*d+e]
				weight[e] += n * a * a
			}
		}
		order := make([]int, d)
		for e := range order {
			order[e] = e
		}
		sort.SliceStable(order, func(a, b int) bool { return weight[order[a]] > weight[order[b]] })
		var learned []int // at most one per grown key, none a twentieth of the first
		for _, e := range order[:min(grown, d)] {
			if weight[e] >= weight[order[0]]/20 {
				learned = append(learned, e)
			}
		}
		sort.Ints(learned)
		for k := range learned {
			learned[k]++
		}
		heads[i].learned = learned
		active = append(active, i)
	}
	sort.SliceStable(active, func(a, b int) bool { return heads[active[a]].learned[0] < heads[active[b]].learned[0] })
	for rank, i := range active {
		heads[i].color = categorical(rank, len(active))
	}
	if rd.merged {
		for i := range heads {
			heads[i].color = categorical(i, h)
		}
	}
	return heads
}

// valuePanel: the value weight v_i(t) of every head.
func valuePanel(rd *runData, heads []head, log bool) *Panel {
	p := &Panel{YLabel: "value weight vᵢ"}
	dormant := false
	named := namesEigenvectors(rd, heads)
	order := heads // by head, when the legend does not name eigenvectors
	if named {
		order = byEigenvector(heads)
	}
	for _, hd := range order {
		t, v, _ := onAxis(rd.ts, column(rd.v, rd.h, hd.index), log)
		c := Curve{X: t, Y: v, Color: hd.color}
		switch {
		case rd.merged:
		case hd.learned == nil:
			c.Thin = true
			if !dormant {
				c.Label, dormant = "dormant heads", true
			}
		case !named:
			c.Label = rd.headName(hd.index)
		default:
			c.Label = fmt.Sprintf("%s: %s", eigenvectorList(hd.learned), rd.headName(hd.index))
		}
		p.Curves = append(p.Curves, c)
	}
	// Dormant heads first, so the learning heads are drawn over them.
	sort.SliceStable(p.Curves, func(a, b int) bool { return p.Curves[a].Thin && !p.Curves[b].Thin })
	p.thinLegend(maxLegend)
	if p.legendEntries() > 0 {
		p.Legend = TopLeft
		if p.legendEntries() > 5 {
			p.Legend = Outside
		}
	}
	return p
}

// headName names head i: "head i", or in an untied stack "layer ℓ head i".
func (rd *runData) headName(i int) string {
	if rd.layers == 1 {
		return fmt.Sprintf("head %d", i+1)
	}
	per := rd.h / rd.layers
	return fmt.Sprintf("layer %d head %d", i/per+1, i%per+1)
}

// namesEigenvectors reports whether the legend may name the heads by the
// eigenvectors they learned: in context, where each learning head learns
// its own (paper section sec:attnS), and only when no two heads claim the
// same. Under fixed tasks the heads learn the tasks too, and the
// eigenvector a key aligns with best does not say what the head learned.
func namesEigenvectors(rd *runData, heads []head) bool {
	if rd.fixed {
		return false
	}
	seen := map[string]bool{}
	for _, hd := range heads {
		if hd.learned == nil {
			continue
		}
		key := fmt.Sprint(hd.learned)
		if seen[key] {
			return false
		}
		seen[key] = true
	}
	return true
}

// byEigenvector orders the heads by the first eigenvector they learned,
// dormant heads last.
func byEigenvector(heads []head) []head {
	out := append([]head(nil), heads...)
	first := func(h head) int {
		if h.learned == nil {
			return math.MaxInt
		}
		return h.learned[0]
	}
	sort.SliceStable(out, func(a, b int) bool { return first(out[a]) < first(out[b]) })
	return out
}

// alignmentPanel: for each head that learned the eigenvectors S, the
// root-mean-square over its R keys of ‖P_S k̂‖ = (Σ_{d∈S} |⟨k̂, e_d⟩|²)^½,
// the cosine of the angle between a key and span{e_d : d ∈ S}; for R = 1
// it is |⟨k̂, e_d⟩| of the eigenvector the head learns. Dormant heads are
// drawn thin and grey with their best alignment to any one eigenvector.
func alignmentPanel(rd *runData, heads []head, log bool) *Panel {
	s, h, d, r := len(rd.ts), rd.h, rd.d, rd.r
	p := &Panel{YLabel: "key alignment", YRange: Range{0, 1.04}}
	for _, hd := range heads {
		y := make([]float64, s)
		for i := range y {
			var sum float64
			for k := 0; k < r; k++ {
				row := rd.alignment[((i*h+hd.index)*r+k)*d:][:d]
				if hd.learned == nil {
					best := 0.0
					for _, a := range row {
						best = math.Max(best, a)
					}
					sum += best * best
					continue
				}
				for _, e := range hd.learned {
					sum += row[e-1] * row[e-1]
				}
			}
			y[i] = math.Sqrt(sum / float64(r))
		}
		t, y, _ := onAxis(rd.ts, y, log)
		p.Curves = append(p.Curves, Curve{X: t, Y: y, Color: hd.color, Thin: hd.learned == nil})
	}
	// Dormant heads first, so the learning heads are drawn over them.
	sort.SliceStable(p.Curves, func(a, b int) bool { return p.Curves[a].Thin && !p.Curves[b].Thin })
	return p
}

// problemTitle describes the problem of a file in one line.
func problemTitle(f *file, d, h, r int, merged bool) string {
	return strings.Join(problemParts(f, d, h, r, merged, nil), ", ")
}

// problemParts are the parts of problemTitle, without those of the fields
// in skip.
func problemParts(f *file, d, h, r int, merged bool, skip []string) []string {
	model := "separate key–query"
	if merged {
		model = "merged key–query"
	}
	parts := []titlePart{
		{"model", model},
		{"D", fmt.Sprintf("D = %d", d)},
		{"H", fmt.Sprintf("H = %d", h)},
		{"R", fmt.Sprintf("R = %d", r)},
		{"N", fmt.Sprintf("N = %d", f.spec.N)},
	}
	if merged || r == 0 {
		parts[3].field = "skip"
	}
	if f.spec.N == 0 {
		parts[4] = titlePart{"nu", fmt.Sprintf("ν = %.4g", f.meta.Problem.Nu)}
	}
	if f.spec.White > 0 {
		parts = append(parts, titlePart{"white", fmt.Sprintf("Λ = %g·I", f.spec.White)})
		if f.spec.White == 1 {
			parts[len(parts)-1].text = "Λ = I"
		}
	}
	if l := f.spec.Layers; l > 1 {
		text := fmt.Sprintf("%d layers", l)
		if f.spec.Tie {
			text += " tied"
		}
		parts = append(parts, titlePart{"layers", text})
	}
	parts = append(parts, lawParts(f)...)
	var out []string
	for _, p := range parts {
		if p.field != "skip" && !slices.Contains(skip, p.field) {
			out = append(out, p.text)
		}
	}
	return out
}

// titlePart is a part of a figure's title and the field it states.
type titlePart struct{ field, text string }

// paperTask reports whether a file's run is of the paper's reduced layer
// on its task (paperLaw).
func paperTask(f *file) bool {
	return f.spec.Layer == flow.ReducedLayer && paperLaw(f)
}

// paperLaw reports whether a file's run is under the paper's task law,
// whose plateaus L(M_m) the theory gives (law.Data.Standard): every
// sequence in-context, w ~ N(0, I), no label noise.
func paperLaw(f *file) bool {
	sp := f.spec
	return sp.InContext() && sp.Noise == 0 &&
		!sp.Given("task-eigs") && !sp.Given("task-spectrum") && !sp.Given("task-white")
}

// lawParts state the layer and the law of the labels of a run that is not
// the paper's task (docs/cli.md, "The layer and the law"): the layer by
// name, σ², Ω and Ω_test (their eigenvalues, white or power:α, and
// eigenvectors other than the identity), the fraction c in context, and
// the K fixed tasks, drawn (with the data seed and the draw) or given.
func lawParts(f *file) []titlePart {
	if paperTask(f) {
		return nil
	}
	sp := f.spec
	layer := map[flow.Layer]string{flow.ReducedLayer: "reduced layer", flow.FullLayer: "full layer", flow.LabelKeyLayer: "label-key layer"}[sp.Layer]
	parts := []titlePart{{"layer", layer}}
	if sp.Noise > 0 {
		parts = append(parts, titlePart{"noise", fmt.Sprintf("σ² = %g", sp.Noise)})
	}
	for _, c := range []struct{ name, prefix string }{{"Ω", "task"}, {"Ω_test", "test-task"}} {
		if text := covarianceTitle(sp, c.name, c.prefix); text != "" {
			parts = append(parts, titlePart{c.prefix + "-eigs", text})
		}
	}
	if !sp.InContext() {
		parts = append(parts, titlePart{"icl", fmt.Sprintf("c = %g", sp.ICL)})
	}
	if f.Has(output.Tasks) || !sp.InContext() {
		parts = append(parts, titlePart{"tasks", tasksTitle(f)})
	}
	return parts
}

// covarianceTitle names the task covariance (Ω or Ω_test, given by the
// fields of prefix) as the spec gives it: C·I, diag(eigenvalues) or power:α
// (trace D), with eigenvectors other than the identity; empty when not
// given.
func covarianceTitle(sp *spec.Spec, name, prefix string) string {
	var text string
	switch {
	case sp.Given(prefix + "-white"):
		return name + " = " + sp.Text(prefix+"-white") + "·I"
	case sp.Given(prefix + "-eigs"):
		text = name + " = diag(" + strings.ReplaceAll(sp.Text(prefix+"-eigs"), ",", " ") + ")"
	case sp.Given(prefix + "-spectrum"):
		text = name + ": " + sp.Text(prefix+"-spectrum")
	default:
		return ""
	}
	if vecs := sp.Text(prefix + "-eigvecs"); vecs != "" && vecs != "identity" {
		text += " in eigenvectors " + filepath.Base(vecs)
	}
	return text
}

// tasksTitle names the fixed tasks: their number K and whether they were
// drawn (the data seed and the draw) or given (output.ProblemMeta's
// FixedTasks; older files do not say).
func tasksTitle(f *file) string {
	sp := f.spec
	k := sp.Tasks
	if a, err := f.Read(output.Tasks); err == nil && len(a.Shape) == 2 {
		k = a.Shape[0]
	}
	text := fmt.Sprintf("K = %d", k)
	switch f.meta.Problem.FixedTasks {
	case "drawn":
		draw := sp.TaskDraw
		if draw == "" {
			draw = "scaled"
		}
		text += fmt.Sprintf(" drawn from data seed %d (%s)", sp.DataSeed, draw)
	case "given":
		text += " given"
	}
	return text
}
