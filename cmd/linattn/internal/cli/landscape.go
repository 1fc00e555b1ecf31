package cli

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/landscape"
	"github.com/linattn/linattn/layout"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

func init() {
	register(&command{
		Name:      "landscape",
		UsageLine: "landscape [flags]",
		Short:     "enumerate the fixed points with their losses and stability; write out/landscape.npz and its sidecar",
		Groups:    []spec.Group{spec.GroupLandscape},
		Out:       "out/landscape.npz",
		Run:       runLandscape,
	})
}

func runLandscape(e *env, job *spec.Job) error {
	s := job.System
	fmt.Fprintf(e.stdout, "linattn landscape: %s\n", describeJob(job))
	if s.Model.Kind == flow.Merged {
		return mergedLandscape(e, job)
	}
	return separateLandscape(e, job)
}

// classCodes documents the class array in the sidecar: the codes of
// output.ClassNames, which are landscape.Class's.
var classCodes = func() map[string]int {
	m := map[string]int{}
	for i, name := range output.ClassNames() {
		m[name] = i
	}
	return m
}()

func separateLandscape(e *env, job *spec.Job) error {
	start := time.Now()
	s, sp := job.System, job.Spec
	data := s.Data
	d := data.Dim()
	table, err := landscape.NewTable(data)
	if err != nil {
		return err
	}
	rows := table.Len()
	var stab []*landscape.Point
	var runErr error
	if sp.Stability {
		if stab, runErr, err = analyzeAll(e, s, rows); err != nil {
			return err
		}
		rows = len(stab)
	}
	row := func(i int) landscape.Subset { return table.At(uint64(i)) }
	arrays := []export.Array{
		{Name: output.Bitmask, Shape: []int{rows}, IntAt: func(i int) int64 { return int64(i) }},
		{Name: output.Subset, Shape: []int{rows, d}, BoolAt: func(i int) bool { return (i/d)>>(i%d)&1 == 1 }},
		{Name: output.SubsetSize, Shape: []int{rows}, IntAt: func(i int) int64 { return int64(row(i).Size) }},
		{Name: output.Loss, Shape: []int{rows}, FloatAt: func(i int) float64 { return row(i).Loss }},
		{Name: output.OnPath, Shape: []int{rows}, BoolAt: func(i int) bool { return row(i).OnPath }},
	}
	counts := map[landscape.Class]int{}
	for _, p := range stab {
		counts[p.Stability.Class]++
	}
	if sp.Stability {
		arrays = append(arrays, stabilityArrays(stab, s.Len())...)
		if s.Model.R > 1 {
			arrays = append(arrays, alternativeArrays(stab)...)
		}
	}
	arrays = append(arrays, layout.Law(data)...)
	side := newSidecar(e, job, start)
	m := &side.Meta
	m.Complete, m.Status = runErr == nil, "complete"
	if runErr != nil {
		m.Status, m.Error = "interrupted: the rows analyzed", runErr.Error()
	}
	err = m.SetResult(map[string]any{
		"fixed_points": rows, "class_codes": classCodes,
		"bitmask": "bit d−1 of bitmask is set when the eigenvector of the d-th largest eigenvalue is learned; subset[i, d−1] is that bit",
		"classes": map[string]int{"minimum": counts[landscape.Minimum], "strict saddle": counts[landscape.StrictSaddle], "higher-order saddle": counts[landscape.HigherOrderSaddle]},
	})
	if err == nil {
		err = e.save(arrays, side, job.Spec)
	}
	if err != nil {
		return err
	}
	e.progress.Done()
	printLandscape(e, job, table.Len(), stab, counts)
	fmt.Fprintf(e.stdout, "wrote %s and %s in %s\n", e.out, output.SidecarPath(e.out), formatDuration(time.Since(start)))
	return runErr
}

// analyzeAll classifies the fixed points M(S) in bitmask order until done
// or canceled; runErr says where a cancellation stopped it.
func analyzeAll(e *env, s *flow.System, rows int) (stab []*landscape.Point, runErr, err error) {
	for mask := 0; mask < rows; mask++ {
		if err := e.ctx.Err(); err != nil {
			return stab, fmt.Errorf("stopped after %d of %d fixed points: %w", mask, rows, err), nil
		}
		p, err := landscape.AnalyzeSubset(s, uint64(mask))
		if err != nil {
			return nil, nil, fmt.Errorf("S = %v: %w", oneBased(landscape.Indices(uint64(mask))), err)
		}
		stab = append(stab, p)
		if e.progress.Due() {
			e.progress.Show(fmt.Sprintf("stability: %d of %d fixed points", mask+1, rows))
		}
	}
	return stab, nil, nil
}

