package cli

import (
	"fmt"
	"math"
	"time"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/layout"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/reduced"
	"github.com/linattn/linattn/spec"
)

func init() {
	register(&command{
		Name:      "reduced",
		UsageLine: "reduced [flags]",
		Short:     "the 1-D reduced theory of each plateau beside the full flow; write out/reduced.npz and its sidecar",
		Groups:    []spec.Group{spec.GroupSolver, spec.GroupReduced},
		Out:       "out/reduced.npz",
		Run:       runReduced,
	})
}

// finalTime returns -T, or when it is 0 the time at which the flow from
// the job's initial state converges (as in run).
func finalTime(e *env, job *spec.Job) (float64, error) {
	s := job.System
	if job.Spec.T > 0 {
		return job.Spec.T, nil
	}
	rs := job.RunSettings()
	rs.Times = []float64{0} // T = 0: until converged, one pass
	rs.Workers = e.workers
	tr, err := s.Run(e.ctx, job.Y0, rs)
	if err != nil {
		return 0, err
	}
	return tr.FinalT, nil
}

func runReduced(e *env, job *spec.Job) error {
	start := time.Now()
	job.Record(job.Resolved()) // the flow's settings for its runs below
	s := job.System
	fmt.Fprintf(e.stdout, "linattn reduced: %s\n", describeJob(job))
	T, err := finalTime(e, job)
	if err != nil {
		return err
	}
	var arrays []export.Array
	var result any
	if s.Model.Kind == flow.Merged {
		arrays, result, err = reducedMerged(e, job, T)
	} else {
		arrays, result, err = reducedSeparate(e, job, T)
	}
	if err != nil {
		return err
	}
	side := newSidecar(e, job, start)
	side.Meta.Complete, side.Meta.Status = true, "complete"
	if err := side.Meta.SetResult(result); err != nil {
		return err
	}
	if err := e.save(append(arrays, layout.Law(s.Data)...), side, job.Spec); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s and %s in %s\n", e.out, output.SidecarPath(e.out), formatDuration(time.Since(start)))
	return nil
}

// reducedSeparate writes, for each plateau m = 0 … D−1 of the separate
// model, the ansatz of the head that learns e_{m+1} (paper eq. 1Ddynamics):
// level L(M_m), lambda, a, v_star = (λ/a)^{1/3}; and for R = 1 the
// comparison with the full flow (reduced.Compare).
func reducedSeparate(e *env, job *spec.Job, T float64) ([]export.Array, map[string]any, error) {
	s, sp := job.System, job.Spec
	data := s.Data
	d := data.Dim()
	a := data.AEigenvalues()
	levels := data.PlateauLevels()
	vstar := make([]float64, d)
	for i := range vstar {
		an, err := reduced.NewAnsatz(data.Lambda()[i], a[i], s.Model.Tau)
		if err != nil {
			return nil, nil, err
		}
		vstar[i] = an.VStar()
	}
	arrays := []export.Array{
		export.Floats(output.PlateauLevel, levels[:d], d),
		export.Floats(output.AnsatzA, a, d),
		export.Floats(output.VStar, vstar, d),
	}
	result := map[string]any{"v_star": vstar}
	if s.Model.R != 1 {
		fmt.Fprintf(e.stdout, "R = %d: the 1-D ansatz is for rank-one heads; writing the per-plateau constants only\n", s.Model.R)
		return arrays, result, nil
	}
	cs, err := reduced.Compare(e.ctx, s, job.Y0, T, sp.Points, sp.Align)
	if err != nil {
		return nil, nil, err
	}
	w := e.stdout
	fmt.Fprintf(w, "1-D theory started where the head's key and query are %g-aligned with e_m\n", sp.Align)
	fmt.Fprintf(w, "%-5s %-5s %-9s %-12s %-12s %-12s %-12s %s\n", "drop", "head", "v*", "t observed", "t 1-D", "aligned at", "1-D from t_{m−1}", "max |v−v_1D|/v*")
	k := len(cs)
	head, drop := make([]int64, k), make([]int64, k)
	obs, pred, fromStart, tAl, dev := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	var curveDrop []int64
	var curveT, curveFull, curveRed []float64
	for i, c := range cs { // heads numbered from 1 as in the figures (the head array from 0)
		fmt.Fprintf(w, "%-5d %-5d %-9.5g %-12.6g %-12.6g %-12.6g %-16.6g %.3g\n",
			c.M+1, c.Head+1, c.VStar, c.ObservedT, c.Predicted, c.TAligned, c.PredictedFromStart, c.MaxDeviation)
		drop[i], head[i] = int64(c.M+1), int64(c.Head)
		obs[i], pred[i], tAl[i], dev[i] = c.ObservedT, c.Predicted, c.TAligned, c.MaxDeviation
		fromStart[i] = c.PredictedFromStart
		if math.IsNaN(fromStart[i]) {
			fromStart[i] = math.Inf(1) // exported as -1 below: no prediction
		}
		for range c.Times {
			curveDrop = append(curveDrop, int64(c.M+1))
		}
		curveT = append(curveT, c.Times...)
		curveFull = append(curveFull, c.VFull...)
		curveRed = append(curveRed, c.VReduced...)
	}
	for i := range fromStart {
		if math.IsInf(fromStart[i], 1) {
			fromStart[i] = -1
		}
	}
	nc := len(curveT)
	arrays = append(arrays,
		export.Ints(output.Drop, drop, k),
		export.Ints(output.DropHead, head, k),
		export.Floats(output.TObserved, obs, k),
		export.Floats(output.TPredicted, pred, k),
		export.Floats(output.TAligned, tAl, k),
		export.Floats(output.TPredictedFromStart, fromStart, k),
		export.Floats(output.MaxDeviation, dev, k),
		export.Ints(output.CurveDrop, curveDrop, nc),
		export.Floats(output.CurveT, curveT, nc),
		export.Floats(output.CurveVFull, curveFull, nc),
		export.Floats(output.CurveVReduced, curveRed, nc),
	)
	result["t_observed"], result["t_predicted"], result["max_deviation"] = obs, pred, dev
	return arrays, result, nil
}

