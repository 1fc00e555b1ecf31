package figures

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/theory"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot/vg"
)

// ReferenceMC sets the Monte Carlo estimates of the reference predictors
// of TaskDiversityRaventos (theory.ExpectedError): Samples contexts for
// ridge and for dMMSE up to 4096 tasks, fewer above, Samples·4096/K but at
// least MinSamples (a dMMSE context costs O(K·D²)); the draws of seed,
// common to both predictors.
type ReferenceMC struct {
	Samples, MinSamples int
	Seed                uint64
}

// samplesAt returns the number of contexts for dMMSE with k tasks.
func (mc ReferenceMC) samplesAt(k int) int {
	return max(mc.MinSamples, min(mc.Samples, mc.Samples*4096/k))
}

// TaskDiversityRaventos draws the in-context error of the exact flow of Lu
// et al.'s layer against the number K of pretraining tasks in the setting
// of Raventós et al. (issue 29; docs/math.md), beside their two reference
// predictors on the same contexts: ridge regression on the context (the
// Bayes predictor for fresh tasks) and the dMMSE predictor of the K tasks
// (the Bayes predictor for the training tasks), both estimated by Monte
// Carlo on fresh tasks (theory.ExpectedError, bars ±2 standard errors).
// runs are outputs of linattn run -layer labelkey -icl 0 -tasks K (one
// per K, tasks N(0, I), their drawn tasks in the output's w0); fresh,
// optional, is the same layer trained on fresh tasks (-icl 1): its
// in-context error, the flow's K → ∞ limit, is a line. The caption states
// the K from which on the flow's in-context error stays within 10% of
// ridge's and of its K → ∞ limit, or that it never does.
func TaskDiversityRaventos(runs []string, fresh string, mc ReferenceMC) (*Figure, error) {
	if mc.Samples < 2 || mc.MinSamples < 2 {
		return nil, fmt.Errorf("figures: ReferenceMC samples %d, %d: must be ≥ 2", mc.Samples, mc.MinSamples)
	}
	rs, err := openTaskRuns(runs, flow.LabelKeyLayer)
	if err != nil {
		return nil, err
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].k < rs[j].k })
	for i := 1; i < len(rs); i++ {
		if rs[i].k == rs[i-1].k || rs[i].n != rs[0].n {
			return nil, fmt.Errorf("%s: want one run per K, all of one N", rs[i].path)
		}
	}
	r0 := rs[0]
	s := theory.Setting{D: r0.d, N: r0.n, TokenVar: r0.trace / float64(r0.d), NoiseVar: r0.noise}
	ridge, err := theory.NewRidge(r0.noise)
	if err != nil {
		return nil, err
	}
	ref, err := theory.ExpectedError(s, ridge, nil, mc.Samples, mc.Seed)
	if err != nil {
		return nil, err
	}
	dm, err := dmmseErrors(s, rs, mc)
	if err != nil {
		return nil, err
	}
	limit := math.NaN()
	if fresh != "" {
		if limit, err = freshLimit(fresh, r0); err != nil {
			return nil, err
		}
	}
	p := raventosPanel(rs, ref, dm, limit)
	fig := &Figure{Width: columnWidth * 1.4, Height: 3.6 * vg.Inch, MinWidth: 4.5 * vg.Inch, MinHeight: 3.4 * vg.Inch,
		Grid: [][]*Panel{{p}}}
	fig.Title = fmt.Sprintf("task diversity in Raventós et al.'s setting: D = %d, N = %d, x ~ N(0, %s), σ² = %g, tasks N(0, I)",
		s.D, s.N, scaledIdentity(s.TokenVar), s.NoiseVar)
	fig.Caption = "Exact flow of Lu et al.'s layer (label-key, merged, H = 1), converged; ridge and dMMSE by Monte Carlo on fresh tasks (±2 s.e.). " +
		within(rs, ref.Mean, "ridge") + " " + within(rs, limit, "its K → ∞ limit")
	return fig, nil
}

// freshLimit returns the final in-context test loss of the run at path,
// the label-key layer trained on fresh tasks in r's problem.
func freshLimit(path string, r *taskRun) (float64, error) {
	f, err := open(path)
	if err != nil {
		return 0, err
	}
	if f.kind != "run" || f.trained || f.spec.Layer != flow.LabelKeyLayer || !f.spec.InContext() || !f.Has(output.TestICL) ||
		f.spec.D != r.d || f.spec.N != r.n || f.spec.Noise != r.noise {
		return 0, fmt.Errorf("%s: want linattn run -layer labelkey -icl 1 on the problem of %s", path, r.path)
	}
	y, _, err := f.Floats(output.TestICL, -1)
	if err != nil || len(y) == 0 {
		return 0, fmt.Errorf("%s: no in-context test loss: %v", path, err)
	}
	return y[len(y)-1], nil
}

