package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/ode"
)

func init() {
	register(&command{
		Name:      "run",
		UsageLine: "run [flags]",
		Short:     "integrate the population gradient flow and write out/trajectory.npz",
		Flags: func(fs *flag.FlagSet) any {
			o := &runOpts{}
			o.task.register(fs)
			o.model.register(fs, 4, "number of heads H; 0 means D")
			fs.Float64Var(&o.winit, "winit", 0.01, "initialization scale w_init (the paper's code uses 1e-2)")
			fs.Uint64Var(&o.seed, "seed", 3, "seed of the initialization")
			fs.Float64Var(&o.tmax, "t", 1e6, "final time (the run stops earlier at -stop)")
			fs.Float64Var(&o.stop, "stop", 1e-6, "stop when L − L* ≤ stop; 0 runs to -t")
			fs.IntVar(&o.points, "points", 2001, "number of output times")
			fs.StringVar(&o.grid, "grid", "lin", "output grid: lin or log")
			fs.StringVar(&o.method, "method", "dop853", "integrator: dop853, dp5 or tsit5")
			fs.Float64Var(&o.rtol, "rtol", flow.DefaultRTol, "relative tolerance")
			fs.Float64Var(&o.atol, "atol", flow.DefaultATol, "absolute tolerance")
			fs.StringVar(&o.out, "out", "out", "output directory")
			return o
		},
		Run: func(opts any, stdout, _ io.Writer) error { return runRun(opts.(*runOpts), stdout) },
	})
}

type runOpts struct {
	task         taskFlags
	model        modelFlags
	winit        float64
	seed         uint64
	tmax, stop   float64
	points       int
	grid, method string
	rtol, atol   float64
	out          string
}

var methods = map[string]*ode.Method{"dop853": ode.DOP853, "dp5": ode.DP5, "tsit5": ode.Tsit5}

func runRun(o *runOpts, stdout io.Writer) error {
	data, err := o.task.data()
	if err != nil {
		return err
	}
	s, err := o.model.system(data)
	if err != nil {
		return err
	}
	method, ok := methods[o.method]
	if !ok {
		return usagef("-method = %q, want dop853, dp5 or tsit5", o.method)
	}
	if o.points < 2 {
		return usagef("-points = %d, want ≥ 2", o.points)
	}
	if o.grid != "lin" && o.grid != "log" {
		return usagef("-grid = %q, want lin or log", o.grid)
	}
	if !(o.tmax > 0) || math.IsInf(o.tmax, 0) {
		return usagef("-t = %g, want a finite time > 0", o.tmax)
	}
	if !(o.rtol > 0) || !(o.atol >= 0) {
		return usagef("-rtol = %g and -atol = %g, want rtol > 0 and atol ≥ 0", o.rtol, o.atol)
	}
	if !(o.stop >= 0) {
		return usagef("-stop = %g, want ≥ 0", o.stop)
	}
	y0, err := s.Init(o.winit, o.seed)
	if err != nil {
		return usageError{err}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	rs := flow.RunSettings{T: o.tmax, StopTol: o.stop, Method: method, RTol: o.rtol, ATol: o.atol}
	start := time.Now()
	tEnd := o.tmax
	if o.stop > 0 {
		// First pass: find when the loss reaches L* + stop, so that the
		// output grid covers exactly the dynamics. The flow is deterministic,
		// so the second pass retraces the same trajectory.
		rs.Times = []float64{0}
		tr, err := s.Run(context.Background(), y0, rs)
		if err != nil {
			return err
		}
		tEnd = tr.FinalT
	}
	if o.grid == "lin" {
		rs.Times = flow.LinearGrid(tEnd, o.points)
	} else {
		rs.Times = flow.LogGrid(tEnd*1e-6, tEnd, o.points-1)
	}
	rs.T, rs.StopTol = tEnd, 0
	tr, err := s.Run(context.Background(), y0, rs)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)

	arrays, shapes := trajectoryArrays(s, tr)
	npzPath := filepath.Join(o.out, "trajectory.npz")
	if err := export.SaveNPZ(npzPath, arrays); err != nil {
		return err
	}
	meta := map[string]any{
		"command": "run",
		"model": map[string]any{
			"kind": o.model.kind, "H": s.Model.H, "R": s.Model.R, "tau": s.Model.Tau,
			"w_init": o.winit, "seed": o.seed, "expressivity_limited": s.ExpressivityLimited,
		},
		"data": map[string]any{
			"D": s.Dim(), "lambda": s.Data.Lambda, "nu": s.Data.Nu, "context": o.task.context,
			"nmax": o.task.nmax, "rotation_seed": o.task.rotation, "trace": s.Data.Trace(),
		},
		"solver": map[string]any{
			"method": method.Name, "rtol": o.rtol, "atol": o.atol, "status": tr.Status.String(),
			"func_evals": tr.Stats.FuncEvals, "steps": tr.Stats.Steps, "rejected": tr.Stats.Rejected,
		},
		"t_end":          tr.FinalT,
		"final_loss":     tr.FinalLoss,
		"min_loss":       s.Data.MinLoss(),
		"plateau_levels": s.Data.PlateauLevels(),
		"transitions":    tr.Transitions,
		"arrays":         shapes,
		"layout":         "arrays are in the original basis of Λ, C order; eigenvectors[:, d] is e_d; load with numpy.load",
	}
	if err := export.SaveJSON(filepath.Join(o.out, "metadata.json"), meta); err != nil {
		return err
	}

	fmt.Fprintf(stdout, "linattn run: %s key–query, H=%d", o.model.kind, s.Model.H)
	if s.Model.Kind == flow.Separate {
		fmt.Fprintf(stdout, ", R=%d", s.Model.R)
	}
	fmt.Fprintf(stdout, ", τ=%g, w_init=%g, seed=%d\n", s.Model.Tau, o.winit, o.seed)
	fmt.Fprintf(stdout, "data: %s\n", o.task.describe(s.Data))
	if s.ExpressivityLimited {
		fmt.Fprintf(stdout, "note: R·H < D: the model cannot reach the global minimum\n")
	}
	fmt.Fprintf(stdout, "plateau levels L(M_m), m=0..%d: %s\n", s.Dim(), floats(s.Data.PlateauLevels(), "%.8g"))
	for _, tn := range tr.Transitions {
		fmt.Fprintf(stdout, "  drop m=%d: loss crosses %.6g at t = %.6g\n", tn.M, tn.Level, tn.T)
	}
	fmt.Fprintf(stdout, "end: t = %.6g, loss = %.8g (L* = %.8g); %s, %d steps, %d evaluations, %v\n",
		tr.FinalT, tr.FinalLoss, s.Data.MinLoss(), method.Name, tr.Stats.Steps, tr.Stats.FuncEvals, elapsed.Round(time.Millisecond))
	fmt.Fprintf(stdout, "wrote %s (%d times) and %s\n", npzPath, len(tr.Times), filepath.Join(o.out, "metadata.json"))
	return nil
}

