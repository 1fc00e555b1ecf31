package figures

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/theory"
)

// DepthRuns are the outputs the depth figure draws (linattn figures
// depth; docs/math.md, "Depth").
type DepthRuns struct {
	// Iso are runs in Bordelon et al.'s isotropic setting (-model merged
	// -H 1 -white 1/D, several -N and -layers, tied or not), converged.
	Iso []string
	// Curves are runs of one problem at -layers 1, 2, … (the paper's D = 4
	// example).
	Curves []string
	// Tasks are runs in Raventós et al.'s setting with the reduced stack
	// (-icl 0 -tasks K -task-draw gaussian, several K and -layers), and
	// Fresh the same stacks on fresh tasks (-icl 1), one per depth.
	Tasks, Fresh []string
}

// Depth draws (a) the converged in-context loss of the exact flow in the
// isotropic setting against α = N/D beside Bordelon et al.'s D → ∞ loss
// of L steps of gradient descent with the best common step, and with the
// best step per layer; (b) the loss curves of one problem at each depth
// with their drops; (c) in Raventós et al.'s setting the converged
// in-context error of each depth against the number K of pretraining
// tasks, beside ridge and the dMMSE predictor of the K tasks (Monte
// Carlo, mc).
func Depth(runs DepthRuns, mc ReferenceMC) (*Figure, error) {
	a, capA, err := depthIsoPanel(runs.Iso)
	if err != nil {
		return nil, err
	}
	b, err := depthCurvesPanel(runs.Curves)
	if err != nil {
		return nil, err
	}
	c, capC, err := depthTasksPanel(runs.Tasks, runs.Fresh, mc)
	if err != nil {
		return nil, err
	}
	fig := &Figure{Title: "depth: stacks of L linear-attention layers, L steps of preconditioned gradient descent",
		Grid: [][]*Panel{{a, b, c}}, Width: 3 * columnWidth, Height: 4.2 * vg.Inch, MinWidth: 9.5 * vg.Inch, MinHeight: 3.8 * vg.Inch,
		Caption: capA + " " + capC}
	return fig, nil
}

// depthColor is the colour of depth L: blue, vermillion, orange, black,
// apart from ridge's green and dMMSE's purple.
func depthColor(l int) color.Color {
	return [...]color.Color{okabeIto[0], okabeIto[1], okabeIto[4], okabeIto[6]}[(l-1)%4]
}

// isoRun is a converged run of the isotropic setting.
type isoRun struct {
	alpha  float64
	layers int
	tied   bool
	final  float64
	d, n   int
}

func openIsoRuns(paths []string) ([]isoRun, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no isotropic runs: want outputs of linattn run -model merged -H 1 -white 1/D -layers L")
	}
	var out []isoRun
	for _, path := range paths {
		f, err := open(path)
		if err != nil {
			return nil, err
		}
		sp := f.spec
		if f.kind != "run" || f.trained || sp.White == 0 || math.Abs(sp.White*float64(sp.D)-1) > 1e-12 || !paperLaw(f) {
			return nil, fmt.Errorf("%s: want linattn run in the isotropic setting: -white 1/D on the paper's task law", path)
		}
		loss, _, err := f.Floats(output.Loss, -1)
		if err != nil {
			return nil, err
		}
		out = append(out, isoRun{alpha: float64(sp.N) / float64(sp.D), layers: max(1, sp.Layers), tied: sp.Tie,
			final: loss[len(loss)-1], d: sp.D, n: sp.N})
	}
	return out, nil
}