// reducedMerged writes the merged model's drop-time predictions (paper eq.
// attnM-duration and reduced.MergedDropTime) beside the observed drop and,
// for white Λ, the closed-form loss (paper eq. attnM-solution) with
// s₀ = ‖w₂(0)‖², exact from a balanced, aligned initialization.
func reducedMerged(e *env, job *spec.Job, T float64) ([]export.Array, *output.MergedResult, error) {
	s, sp := job.System, job.Spec
	data := s.Data
	h := s.Model.H
	var s0 float64
	for _, v := range job.Y0[:h] {
		s0 += v * v
	}
	paper, err := reduced.MergedPlateau(data, s.Model.Tau, s0)
	if err != nil {
		return nil, nil, err
	}
	refined, err := reduced.MergedDropTime(s, job.Y0)
	if err != nil {
		return nil, nil, err
	}
	rs := job.RunSettings()
	rs.T, rs.Times = T, spec.GridByName(sp.Grid).Times(T, sp.Samples, nil)
	rs.Workers = e.workers
	tr, err := s.Run(e.ctx, job.Y0, rs)
	if err != nil {
		return nil, nil, err
	}
	observed := math.NaN()
	if len(tr.Transitions) == 1 {
		observed = tr.Transitions[0].T
	}
	w := e.stdout
	fmt.Fprintf(w, "drop time: observed %.6g, paper τ/(2‖Λ²‖_F)·ln(1/s₀) %.6g, refined %.6g\n", observed, paper, refined)
	nt := len(tr.Times)
	arrays := []export.Array{
		export.Floats(output.TDropPaper, []float64{paper}),
		export.Floats(output.TDropRefined, []float64{refined}),
		export.Floats(output.Times, tr.Times, nt),
		export.Floats(output.Loss, tr.Loss, nt),
	}
	result := &output.MergedResult{TDropPaper: paper, TDropRefined: refined, S0: s0}
	if !math.IsNaN(observed) {
		arrays = append(arrays, export.Floats(output.TDropObserved, []float64{observed}))
		result.TDropObserved = &observed
	}
	if data.IsWhite() {
		mw := reduced.MergedWhite{C: data.Lambda()[0], Nu: data.Nu(), Tau: s.Model.Tau, D: data.Dim(), S0: s0}
		cf := make([]float64, nt)
		for i, t := range tr.Times {
			if cf[i], err = mw.Loss(t); err != nil {
				return nil, nil, err
			}
		}
		arrays = append(arrays, export.Floats(output.LossClosedForm, cf, nt))
		fmt.Fprintf(w, "white Λ: loss_closed_form holds the closed form with s₀ = ‖w₂(0)‖² = %.6g\n", s0)
		dist, dev := balancedDistance(s, job.Y0), 0.0
		for i := range cf {
			dev = math.Max(dev, math.Abs(cf[i]-tr.Loss[i]))
		}
		exact := dist <= 1e-12
		result.ClosedFormExact, result.StartDistanceFromBalanced, result.ClosedFormMaxDeviation = &exact, &dist, &dev
		if !exact {
			fmt.Fprintf(w, "the start is not balanced and aligned (relative distance %.3g from U_i = v_i I/√D): the closed form is exact only from such a start (-balanced); here it differs from the flow by up to %.3g in loss\n", dist, dev)
		}
	}
	return arrays, result, nil
}

// balancedDistance is ‖y − y_b‖/‖y_b‖ for the balanced, aligned start y_b
// with y's value weights (docs/math.md "Closed form for the merged model").
func balancedDistance(s *flow.System, y []float64) float64 {
	yb, err := s.BalancedAligned(y[:s.Model.H])
	if err != nil {
		return math.Inf(1)
	}
	var num, den float64
	for i := range y {
		num += (y[i] - yb[i]) * (y[i] - yb[i])
		den += yb[i] * yb[i]
	}
	return math.Sqrt(num / den)
}