// stabilityArrays are the classification of each analyzed fixed point and
// the eigenvalues of the Jacobian there (n per point).
func stabilityArrays(stab []*landscape.Point, n int) []export.Array {
	rows := len(stab)
	ints := func(f func(*landscape.Stability) int) []int64 {
		out := make([]int64, rows)
		for i, p := range stab {
			out[i] = int64(f(p.Stability))
		}
		return out
	}
	flts := func(f func(*landscape.Stability) float64) []float64 {
		out := make([]float64, rows)
		for i, p := range stab {
			out[i] = f(p.Stability)
		}
		return out
	}
	eig := make([]float64, 0, rows*n)
	for _, p := range stab {
		eig = append(eig, p.Stability.JacobianEigenvalues...)
	}
	return []export.Array{
		export.Ints(output.NPositive, ints(func(st *landscape.Stability) int { return st.Positive }), rows),
		export.Ints(output.NZero, ints(func(st *landscape.Stability) int { return st.Zero }), rows),
		export.Ints(output.NNegative, ints(func(st *landscape.Stability) int { return st.Negative }), rows),
		export.Ints(output.StabilityClass, ints(func(st *landscape.Stability) int { return int(st.Class) }), rows),
		export.Floats(output.UnstableRate, flts(func(st *landscape.Stability) float64 { return st.UnstableRate }), rows),
		export.Floats(output.EscapeRate, flts(fastestEscape), rows),
		export.Floats(output.Residual, flts(func(st *landscape.Stability) float64 { return st.Residual }), rows),
		export.Floats(output.JacobianEigenvalues, eig, rows, n),
	}
}

// printLandscape prints the summary: L*, the class counts and the table of
// the analyzed points (the path points only for D > 4).
func printLandscape(e *env, job *spec.Job, points int, stab []*landscape.Point, counts map[landscape.Class]int) {
	s, w := job.System, e.stdout
	d := s.Dim()
	fmt.Fprintf(w, "%d fixed points M(S); L* = %.10g", points, s.Data.MinLoss())
	if s.ExpressivityLimited {
		fmt.Fprintf(w, "; reachable with R·H = %d: L_min = %.10g", s.Model.R*s.Model.H, s.MinLoss())
	}
	fmt.Fprintln(w)
	if !job.Spec.Stability {
		return
	}
	fmt.Fprintf(w, "classes: %d minimum, %d strict saddles, %d higher-order saddles\n",
		counts[landscape.Minimum], counts[landscape.StrictSaddle], counts[landscape.HigherOrderSaddle])
	fmt.Fprintf(w, "%-22s %-12s %-5s %-20s %s\n", "S", "L(S)", "path", "class", "(+, 0, −) eigenvalues, rate")
	for _, p := range stab {
		if d > 4 && !p.OnPath {
			continue
		}
		st := p.Stability
		detail := fmt.Sprintf("(%d, %d, %d)", st.Positive, st.Zero, st.Negative)
		if st.UnstableRate > 0 {
			detail += fmt.Sprintf(", unstable at %.4g", st.UnstableRate)
		} else if r := fastestEscape(st); r > 0 {
			detail += fmt.Sprintf(", escapes at λ²/τ = %.4g", r)
		}
		fmt.Fprintf(w, "%-22s %-12.8g %-5v %-20v %s\n", fmt.Sprint(oneBased(landscape.Indices(p.Mask))), p.Loss, p.OnPath, st.Class, detail)
	}
	if d > 4 {
		fmt.Fprintf(w, "(the path points; all %d are in %s)\n", len(stab), e.out)
	}
	if s.Model.R > 1 {
		printRankSummary(w, stab, s.Model.R)
	}
}