// depthIsoPanel is panel (a).
func depthIsoPanel(paths []string) (*Panel, string, error) {
	rs, err := openIsoRuns(paths)
	if err != nil {
		return nil, "", err
	}
	p := &Panel{Title: "(a) isotropic setting, converged", XLabel: "α = N/D", YLabel: "in-context loss", XLog: true, YLog: true, Legend: BottomLeft}
	depths, alphas := map[int]bool{}, map[float64]bool{}
	for _, r := range rs {
		depths[r.layers], alphas[r.alpha] = true, true
	}
	as := slices.Sorted(maps.Keys(alphas))
	lo, hi := as[0], as[len(as)-1]
	for _, a := range as { // every α run, labelled
		p.XTicks = append(p.XTicks, Tick{Value: a, Label: strconv.FormatFloat(a, 'g', 3, 64)})
	}
	ls := slices.Sorted(maps.Keys(depths))
	for _, l := range ls {
		col := depthColor(l)
		var xs, common, steps []float64
		for k := 0; k <= 64; k++ {
			alpha := lo * math.Pow(hi/lo, float64(k)/64)
			_, c, err := theory.IsotropicGD{Layers: l, Alpha: alpha}.Optimum()
			if err != nil {
				return nil, "", err
			}
			_, s, err := theory.IsotropicGD{Layers: l, Alpha: alpha}.OptimumSteps()
			if err != nil {
				return nil, "", err
			}
			xs, common, steps = append(xs, alpha), append(common, c), append(steps, s)
		}
		p.Curves = append(p.Curves, Curve{Label: fmt.Sprintf("L = %d", l), X: xs, Y: common, Color: col})
		if l > 1 {
			p.Curves = append(p.Curves, Curve{X: xs, Y: steps, Color: col, Dashed: true})
		}
		for _, tied := range []bool{false, true} {
			pt := Points{Color: col, Open: tied}
			for _, r := range rs {
				if r.layers == l && r.tied == tied {
					pt.X, pt.Y = append(pt.X, r.alpha), append(pt.Y, r.final)
				}
			}
			if len(pt.X) > 0 {
				p.Points = append(p.Points, pt)
			}
		}
	}
	caption := fmt.Sprintf("(a) x ~ N(0, I/D), w ~ N(0, I), D = %d: exact flow until settled, untied (filled) and tied (open), beside the D → ∞ loss of L steps of gradient descent with the best common step (Bordelon et al., solid) and with the best step per layer (dashed: 1/(1 + α + … + α^L)).", rs[0].d)
	return p, caption, nil
}

// depthCurvesPanel is panel (b): each depth's loss against time, the
// drops marked.
func depthCurvesPanel(paths []string) (*Panel, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no runs for the loss curves: want linattn run -layers L")
	}
	p := &Panel{Title: "(b) the paper's D = 4 example", XLabel: "t / τ", YLabel: "loss", XLog: true, Legend: TopRight}
	type curve struct {
		l       int
		t, loss []float64
		drops   []float64
	}
	var cs []curve
	for _, path := range paths {
		f, err := open(path)
		if err != nil {
			return nil, err
		}
		if f.kind != "run" || f.trained {
			return nil, fmt.Errorf("%s: want the output of linattn run -layers L", path)
		}
		c := curve{l: max(1, f.spec.Layers)}
		if c.t, _, err = f.Floats(output.Times, -1); err != nil {
			return nil, err
		}
		if c.loss, _, err = f.Floats(output.Loss, len(c.t)); err != nil {
			return nil, err
		}
		if c.drops, _, err = f.Floats(output.Transitions, -1); err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].l < cs[j].l })
	for _, c := range cs {
		col := depthColor(c.l)
		t, loss, _ := onAxis(c.t, c.loss, true)
		p.Curves = append(p.Curves, Curve{Label: fmt.Sprintf("L = %d: %d drops", c.l, len(c.drops)), X: t, Y: loss, Color: col})
		pt := Points{Color: col}
		for _, td := range c.drops {
			pt.X, pt.Y = append(pt.X, td), append(pt.Y, interpolate(c.t, c.loss, td))
		}
		p.Points = append(p.Points, pt)
	}
	return p, nil
}

