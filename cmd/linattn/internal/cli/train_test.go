package cli

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linattn/linattn/output"
	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/spec"
	"github.com/linattn/linattn/train"
	"github.com/sbinet/npyio/npz"
)

// smallTrain is a separate rank-2 model at D = 3 that trains in a fraction
// of a second on every path.
var smallTrain = []string{"train", "-spectrum", "power:1", "-D", "3", "-H", "2", "-R", "2", "-winit", "0.1",
	"-P", "300", "-test", "50", "-lr", "0.5", "-steps", "400", "-samples", "41", "-grid", "lin"}

// TestTrainArraysRoundTrip reads back every array of linattn train and
// checks it against the same descent computed with package train from the
// sidecar's spec, bit for bit: the weights (run's layout, and the extra
// blocks), the training and test losses, the steps; and the comparison
// against the population flow against package flow.
func TestTrainArraysRoundTrip(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"auto", "direct", "columns"} {
		t.Run(path, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "t.npz")
			if code, _, stderr := runCLI(t, append(smallTrain, "-path", path, "-o", out)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			given, err := spec.Parse(mustRead(t, output.SidecarPath(out)))
			if err != nil {
				t.Fatal(err)
			}
			job, err := spec.Resolve(given, spec.GroupTrain, spec.GroupLaw)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := train.New(job.TrainConfig())
			if err != nil {
				t.Fatal(err)
			}
			res, err := tr.GD(context.Background(), job.Y0, train.GDSettings{LR: 0.5, Steps: 400, Grid: flow.GridLinear, Samples: 41})
			if err != nil {
				t.Fatal(err)
			}
			want := trainWant(t, job, tr, res)
			r, err := npz.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for name, w := range want {
				got := readFloats(t, r, name)
				if len(got) != len(w) {
					t.Fatalf("%s: %d values, want %d", name, len(got), len(w))
				}
				for i := range w {
					if got[i] != w[i] {
						t.Fatalf("%s[%d] = %v, want %v", name, i, got[i], w[i])
					}
				}
			}
			var st []int64
			if err := r.Read("step.npy", &st); err != nil || len(st) != 41 || st[40] != 400 {
				t.Errorf("step: %v (%v)", st, err)
			}
			checkCompare(t, job, readFloats(t, r, "compare"), readFloats(t, r, "flow_loss"), want["t"])
		})
	}
}

// trainWant lays the kept states of res out as linattn train does.
func trainWant(t *testing.T, job *spec.Job, tr *train.Trainer, res *flow.Trajectory) map[string][]float64 {
	m := tr.Config().Model
	n, h, d := m.Len(), m.H, m.D
	want := map[string][]float64{}
	for i, tt := range res.Times {
		th := res.States[i*n : (i+1)*n]
		y, ex := m.Flow(th), m.Extras(th)
		want["t"] = append(want["t"], tt)
		want["loss"] = append(want["loss"], res.Loss[i])
		want["v"] = append(want["v"], y[:h]...)
		hrd := h * m.R * d
		want["K"] = append(want["K"], y[h:h+hrd]...)
		want["Q"] = append(want["Q"], y[h+hrd:]...)
		want["v_x"] = append(want["v_x"], ex[:h*d]...)
		want["k_y"] = append(want["k_y"], ex[h*d:]...)
		icl, iwl, idg := tr.TestLosses(th)
		want["test_icl"], want["test_iwl"] = append(want["test_icl"], icl), append(want["test_iwl"], iwl)
		want["test_idg"] = append(want["test_idg"], idg)
		s := job.System
		want["M"] = append(want["M"], rowMajor(s.MapOfEigen(s.ToEigen(nil, th)))...)
	}
	return want
}

// checkCompare: the flow's loss and drop times in the output are those of
// package flow from the same initial state; the compare table's columns
// are m, L(M_m), the two observed plateaus and the two drop times.
func checkCompare(t *testing.T, job *spec.Job, table, flowLoss, times []float64) {
	t.Helper()
	s := job.System
	fl, err := s.Run(context.Background(), job.Y0, flow.RunSettings{T: times[len(times)-1], Times: times,
		Method: job.Method, RTol: job.Spec.RTol, ATol: job.Spec.ATol})
	if err != nil {
		t.Fatal(err)
	}
	for i := range flowLoss {
		if flowLoss[i] != fl.Loss[i] {
			t.Fatalf("flow_loss[%d] = %v, flow's %v", i, flowLoss[i], fl.Loss[i])
		}
	}
	levels := s.Data.PlateauLevels()
	for m := 0; m <= s.Dim(); m++ {
		row := table[m*6 : (m+1)*6]
		if row[0] != float64(m) || row[1] != levels[m] {
			t.Errorf("compare row %d: %v", m, row)
		}
	}
	for _, tn := range fl.Transitions {
		if got := table[tn.M*6+5]; got != tn.T {
			t.Errorf("compare: t_flow of drop %d is %v, flow's %v", tn.M, got, tn.T)
		}
	}
}