// dmmseErrors estimates the in-context error of the dMMSE predictor of
// each run's tasks on fresh tasks, two runs at a time (each estimate is
// seeded, so the result does not depend on the order).
func dmmseErrors(s theory.Setting, rs []*taskRun, mc ReferenceMC) ([]theory.Estimate, error) {
	out := make([]theory.Estimate, len(rs))
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = dmmseError(s, r, mc)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dmmseError estimates the error of the dMMSE predictor of r's tasks on
// fresh tasks.
func dmmseError(s theory.Setting, r *taskRun, mc ReferenceMC) (theory.Estimate, error) {
	f, err := open(r.path)
	if err != nil {
		return theory.Estimate{}, err
	}
	w, _, err := f.Floats(output.Tasks, r.k, r.d)
	if err != nil {
		return theory.Estimate{}, err
	}
	tasks := mat.NewDense(r.k, r.d, w)
	dm, err := theory.NewDMMSE(tasks, r.noise)
	if err != nil {
		return theory.Estimate{}, err
	}
	return theory.ExpectedError(s, dm, nil, mc.samplesAt(r.k), mc.Seed)
}

// raventosPanel draws the flow's in-context and in-distribution errors
// against K, ridge's as a line with its ±2 s.e. band, dMMSE's as points
// with bars, and the flow's K → ∞ limit (NaN: none) as a dashed line.
func raventosPanel(rs []*taskRun, ref theory.Estimate, dm []theory.Estimate, limit float64) *Panel {
	p := &Panel{XLabel: "K pretraining tasks", YLabel: "test error E(y − ŷ)²", XLog: true, YLog: true, Legend: TopRight}
	ex := Points{Label: "exact flow, e_ICL (fresh task)", Color: okabeIto[1]}
	idg := Points{Label: "exact flow, e_IDG (a training task)", Color: okabeIto[0], Open: true}
	dmp := Points{Label: "dMMSE of the K tasks", Color: okabeIto[3], Square: true}
	for i, r := range rs {
		x := float64(r.k)
		ex.X, ex.Y = append(ex.X, x), append(ex.Y, r.finICL)
		idg.X, idg.Y = append(idg.X, x), append(idg.Y, r.finID)
		dmp.X, dmp.Y = append(dmp.X, x), append(dmp.Y, dm[i].Mean)
		dmp.Lo, dmp.Hi = append(dmp.Lo, dm[i].Mean-2*dm[i].StdErr), append(dmp.Hi, dm[i].Mean+2*dm[i].StdErr)
	}
	p.XTicks = powerTicks(rs)
	p.Points = []Points{ex, idg, dmp}
	lo, hi := dataRange(true, ex.X)
	p.Bands = []Band{{X: []float64{lo, hi}, Lo: []float64{ref.Mean - 2*ref.StdErr, ref.Mean - 2*ref.StdErr},
		Hi: []float64{ref.Mean + 2*ref.StdErr, ref.Mean + 2*ref.StdErr}, Color: okabeIto[2]}}
	p.Curves = []Curve{{Label: "ridge on the context", X: []float64{lo, hi}, Y: []float64{ref.Mean, ref.Mean}, Color: okabeIto[2]}}
	if !math.IsNaN(limit) {
		p.Curves = append(p.Curves, Curve{Label: "exact flow on fresh tasks (K = ∞)", X: []float64{lo, hi}, Y: []float64{limit, limit},
			Color: okabeIto[1], Dashed: true})
	}
	return p
}

// within says from which K on the flow's in-context error stays within
// 10% of target (NaN: nothing said), or that it never comes that close.
func within(rs []*taskRun, target float64, name string) string {
	if math.IsNaN(target) {
		return ""
	}
	from := -1
	for i := len(rs) - 1; i >= 0 && math.Abs(rs[i].finICL-target) <= 0.1*target; i-- {
		from = i
	}
	last := rs[len(rs)-1]
	if from < 0 {
		return fmt.Sprintf("The flow's e_ICL never comes within 10%% of %s (%.3g): %.3g at K = %d.", name, target, last.finICL, last.k)
	}
	return fmt.Sprintf("It stays within 10%% of %s (%.3g) from K = %d on.", name, target, rs[from].k)
}

// scaledIdentity writes c·I, or I for c = 1.
func scaledIdentity(c float64) string {
	if c == 1 {
		return "I"
	}
	return fmt.Sprintf("%g·I", c)
}