// alternativeArrays describe, for R > 1, the one-per-head realization of
// each M(S) beside the packed one that training visits: alt_exists, and
// alt_class, alt_n_positive, alt_unstable_rate (0 where it does not exist).
func alternativeArrays(stab []*landscape.Point) []export.Array {
	rows := len(stab)
	exists := make([]bool, rows)
	class, npos := make([]int64, rows), make([]int64, rows)
	rate := make([]float64, rows)
	for i, p := range stab {
		if len(p.Alternatives) == 0 {
			continue
		}
		st := p.Alternatives[0].Stability
		exists[i], class[i], npos[i], rate[i] = true, int64(st.Class), int64(st.Positive), st.UnstableRate
	}
	return []export.Array{
		export.Bools(output.AltExists, exists, rows),
		export.Ints(output.AltClass, class, rows),
		export.Ints(output.AltNPositive, npos, rows),
		export.Floats(output.AltUnstableRate, rate, rows),
	}
}

// printRankSummary states, for R > 1, which plateaus on the path are long
// (higher-order saddles of the packed configuration) and where the
// one-per-head realization would have been classified differently.
func printRankSummary(w io.Writer, stab []*landscape.Point, r int) {
	var long, short []int
	for _, p := range stab {
		if !p.OnPath || p.Size == 0 || p.Stability.Class == landscape.Minimum {
			continue
		}
		if p.Stability.Class == landscape.HigherOrderSaddle {
			long = append(long, p.Size)
		} else {
			short = append(short, p.Size)
		}
	}
	fmt.Fprintf(w, "rank R = %d: training packs %d eigenvectors into a head; the plateaus after m = %v learned are long (higher-order saddles), after m = %v short (strict saddles)\n", r, r, long, short)
	for _, p := range stab {
		for _, a := range p.Alternatives {
			if p.OnPath && a.Stability.Class != p.Stability.Class {
				fmt.Fprintf(w, "  S = %v: packed %v; %v it would be a %v (%d positive eigenvalues)\n",
					oneBased(landscape.Indices(p.Mask)), p.Stability.Class, a.Realization, a.Stability.Class, a.Stability.Positive)
			}
		}
	}
}

func fastestEscape(st *landscape.Stability) float64 {
	best := 0.0
	for _, e := range st.Escapes {
		best = math.Max(best, e.Rate)
	}
	return best
}

func mergedLandscape(e *env, job *spec.Job) error {
	start := time.Now()
	s := job.System
	pts, err := landscape.MergedFixedPoints(s)
	if err != nil {
		return err
	}
	var losses, rates []float64
	var classes, npos, nzero, nneg []int64
	for _, p := range pts {
		st, err := landscape.Analyze(s, p.State, nil)
		if err != nil {
			return err
		}
		losses = append(losses, p.Loss)
		rates = append(rates, st.UnstableRate)
		classes = append(classes, int64(st.Class))
		npos, nzero, nneg = append(npos, int64(st.Positive)), append(nzero, int64(st.Zero)), append(nneg, int64(st.Negative))
		fmt.Fprintf(e.stdout, "%-8s L = %-12.8g %-14v (+%d, 0: %d, −%d)", p.Name, p.Loss, st.Class, st.Positive, st.Zero, st.Negative)
		if st.UnstableRate > 0 {
			fmt.Fprintf(e.stdout, ", unstable at %.6g = ‖Λ²‖_F/τ", st.UnstableRate)
		}
		fmt.Fprintln(e.stdout)
	}
	k := len(pts)
	arrays := append([]export.Array{
		export.Floats(output.Loss, losses, k),
		export.Ints(output.StabilityClass, classes, k),
		export.Ints(output.NPositive, npos, k),
		export.Ints(output.NZero, nzero, k),
		export.Ints(output.NNegative, nneg, k),
		export.Floats(output.UnstableRate, rates, k),
	}, layout.Law(s.Data)...)
	side := newSidecar(e, job, start)
	side.Meta.Complete, side.Meta.Status = true, "complete"
	err = side.Meta.SetResult(map[string]any{"rows": []string{"zero", "minimum"}, "class_codes": classCodes})
	if err == nil {
		err = e.save(arrays, side, job.Spec)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s (rows: zero, minimum) and %s\n", e.out, output.SidecarPath(e.out))
	return nil
}

func oneBased(idx []int) []int {
	out := make([]int, len(idx))
	for i, v := range idx {
		out[i] = v + 1
	}
	return out
}