// TestTrainRepeat: the sidecar is a spec that repeats the job bit for bit,
// on each kind of run.
func TestTrainRepeat(t *testing.T) {
	t.Parallel()
	for name, extra := range map[string][]string{
		"gd":      nil,
		"drops":   {"-grid", "drops"},
		"flow":    {"-gd=false", "-grid", "drops"},
		"sgd":     {"-batch", "50", "-lr", "0.1"},
		"softmax": {"-attention", "softmax", "-model", "merged", "-steps", "100"},
		"ntp":     {"-ntp-max", "5", "-layer", "reduced"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz")
			args := append([]string{}, smallTrain...)
			if slices.Contains(extra, "merged") { // the merged model has no rank: -R is refused
				i := slices.Index(args, "-R")
				args = slices.Delete(args, i, i+2)
			}
			args = append(args, extra...)
			if name != "ntp" {
				args = append(args, "-N", "7")
			}
			if code, _, stderr := runCLI(t, append(args, "-o", a)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if code, _, stderr := runCLI(t, "train", "-spec", output.SidecarPath(a), "-o", b); code != 0 {
				t.Fatalf("repeat: exit %d: %s", code, stderr)
			}
			ma, mb := sidecarOf(t, a)["meta"].(map[string]any), sidecarOf(t, b)["meta"].(map[string]any)
			if ma["output_sha256"] != mb["output_sha256"] || ma["complete"] != true {
				t.Errorf("repeat: sha256 %v, %v; complete %v", ma["output_sha256"], mb["output_sha256"], ma["complete"])
			}
		})
	}
}

// TestTrainBadInput: bad fields stop before any work with exit 2, one line
// naming the flag, and no output.
func TestTrainBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-P", "0"}, "-P"},
		{[]string{"-lr", "0"}, "-lr"},
		{[]string{"-lr", "-2"}, "-lr"},
		{[]string{"-lr", "1e308"}, "-lr"}, // 2·η·τ·steps overflows
		{[]string{"-steps", "0"}, "-steps"},
		{[]string{"-batch", "301"}, "-batch"},
		{[]string{"-icl", "-0.1"}, "-icl"},
		{[]string{"-test", "-1"}, "-test"},
		{[]string{"-attention", "relu"}, "-attention"},
		{[]string{"-layer", "half"}, "-layer"},
		{[]string{"-path", "fast"}, "-path"},
		{[]string{"-path", "moments", "-attention", "softmax"}, "-path"},
		{[]string{"-path", "moments", "-batch", "10"}, "-path"},
		{[]string{"-gd=false", "-batch", "10"}, "-gd"},
		{[]string{"-P", "2000000000", "-path", "direct"}, "-P"},
	} {
		out := filepath.Join(t.TempDir(), "t.npz")
		code, _, stderr := runCLI(t, append(append(smallTrain, tc.args...), "-o", out)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.flag) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", tc.args, out)
		}
	}
	spec := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(spec, []byte(`{"nu": 0.1}`), 0o644)
	if code, _, stderr := runCLI(t, "train", "-spec", spec); code != ExitUsage || !strings.Contains(stderr, "-nu") {
		t.Errorf("-nu: exit %d, %q", code, stderr)
	}
}

// TestTrainDivergence: a learning rate too large makes the loss diverge;
// train stops with a message naming the learning rate, writes what it
// computed marked incomplete (every number finite) and exits 1.
func TestTrainDivergence(t *testing.T) {
	t.Parallel()
	for _, grid := range []string{"lin", "drops"} {
		out := filepath.Join(t.TempDir(), "t.npz")
		code, stdout, stderr := runCLI(t, append(smallTrain, "-lr", "400", "-grid", grid, "-o", out)...)
		if code != ExitFailure || !strings.Contains(stderr, "learning rate 400") || !strings.Contains(stdout, "INCOMPLETE") {
			t.Fatalf("%s: exit %d, stderr %q\n%s", grid, code, stderr, stdout)
		}
		meta := sidecarOf(t, out)["meta"].(map[string]any)
		if meta["complete"] != false || !strings.Contains(meta["error"].(string), "diverged") {
			t.Errorf("%s: sidecar complete %v, error %v", grid, meta["complete"], meta["error"])
		}
		r, err := npz.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range r.Keys() {
			if r.Header(k).Descr.Type != "<f8" {
				continue
			}
			for i, x := range readFloats(t, r, strings.TrimSuffix(k, ".npy")) {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("%s: %s[%d] = %v", grid, k, i, x)
				}
			}
		}
		r.Close()
	}
}

// TestTrainInterrupt: a canceled descent writes what it computed, marked
// interrupted, and exits 130.
func TestTrainInterrupt(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "t.npz")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = withTestHooks(ctx, &testHooks{step: func(tt float64) {
		if tt >= 200 {
			cancel()
		}
	}})
	code, stdout, stderr := runCLIContext(t, ctx, append(smallTrain, "-o", out)...)
	r := checkInterrupted(t, out, code, stdout, stderr)
	// The hook cancels before step 200 is taken; the descent notices
	// before step 201 and ends with the weights it computed last.
	if ts := readFloats(t, r, "t"); ts[len(ts)-1] != 201 {
		t.Errorf("samples end at t = %v, want 201 (step 201)", ts[len(ts)-1])
	}
}

// rowMajor returns m's elements in C order.
func rowMajor(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out = append(out, m.At(i, j))
		}
	}
	return out
}