// trajectoryArrays lays a trajectory out as named arrays with real shapes,
// and returns their shapes for the metadata.
func trajectoryArrays(s *flow.System, tr *flow.Trajectory) ([]export.Array, map[string][]int) {
	nt, n := len(tr.Times), s.Len()
	d, h := s.Dim(), s.Model.H
	v := make([]float64, 0, nt*h)
	for i := 0; i < nt; i++ {
		v = append(v, tr.States[i*n:i*n+h]...)
	}
	vecs := make([]float64, 0, d*d)
	for r := 0; r < d; r++ {
		for c := 0; c < d; c++ {
			vecs = append(vecs, s.Data.Vecs.At(r, c))
		}
	}
	ms := make([]int64, len(tr.Transitions))
	ts := make([]float64, len(tr.Transitions))
	ls := make([]float64, len(tr.Transitions))
	for i, tn := range tr.Transitions {
		ms[i], ts[i], ls[i] = int64(tn.M), tn.T, tn.Level
	}
	arrays := []export.Array{
		export.Floats("t", tr.Times, nt),
		export.Floats("loss", tr.Loss, nt),
		export.Floats("v", v, nt, h),
		export.Floats("lambda", s.Data.Lambda, d),
		export.Floats("eigenvectors", vecs, d, d),
		export.Floats("plateau_levels", s.Data.PlateauLevels(), d+1),
		export.Ints("transition_m", ms, len(ms)),
		export.Floats("transition_t", ts, len(ts)),
		export.Floats("transition_level", ls, len(ls)),
	}
	if s.Model.Kind == flow.Merged {
		u := make([]float64, 0, nt*h*d*d)
		for i := 0; i < nt; i++ {
			u = append(u, tr.States[i*n+h:(i+1)*n]...)
		}
		arrays = append(arrays, export.Floats("U", u, nt, h, d, d))
	} else {
		r := s.Model.R
		hrd := h * r * d
		k := make([]float64, 0, nt*hrd)
		q := make([]float64, 0, nt*hrd)
		ka := make([]float64, 0, nt*hrd)
		ye := make([]float64, n)
		for i := 0; i < nt; i++ {
			yi := tr.States[i*n : (i+1)*n]
			k = append(k, yi[h:h+hrd]...)
			q = append(q, yi[h+hrd:]...)
			keys, _ := s.Alignment(s.ToEigen(ye, yi))
			ka = append(ka, keys...)
		}
		arrays = append(arrays,
			export.Floats("keys", k, nt, h, r, d),
			export.Floats("queries", q, nt, h, r, d),
			export.Floats("key_alignment", ka, nt, h, r, d))
	}
	shapes := map[string][]int{}
	for _, a := range arrays {
		shapes[a.Name] = a.Shape
	}
	return arrays, shapes
}