// depthTasksPanel is panel (c): Raventós et al.'s setting by depth.
func depthTasksPanel(tasks, fresh []string, mc ReferenceMC) (*Panel, string, error) {
	byDepth := map[int][]string{}
	for _, path := range tasks {
		f, err := open(path)
		if err != nil {
			return nil, "", err
		}
		byDepth[max(1, f.spec.Layers)] = append(byDepth[max(1, f.spec.Layers)], path)
	}
	if len(byDepth) == 0 {
		return nil, "", fmt.Errorf("no task runs: want outputs of linattn run -icl 0 -tasks K -layers L")
	}
	p := &Panel{Title: "(c) Raventós et al.'s setting, converged", XLabel: "K pretraining tasks", YLabel: "in-context error E(y − ŷ)²",
		XLog: true, YLog: true, Legend: Outside}
	var sentences []string
	var ridge theory.Estimate
	var lo, hi float64
	for _, l := range slices.Sorted(maps.Keys(byDepth)) {
		rs, err := openTaskRuns(byDepth[l], flow.ReducedLayer)
		if err != nil {
			return nil, "", err
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].k < rs[j].k })
		col := depthColor(l)
		pt := Points{Label: fmt.Sprintf("L = %d, exact flow", l), Color: col}
		for _, r := range rs {
			pt.X, pt.Y = append(pt.X, float64(r.k)), append(pt.Y, r.finICL)
		}
		p.Points = append(p.Points, pt)
		p.Curves = append(p.Curves, Curve{X: pt.X, Y: pt.Y, Color: col, Thin: true})
		if ridge.Mean == 0 { // the references, once: every depth has the same tasks
			r0 := rs[0]
			s := theory.Setting{D: r0.d, N: r0.n, TokenVar: r0.trace / float64(r0.d), NoiseVar: r0.noise}
			rg, err := theory.NewRidge(r0.noise)
			if err != nil {
				return nil, "", err
			}
			if ridge, err = theory.ExpectedError(s, rg, nil, mc.Samples, mc.Seed); err != nil {
				return nil, "", err
			}
			dm, err := dmmseErrors(s, rs, mc)
			if err != nil {
				return nil, "", err
			}
			dmp := Points{Label: "dMMSE of the K tasks", Color: okabeIto[3], Square: true}
			for i, r := range rs {
				dmp.X, dmp.Y = append(dmp.X, float64(r.k)), append(dmp.Y, dm[i].Mean)
				dmp.Lo, dmp.Hi = append(dmp.Lo, dm[i].Mean-2*dm[i].StdErr), append(dmp.Hi, dm[i].Mean+2*dm[i].StdErr)
			}
			p.Points = append(p.Points, dmp)
			lo, hi = dataRange(true, pt.X)
			p.XTicks = powerTicks(rs)
		}
		last := rs[len(rs)-1]
		sentences = append(sentences, fmt.Sprintf("L = %d reaches %.3g at K = %d (%.2f× ridge's)", l, last.finICL, last.k, last.finICL/ridge.Mean))
		if limit, err := depthFresh(fresh, l, last); err == nil {
			p.Curves = append(p.Curves, Curve{X: []float64{lo, hi}, Y: []float64{limit, limit}, Color: col, Dashed: true})
		} else if len(fresh) > 0 {
			return nil, "", err
		}
	}
	p.Bands = []Band{{X: []float64{lo, hi}, Lo: []float64{ridge.Mean - 2*ridge.StdErr, ridge.Mean - 2*ridge.StdErr},
		Hi: []float64{ridge.Mean + 2*ridge.StdErr, ridge.Mean + 2*ridge.StdErr}, Color: okabeIto[2]}}
	p.Curves = append(p.Curves, Curve{Label: "ridge on the context", X: []float64{lo, hi}, Y: []float64{ridge.Mean, ridge.Mean}, Color: okabeIto[2]})
	caption := fmt.Sprintf("(c) D = 8, N = 16, x ~ N(0, I), σ² = %g, K tasks N(0, I): the stack of reduced layers (merged, H = 1), dashed on fresh tasks; ridge %.3g, ±2 s.e. by Monte Carlo: %s.",
		0.25, ridge.Mean, strings.Join(sentences, "; "))
	return p, caption, nil
}

// powerTicks labels the K = 2^{4j} among the runs.
func powerTicks(rs []*taskRun) []Tick {
	var ticks []Tick
	for _, r := range rs {
		if e := int(math.Round(math.Log2(float64(r.k)))); 1<<e == r.k && e%4 == 0 {
			ticks = append(ticks, Tick{Value: float64(r.k), Label: fmt.Sprintf("2^%d", e)})
		}
	}
	return ticks
}

// depthFresh returns the final in-context loss of the fresh-task run of
// depth l among paths, on the problem of r.
func depthFresh(paths []string, l int, r *taskRun) (float64, error) {
	for _, path := range paths {
		f, err := open(path)
		if err != nil {
			return 0, err
		}
		if max(1, f.spec.Layers) != l {
			continue
		}
		if f.kind != "run" || !f.spec.InContext() || !f.Has(output.TestICL) || f.spec.D != r.d || f.spec.N != r.n || f.spec.Noise != r.noise {
			return 0, fmt.Errorf("%s: want linattn run -icl 1 -layers %d on the problem of %s", path, l, r.path)
		}
		y, _, err := f.Floats(output.TestICL, -1)
		if err != nil {
			return 0, err
		}
		return y[len(y)-1], nil
	}
	return 0, fmt.Errorf("no fresh-task run of %d layers", l)
}
