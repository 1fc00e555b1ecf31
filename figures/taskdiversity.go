package figures

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/theory"

	"gonum.org/v1/plot/vg"
)

// taskRun is a run of Lu et al.'s layer under K fixed tasks: its sizes,
// its law and its in-context and in-distribution test losses.
type taskRun struct {
	path          string
	d, n, k       int
	seed          uint64
	noise, trace  float64
	t, icl, idg   []float64
	finICL, finID float64
}

// openTaskRuns opens the outputs at paths as runs of the layer (labelkey:
// Lu et al.'s; reduced: a stack's) on a white Λ with every training sequence labeled by one of K fixed
// tasks (linattn run -layer labelkey -icl 0 -tasks K), all of one D and
// one label noise: the problem of Lu et al.'s theory.
func openTaskRuns(paths []string, layer flow.Layer) ([]*taskRun, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no runs: want outputs of linattn run -layer %s -icl 0 -tasks K", layer)
	}
	var runs []*taskRun
	for _, path := range paths {
		f, err := open(path)
		if err != nil {
			return nil, err
		}
		if f.kind != "run" || f.trained || f.spec.Layer != layer || !f.spec.Given("icl") || f.spec.ICL != 0 ||
			!f.Has(output.TestICL) || !f.Has(output.TestIDG) {
			return nil, fmt.Errorf("%s: want the output of linattn run -layer %s -icl 0 -tasks K", path, layer)
		}
		r := &taskRun{path: path, d: f.spec.D, n: f.spec.N, k: f.spec.Tasks, seed: f.spec.DataSeed, noise: f.spec.Noise}
		lam, _, err := f.Floats(output.Eigvals, r.d)
		if err != nil {
			return nil, err
		}
		for _, l := range lam {
			r.trace += l
			if l != lam[0] {
				return nil, fmt.Errorf("%s: Λ is not white: Lu et al.'s theory is for Λ = C·I", path)
			}
		}
		if r.t, _, err = f.Floats(output.Times, -1); err != nil {
			return nil, err
		}
		if err := f.vectors([]string{output.TestICL, output.TestIDG}, &r.icl, &r.idg); err != nil {
			return nil, err
		}
		if len(r.icl) != len(r.t) || len(r.idg) != len(r.t) || len(r.t) == 0 {
			return nil, fmt.Errorf("%s: test losses and times of different lengths", path)
		}
		r.finICL, r.finID = r.icl[len(r.icl)-1], r.idg[len(r.idg)-1]
		if len(runs) > 0 && (r.d != runs[0].d || r.noise != runs[0].noise || r.trace != runs[0].trace) {
			return nil, fmt.Errorf("%s: D = %d, σ² = %g, tr Λ = %g; %s has D = %d, σ² = %g, tr Λ = %g: want one problem",
				path, r.d, r.noise, r.trace, runs[0].path, runs[0].d, runs[0].noise, runs[0].trace)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// luLimit returns Lu et al.'s D → ∞ errors e_ICL and e_IDG at κ for the
// problem of r (its α = N/D, ρ = σ²/tr Λ, τ = ∞), in r's units
// (theory.LuScale; docs/math.md, "Asymptotic theory (Lu et al.)").
func (r *taskRun) luLimit(kappa float64) (icl, idg float64, err error) {
	p, scale, err := theory.LuScale(r.d, r.n, 0, r.noise, r.trace)
	if err != nil {
		return 0, 0, err
	}
	p.Kappa = kappa
	if icl, err = theory.LuICL(p); err != nil {
		return 0, 0, err
	}
	if idg, err = theory.LuIDG(p); err != nil {
		return 0, 0, err
	}
	return scale * icl, scale * idg, nil
}

// kappa is K/D.
func (r *taskRun) kappa() float64 { return float64(r.k) / float64(r.d) }

// TaskDiversity draws the converged exact flow of Lu et al.'s layer against
// their D → ∞ theory (issue 29; docs/math.md, "Task diversity: the exact
// flow against the asymptotic theory"). paths are outputs of linattn run
// -layer labelkey -icl 0 -tasks K on one white Λ and one label noise, for
// several K, N and task draws (-data-seed). Top row, a panel per α = N/D:
// the final in-context error e_ICL, in-distribution error e_IDG and their
// difference g_task against κ = K/D, the mean over the draws with bars from
// the least to the largest, and Lu et al.'s limit (theory.LuICL, LuIDG at
// τ = ∞) as lines. Bottom row, at the largest α: e_ICL(t), e_IDG(t) and
// g_task(t) of the first draw at the κ nearest 0.2, 1 and 5 (below, near
// and above the threshold κ = 1 of α → ∞), each with its limit dashed.
func TaskDiversity(paths []string) (*Figure, error) {
	runs, err := openTaskRuns(paths, flow.LabelKeyLayer)
	if err != nil {
		return nil, err
	}
	byN, ns := groupRuns(runs, func(r *taskRun) int { return r.n })
	var top []*Panel
	for i, n := range ns {
		p, err := kappaPanel(byN[n])
		if err != nil {
			return nil, err
		}
		if i > 0 {
			p.YLabel, p.Legend = "", NoLegend
			for k := range p.Curves {
				p.Curves[k].Label = ""
			}
			for k := range p.Points {
				p.Points[k].Label = ""
			}
		}
		top = append(top, p)
	}
	bottom, err := dynamicsPanels(byN[ns[len(ns)-1]])
	if err != nil {
		return nil, err
	}
	r := runs[0]
	fig := &Figure{Width: 2 * columnWidth, Height: 6 * vg.Inch, MinWidth: 6 * vg.Inch, MinHeight: 5 * vg.Inch,
		Grid: [][]*Panel{top, bottom}}
	fig.Title = fmt.Sprintf("task diversity, exact flow of Lu et al.'s layer (label-key, merged, H = 1): D = %d, ρ = %g, tasks N(0, I)",
		r.d, r.noise/r.trace)
	fig.Caption = fmt.Sprintf("Top: converged flow, mean over %d task draws (bars: least to largest); lines: Lu et al.'s D → ∞ limit (τ = ∞). "+
		"Bottom: the dynamics at α = %g, one draw; dashed: the limit.", draws(runs), float64(ns[len(ns)-1])/float64(r.d))
	return fig, nil
}

// draws is the largest number of task draws of one (N, K).
func draws(runs []*taskRun) int {
	count := map[[2]int]int{}
	most := 0
	for _, r := range runs {
		key := [2]int{r.n, r.k}
		count[key]++
		most = max(most, count[key])
	}
	return most
}

// errorColors are the colours of e_ICL, e_IDG and g_task.
var errorColors = []color.Color{okabeIto[1], okabeIto[0], okabeIto[2]}

// kappaPanel is one α: the final errors against κ, averaged over the task
// draws of each K, with Lu et al.'s limit through them.
func kappaPanel(runs []*taskRun) (*Panel, error) {
	byK, ks := groupRuns(runs, func(r *taskRun) int { return r.k })
	r0 := runs[0]
	p := &Panel{Title: fmt.Sprintf("α = N/D = %g", float64(r0.n)/float64(r0.d)), XLabel: "κ = K/D", YLabel: "test error",
		XLog: true, YLog: true, Legend: BottomLeft}
	labels := []string{"e_ICL (fresh task)", "e_IDG (a training task)", "g_task = e_ICL − e_IDG"}
	pts := make([]Points, 3)
	for j := range pts {
		pts[j] = Points{Label: labels[j], Color: errorColors[j]}
	}
	for _, k := range ks {
		for j := range pts {
			mean, lo, hi := spreadOf(byK[k], j)
			if lo <= 0 {
				continue // a log axis cannot show it
			}
			pts[j].X, pts[j].Y = append(pts[j].X, byK[k][0].kappa()), append(pts[j].Y, mean)
			pts[j].Lo, pts[j].Hi = append(pts[j].Lo, lo), append(pts[j].Hi, hi)
		}
	}
	p.Points = pts
	lo, hi := dataRange(true, pts[0].X)
	const n = 200
	curves := make([]Curve, 3)
	for j := range curves {
		curves[j] = Curve{Color: errorColors[j]}
	}
	curves[0].Label = "D → ∞ (Lu et al.)"
	for i := range n {
		kappa := lo * math.Pow(hi/lo, float64(i)/(n-1))
		icl, idg, err := r0.luLimit(kappa)
		if err != nil {
			return nil, err
		}
		for j, v := range []float64{icl, idg, icl - idg} {
			curves[j].X, curves[j].Y = append(curves[j].X, kappa), append(curves[j].Y, v)
		}
	}
	p.Curves = curves
	return p, nil
}

// spreadOf returns the mean, least and largest over runs of the final
// e_ICL (j = 0), e_IDG (1) or g_task (2).
func spreadOf(runs []*taskRun, j int) (mean, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range runs {
		v := []float64{r.finICL, r.finID, r.finICL - r.finID}[j]
		mean += v / float64(len(runs))
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return mean, lo, hi
}

// dynamicsPanels are e_ICL(t), e_IDG(t) and g_task(t) of the first task
// draw at the κ nearest 0.2, 1 and 5 (on a log scale), each with its D → ∞
// limit dashed.
func dynamicsPanels(runs []*taskRun) ([]*Panel, error) {
	chosen := nearestKappas(runs, []float64{0.2, 1, 5})
	names := []string{"e_ICL(t): fresh task", "e_IDG(t): a training task", "g_task(t) = e_ICL − e_IDG"}
	panels := make([]*Panel, 3)
	for j := range panels {
		panels[j] = &Panel{Title: names[j], XLabel: "t / τ", XLog: true, YLog: j < 2, Legend: NoLegend}
	}
	panels[0].YLabel, panels[0].Legend = "test error", TopRight
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range chosen {
		c := ordered(i, len(chosen))
		icl, idg, err := r.luLimit(r.kappa())
		if err != nil {
			return nil, err
		}
		g := make([]float64, len(r.t))
		for s := range g {
			g[s] = r.icl[s] - r.idg[s]
		}
		for j, y := range [][]float64{r.icl, r.idg, g} {
			x, yy, _ := onAxis(r.t, y, true)
			label := ""
			if j == 0 {
				label = fmt.Sprintf("κ = %.3g (K = %d)", r.kappa(), r.k)
			}
			limit := []float64{icl, idg, icl - idg}[j]
			panels[j].Curves = append(panels[j].Curves, Curve{Label: label, X: x, Y: yy, Color: c},
				Curve{X: []float64{x[0], x[len(x)-1]}, Y: []float64{limit, limit}, Color: c, Dashed: true})
		}
		l, h := dataRange(true, r.t)
		lo, hi = math.Min(lo, l), math.Max(hi, h)
	}
	for _, p := range panels {
		p.XRange = Range{lo, hi}
	}
	return panels, nil
}

// nearestKappas returns, for each target, the run of the first task draw
// (least data seed) whose κ is nearest the target on a log scale, each K
// once, in increasing κ.
func nearestKappas(runs []*taskRun, targets []float64) []*taskRun {
	first := map[int]*taskRun{}
	for _, r := range runs {
		if f, ok := first[r.k]; !ok || r.seed < f.seed {
			first[r.k] = r
		}
	}
	var out []*taskRun
	used := map[int]bool{}
	for _, target := range targets {
		var best *taskRun
		for _, r := range first {
			d := math.Abs(math.Log(r.kappa() / target))
			if best == nil || d < math.Abs(math.Log(best.kappa()/target)) || (d == math.Abs(math.Log(best.kappa()/target)) && r.k < best.k) {
				best = r
			}
		}
		if !used[best.k] {
			used[best.k] = true
			out = append(out, best)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	return out
}

// groupRuns groups runs by key, returning the groups and their keys in
// increasing order.
func groupRuns(runs []*taskRun, key func(*taskRun) int) (map[int][]*taskRun, []int) {
	by := map[int][]*taskRun{}
	for _, r := range runs {
		by[key(r)] = append(by[key(r)], r)
	}
	keys := make([]int, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return by, keys
}
