package cli

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/landscape"
)

// Limits of the landscape command: the loss table has 2^D rows; the
// stability analysis builds a Jacobian of size H + 2HRD per fixed point.
const (
	maxTableDim     = 24
	maxStabilityDim = 10
)

func init() {
	register(&command{
		Name:      "landscape",
		UsageLine: "landscape [flags]",
		Short:     "enumerate the fixed points, their losses and stability; write out/landscape.npz",
		Flags: func(fs *flag.FlagSet) any {
			o := &landscapeOpts{}
			o.task.register(fs)
			o.model.register(fs, 0, "number of heads H; 0 means D")
			fs.BoolVar(&o.stability, "stability", true, fmt.Sprintf("analyze the stability of every fixed point (D ≤ %d)", maxStabilityDim))
			fs.StringVar(&o.out, "out", "out", "output directory")
			return o
		},
		Run: func(opts any, stdout, _ io.Writer) error { return runLandscape(opts.(*landscapeOpts), stdout) },
	})
}

type landscapeOpts struct {
	task      taskFlags
	model     modelFlags
	stability bool
	out       string
}

func runLandscape(o *landscapeOpts, stdout io.Writer) error {
	data, err := o.task.data()
	if err != nil {
		return err
	}
	d := data.Dim()
	s, err := o.model.system(data)
	if err != nil {
		return err
	}
	m := s.Model
	if m.Kind == flow.Separate && d > maxTableDim {
		return usagef("D = %d: the loss table has 2^D rows; D ≤ %d", d, maxTableDim)
	}
	if o.stability && m.Kind == flow.Separate && d > maxStabilityDim {
		return usagef("D = %d: stability analysis needs D ≤ %d (or -stability=false)", d, maxStabilityDim)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	fmt.Fprintf(stdout, "linattn landscape: %s key–query, H=%d", o.model.kind, m.H)
	if m.Kind == flow.Separate {
		fmt.Fprintf(stdout, ", R=%d", s.Model.R)
	}
	fmt.Fprintf(stdout, ", τ=%g\ndata: %s\n", m.Tau, o.task.describe(data))
	if m.Kind == flow.Merged {
		return mergedLandscape(s, o, stdout)
	}
	return separateLandscape(s, o, stdout)
}

func separateLandscape(s *flow.System, o *landscapeOpts, stdout io.Writer) error {
	data := s.Data
	d := data.Dim()
	table, err := landscape.NewTable(data)
	if err != nil {
		return usageError{err}
	}
	rows := table.Len()
	row := func(i int) landscape.Subset { return table.At(uint64(i)) }
	arrays := []export.Array{
		{Name: "mask", Shape: []int{rows}, IntAt: func(i int) int64 { return int64(i) }},
		{Name: "size", Shape: []int{rows}, IntAt: func(i int) int64 { return int64(row(i).Size) }},
		{Name: "loss", Shape: []int{rows}, FloatAt: func(i int) float64 { return row(i).Loss }},
		{Name: "on_path", Shape: []int{rows}, IntAt: func(i int) int64 {
			if row(i).OnPath {
				return 1
			}
			return 0
		}},
		export.Floats("lambda", data.Lambda, d),
		export.Floats("plateau_levels", data.PlateauLevels(), d+1),
	}
	counts := map[landscape.Class]int{}
	var analyzed []*landscape.Point
	if o.stability {
		n := s.Len()
		class := make([]int64, rows)
		npos, nzero, nneg := make([]int64, rows), make([]int64, rows), make([]int64, rows)
		rate, escape, resid := make([]float64, rows), make([]float64, rows), make([]float64, rows)
		eig := make([]float64, 0, rows*n)
		for mask := 0; mask < rows; mask++ {
			p, err := landscape.AnalyzeSubset(s, uint64(mask))
			if err != nil {
				return fmt.Errorf("S = %v: %w", oneBased(landscape.Indices(uint64(mask))), err)
			}
			st := p.Stability
			class[mask] = int64(st.Class)
			npos[mask], nzero[mask], nneg[mask] = int64(st.Positive), int64(st.Zero), int64(st.Negative)
			rate[mask], resid[mask] = st.UnstableRate, st.Residual
			for _, e := range st.Escapes {
				escape[mask] = math.Max(escape[mask], e.Rate)
			}
			eig = append(eig, st.JacobianEigenvalues...)
			counts[st.Class]++
			analyzed = append(analyzed, p)
		}
		arrays = append(arrays,
			export.Ints("class", class, rows),
			export.Ints("n_positive", npos, rows),
			export.Ints("n_zero", nzero, rows),
			export.Ints("n_negative", nneg, rows),
			export.Floats("unstable_rate", rate, rows),
			export.Floats("escape_rate", escape, rows),
			export.Floats("residual", resid, rows),
			export.Floats("jacobian_eigenvalues", eig, rows, n),
		)
	}
	path := filepath.Join(o.out, "landscape.npz")
	if err := export.SaveNPZ(path, arrays); err != nil {
		return err
	}
	meta := map[string]any{
		"command": "landscape", "model": "separate", "H": s.Model.H, "R": s.Model.R, "tau": s.Model.Tau,
		"D": d, "lambda": data.Lambda, "nu": data.Nu, "min_loss": data.MinLoss(),
		"mask_bits":   "bit d (from 0) of mask stands for eigenvector e_{d+1}, eigenvalues sorted decreasing",
		"class_codes": map[string]int{"minimum": 0, "strict saddle": 1, "higher-order saddle": 2},
		"stability":   o.stability,
	}
	if err := export.SaveJSON(filepath.Join(o.out, "landscape.json"), meta); err != nil {
		return err
	}

	fmt.Fprintf(stdout, "%d fixed points M(S); global minimum L* = %.8g\n", rows, data.MinLoss())
	if o.stability {
		fmt.Fprintf(stdout, "classes: %d minimum, %d strict saddles, %d higher-order saddles\n",
			counts[landscape.Minimum], counts[landscape.StrictSaddle], counts[landscape.HigherOrderSaddle])
		fmt.Fprintf(stdout, "%-22s %-12s %-5s %-20s %s\n", "S", "L(S)", "path", "class", "(+, 0, −) eigenvalues, rate")
		for _, p := range analyzed {
			if d > 4 && !p.OnPath {
				continue
			}
			st := p.Stability
			detail := fmt.Sprintf("(%d, %d, %d)", st.Positive, st.Zero, st.Negative)
			if st.UnstableRate > 0 {
				detail += fmt.Sprintf(", unstable at %.4g", st.UnstableRate)
			} else if len(st.Escapes) > 0 {
				best := 0.0
				for _, e := range st.Escapes {
					best = math.Max(best, e.Rate)
				}
				detail += fmt.Sprintf(", escapes at λ²/τ = %.4g", best)
			}
			fmt.Fprintf(stdout, "%-22s %-12.8g %-5v %-20v %s\n", fmt.Sprint(oneBased(landscape.Indices(p.Mask))), p.Loss, p.OnPath, st.Class, detail)
		}
		if d > 4 {
			fmt.Fprintf(stdout, "(only the path points are listed; all are in %s)\n", path)
		}
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", path, filepath.Join(o.out, "landscape.json"))
	return nil
}

func mergedLandscape(s *flow.System, o *landscapeOpts, stdout io.Writer) error {
	pts, err := landscape.MergedFixedPoints(s)
	if err != nil {
		return err
	}
	var arrays []export.Array
	var losses, rates []float64
	var classes []int64
	for _, p := range pts {
		st, err := landscape.Analyze(s, p.State, nil)
		if err != nil {
			return err
		}
		losses = append(losses, p.Loss)
		rates = append(rates, st.UnstableRate)
		classes = append(classes, int64(st.Class))
		fmt.Fprintf(stdout, "%-8s L = %-12.8g %-14v (+%d, 0: %d, −%d)", p.Name, p.Loss, st.Class, st.Positive, st.Zero, st.Negative)
		if st.UnstableRate > 0 {
			fmt.Fprintf(stdout, ", unstable at %.6g = ‖Λ²‖_F/τ", st.UnstableRate)
		}
		fmt.Fprintln(stdout)
	}
	arrays = append(arrays,
		export.Floats("loss", losses, len(losses)),
		export.Floats("unstable_rate", rates, len(rates)),
		export.Ints("class", classes, len(classes)),
		export.Floats("lambda", s.Data.Lambda, s.Dim()))
	path := filepath.Join(o.out, "landscape.npz")
	if err := export.SaveNPZ(path, arrays); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (rows: zero, minimum)\n", path)
	return nil
}

func oneBased(idx []int) []int {
	out := make([]int, len(idx))
	for i, v := range idx {
		out[i] = v + 1
	}
	return out
}
