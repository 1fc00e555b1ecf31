package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/reduced"
)

func init() {
	register(&command{
		Name:      "reduce",
		UsageLine: "reduce [flags]",
		Short:     "compare each drop of the separate model with the 1-D reduced theory; write out/reduced.npz",
		Flags: func(fs *flag.FlagSet) any {
			o := &reduceOpts{}
			o.task.register(fs)
			fs.IntVar(&o.heads, "heads", 4, "number of heads H")
			fs.Float64Var(&o.tau, "tau", 1, "time constant τ")
			fs.Float64Var(&o.winit, "winit", 0.01, "initialization scale w_init")
			fs.Uint64Var(&o.seed, "seed", 3, "seed of the initialization")
			fs.Float64Var(&o.tmax, "t", 1e6, "final time of the flow")
			fs.IntVar(&o.points, "points", 2000, "comparison times per drop")
			fs.Float64Var(&o.threshold, "align", 0.99, "alignment from which the ansatz is taken to hold, in (0, 1)")
			fs.StringVar(&o.out, "out", "out", "output directory")
			return o
		},
		Run: func(opts any, stdout, _ io.Writer) error { return runReduce(opts.(*reduceOpts), stdout) },
	})
}

type reduceOpts struct {
	task             taskFlags
	heads            int
	tau, winit, tmax float64
	seed             uint64
	points           int
	threshold        float64
	out              string
}

func runReduce(o *reduceOpts, stdout io.Writer) error {
	data, err := o.task.data()
	if err != nil {
		return err
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: o.heads, R: 1, Tau: o.tau})
	if err != nil {
		return usageError{err}
	}
	y0, err := s.Init(o.winit, o.seed)
	if err != nil {
		return usageError{err}
	}
	if o.points < 2 || !(o.threshold > 0 && o.threshold < 1) || !(o.tmax > 0) {
		return usagef("-points = %d, -align = %g, -t = %g: want points ≥ 2, 0 < align < 1, t > 0", o.points, o.threshold, o.tmax)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	cs, err := reduced.Compare(context.Background(), s, y0, o.tmax, o.points, o.threshold)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "linattn reduce: separate key–query, H=%d, R=1, τ=%g, w_init=%g, seed=%d\ndata: %s\n",
		o.heads, o.tau, o.winit, o.seed, o.task.describe(data))
	fmt.Fprintf(stdout, "%-5s %-5s %-9s %-12s %-12s %-12s %-12s %s\n", "drop", "head", "v*", "t observed", "t predicted", "from t_m", "aligned at", "max |v−v_1D|/v*")
	d := len(cs)
	head, m := make([]int64, d), make([]int64, d)
	vstar, obs, pred, fromStart, tAl, dev := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	var curveDrop []int64
	var curveT, curveFull, curveRed []float64
	for i, c := range cs {
		fmt.Fprintf(stdout, "%-5d %-5d %-9.5g %-12.6g %-12.6g %-12.6g %-12.6g %.3g\n",
			c.M+1, c.Head, c.VStar, c.ObservedT, c.Predicted, c.PredictedFromStart, c.TAligned, c.MaxDeviation)
		m[i], head[i], vstar[i], obs[i], pred[i], fromStart[i], tAl[i], dev[i] =
			int64(c.M+1), int64(c.Head), c.VStar, c.ObservedT, c.Predicted, c.PredictedFromStart, c.TAligned, c.MaxDeviation
		for range c.Times {
			curveDrop = append(curveDrop, int64(c.M+1))
		}
		curveT = append(curveT, c.Times...)
		curveFull = append(curveFull, c.VFull...)
		curveRed = append(curveRed, c.VReduced...)
	}
	nc := len(curveT)
	path := filepath.Join(o.out, "reduced.npz")
	err = export.SaveNPZ(path, []export.Array{
		export.Ints("drop", m, d),
		export.Ints("head", head, d),
		export.Floats("v_star", vstar, d),
		export.Floats("t_observed", obs, d),
		export.Floats("t_predicted", pred, d),
		export.Floats("t_predicted_from_plateau_start", fromStart, d),
		export.Floats("t_aligned", tAl, d),
		export.Floats("max_deviation", dev, d),
		export.Ints("curve_drop", curveDrop, nc),
		export.Floats("curve_t", curveT, nc),
		export.Floats("curve_v_full", curveFull, nc),
		export.Floats("curve_v_reduced", curveRed, nc),
		export.Floats("plateau_levels", data.PlateauLevels(), data.Dim()+1),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (curve_* arrays: v(t) of each learning head, full flow and 1-D theory)\n", path)
	return nil
}
