package spec

import (
	"strconv"
	"strings"
	"testing"

	"github.com/linattn/linattn/law"
)

// floatsText is a list as a command line writes it.
func floatsText(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

// allGroups are the groups of every command.
var allGroups = []Group{GroupSolver, GroupLandscape, GroupReduced, GroupTrain, GroupLaw}

// parseFlags sets the fields of a spec from name, text pairs, as flags do.
func parseFlags(t *testing.T, kv ...string) *Spec {
	t.Helper()
	s := &Spec{}
	for i := 0; i < len(kv); i += 2 {
		if err := s.SetText(kv[i], kv[i+1]); err != nil {
			t.Fatalf("-%s %s: %v", kv[i], kv[i+1], err)
		}
	}
	return s
}

// TestFieldDefaults: the empty spec resolves, for the commands that read
// each field, to the default its usage states (the paper's D = 4 example);
// the fields that are alternatives of a default stay unset. Each field of
// Fields() is listed.
func TestFieldDefaults(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"model": "separate", "D": "4", "eigs": "0.4,0.3,0.2,0.1", "spectrum": "", "white": "", "eigvecs": "random:1",
		"N": "31", "nu": "", "ntp-max": "", "H": "4", "R": "1", "winit": "0.01", "seed": "3", "init": "", "balanced": "",
		"tau": "1", "layers": "1", "tie": "false", "unrestricted": "false", "T": "0", "tol": "1e-06", "samples": "2001", "grid": "drops", "method": "auto", "rtol": "1e-08",
		"atol": "1e-12", "checkpoint": "", "state-every": "", "stability": "true", "align": "0.99", "points": "2000", "P": "10000", "lr": "0.5",
		"steps": "40000", "batch": "0", "attention": "linear", "layer": "full", "icl": "1", "test": "1000",
		"path": "auto", "gd": "true", "data-seed": "3", "tasks": "1",
		// The law's other fields stay unset unless given: the paper's law
		// (Ω = I, no noise, tasks drawn scaled).
		"w0-file": "", "task-draw": "", "noise": "", "task-eigs": "", "task-spectrum": "", "task-white": "",
		"task-eigvecs": "", "test-task-eigs": "", "test-task-spectrum": "", "test-task-white": "", "test-task-eigvecs": "",
		// train (in allGroups) uses the fixed task for its in-weight test:
		// the sidecar records the one drawn from the data seed.
		"w0": floatsText(law.FixedTasks(4, 1, 3)[0]),
	}
	job, err := resolve(&Spec{}, 1e12, allGroups...)
	if err != nil {
		t.Fatal(err)
	}
	// The solver's fields stay unset until the flow resolves them.
	for _, name := range []string{"T", "tol", "samples", "grid", "method", "rtol", "atol"} {
		if job.Spec.Given(name) {
			t.Errorf("-%s is filled in before the run: %q", name, job.Spec.Text(name))
		}
	}
	job.Record(job.Resolved())
	for _, f := range Fields() {
		w, ok := want[f.Name]
		if !ok {
			t.Errorf("field %s has no default in this test", f.Name)
			continue
		}
		if got := job.Spec.Text(f.Name); got != w {
			t.Errorf("-%s resolves to %q, want %q", f.Name, got, w)
		}
		if !strings.Contains(f.Help(), "(default") && w != "" && f.Name != "D" {
			t.Errorf("-%s: the usage states no default: %q", f.Name, f.Help())
		}
		if f.Default == "" {
			continue
		}
		d := &Spec{}
		if err := d.SetText(f.Name, f.Default); err != nil || (w != "" && d.Text(f.Name) != w) {
			t.Errorf("-%s: Default %q reads as %q (%v), want %q", f.Name, f.Default, d.Text(f.Name), err, w)
		}
	}
	// The merged model: -balanced defaults to false, R has no meaning.
	job, err = resolve(parseFlags(t, "model", "merged", "R", "2"), 1e12, GroupSolver)
	if err != nil {
		t.Fatal(err)
	}
	if job.Spec.Text("balanced") != "false" || job.Spec.Given("R") || job.Spec.R != 0 {
		t.Errorf("merged: balanced %q, R given %v (%d)", job.Spec.Text("balanced"), job.Spec.Given("R"), job.Spec.R)
	}
	// A final time: -tol is dropped; -spectrum and -white take -D.
	job, err = resolve(parseFlags(t, "T", "100", "tol", "0.5", "white", "2", "D", "3"), 1e12, GroupSolver)
	if err != nil || job.Spec.Given("tol") || job.Data.Lambda()[2] != 2 || job.Spec.H != 3 {
		t.Errorf("T given: %v, tol given %v, λ %v", err, job.Spec.Given("tol"), job.Data.Lambda())
	}
}

// TestFieldRanges: a value out of a field's range is refused with one
// message that names the flag (and the allowed range); each field of
// Fields() with a range is listed, and the values at the edges of the
// range are accepted.
func TestFieldRanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"D", "0", "spectrum", "power:1"}, "-D = 0, want D ≥ 1"},
		{[]string{"D", "3"}, "-D = 3 but -eigs has 4 values"},
		{[]string{"spectrum", "power:1"}, "-D is needed with -spectrum and -white"},
		{[]string{"eigs", "0.4,0"}, "-eigs: entry 2 is 0, want a finite eigenvalue > 0"},
		{[]string{"spectrum", "power:-1", "D", "3"}, `-spectrum = "power:-1", want power:ALPHA with a finite ALPHA ≥ 0`},
		{[]string{"white", "0", "D", "3"}, "-white = 0, want a finite C > 0"},
		{[]string{"eigvecs", "random:x"}, `-eigvecs = "random:x", want random:SEED`},
		{[]string{"eigvecs", "rotation"}, `-eigvecs = "rotation", want identity, random, random:SEED or a FILE.npy`},
		{[]string{"N", "0"}, "-N = 0, want a context length N ≥ 1"},
		{[]string{"nu", "0"}, "-nu = 0, want ν = E[1/N] in (0, 1]"},
		{[]string{"ntp-max", "0"}, "-ntp-max = 0, want 1 ≤ Nmax ≤ 16777216"},
		{[]string{"H", "0"}, "-H = 0, want H ≥ 1 heads"},
		{[]string{"R", "5"}, "-R = 5, want 1 ≤ R ≤ D = 4"},
		{[]string{"winit", "-1"}, "-winit = -1, want a finite scale > 0"},
		{[]string{"init", ""}, "-init is empty"},
		{[]string{"balanced", "true"}, "-balanced is for the merged model's random start"},
		{[]string{"tau", "0"}, "-tau = 0, want a finite time constant τ > 0"},
		{[]string{"T", "-1"}, "-T = -1, want a finite final time ≥ 0"},
		{[]string{"tol", "1"}, "-tol = 1, want a relative tolerance in (0, 1)"},
		{[]string{"samples", "1"}, "-samples = 1, want S ≥ 2 output times"},
		{[]string{"grid", "cubic"}, `-grid = "cubic", want drops, lin or log`},
		{[]string{"method", "rk4"}, `-method = "rk4", want auto, bdf, rock4, rodas5p, radau5, dop853, dp5 or tsit5`},
		{[]string{"rtol", "1"}, "-rtol = 1, want a relative tolerance in (0, 1)"},
		{[]string{"atol", "-1"}, "-atol = -1, want a finite absolute tolerance > 0"},
		// Zero would be the flow's default, not a purely relative tolerance.
		{[]string{"atol", "0"}, "-atol = 0, want a finite absolute tolerance > 0"},
		{[]string{"rtol", "0"}, "-rtol = 0, want a relative tolerance in (0, 1)"},
		{[]string{"D", "11", "spectrum", "power:1"}, "-D = 11: the stability of all 2^D fixed points needs D ≤ 10"},
		{[]string{"D", "25", "spectrum", "power:1", "stability", "false"}, "-D = 25: the separate model's landscape has 2^D fixed points; want D ≤ 24"},
		{[]string{"align", "0"}, "-align = 0, want an alignment in (0, 1)"},
		{[]string{"points", "1"}, "-points = 1, want ≥ 2 comparison times per drop"},
		{[]string{"P", "0"}, "-P = 0, want P ≥ 1 training sequences"},
		{[]string{"lr", "0"}, "-lr = 0, want a finite learning rate η > 0"},
		{[]string{"lr", "1e308", "steps", "10"}, "the final time 2·η·τ·steps is not finite"},
		{[]string{"steps", "0"}, "-steps = 0, want ≥ 1 steps"},
		{[]string{"batch", "10001"}, "-batch = 10001, want 0 (full batch) or a minibatch size in [1, P = 10000]"},
		{[]string{"icl", "1.5"}, "-icl = 1.5, want a fraction c in [0, 1]"},
		{[]string{"tasks", "0", "icl", "0.5"}, "-tasks = 0, want 1 ≤ K ≤ 1048576 fixed task vectors"},
		{[]string{"tasks", "1048577", "icl", "0.5"}, "-tasks = 1048577, want 1 ≤ K ≤ 1048576"},
		{[]string{"task-draw", "uniform", "icl", "0.5"}, `-task-draw = "uniform", want scaled or gaussian`},
		{[]string{"noise", "-0.1"}, "-noise = -0.1, want a finite label-noise variance σ² ≥ 0"},
		{[]string{"noise", "+Inf"}, "-noise = +Inf, want a finite label-noise variance σ² ≥ 0"},
		{[]string{"task-eigs", "1,2"}, "-task-eigs has 2 values, want D = 4"},
		{[]string{"task-eigs", "1,2,0,1"}, "-task-eigs: entry 3 is 0, want a finite eigenvalue > 0"},
		{[]string{"task-white", "-1"}, "-task-white = -1, want a finite C > 0"},
		{[]string{"task-spectrum", "power:x"}, `-task-spectrum = "power:x", want power:ALPHA with a finite ALPHA ≥ 0`},
		{[]string{"task-eigvecs", "random:2"}, "-task-eigvecs needs the eigenvalues: give -task-eigs, -task-spectrum or -task-white"},
		{[]string{"task-eigs", "1,2,3,4", "task-eigvecs", "spin"}, `-task-eigvecs = "spin", want identity, random:SEED (a Haar rotation drawn from SEED) or a FILE.npy`},
		// Issue 45, unclear cases 1 and 2: Ω's eigenvectors have no
		// default seed to call random; a white Ω has no eigenvectors of
		// its own.
		{[]string{"task-eigs", "1,2,3,4", "task-eigvecs", "random"}, `-task-eigvecs = "random", want identity, random:SEED (a Haar rotation drawn from SEED) or a FILE.npy`},
		{[]string{"task-white", "2", "task-eigvecs", "random:5"}, `-task-eigvecs = "random:5": -task-white 2 makes the covariance 2·I, of which every vector is an eigenvector; leave -task-eigvecs out`},
		{[]string{"task-eigs", "1,2,3,4", "test-task-white", "2", "test-task-eigvecs", "random:5"}, `-test-task-eigvecs = "random:5": -test-task-white 2 makes the covariance 2·I`},
		{[]string{"test-task-white", "0"}, "-test-task-white = 0, want a finite C > 0"},
		// Issue 45, unclear cases 9 and 10: labels of a variance beyond
		// MaxLabelScale·tr Λ failed in the moments' eigendecomposition,
		// naming no flag. tr Λ = 1 here.
		{[]string{"noise", "1e300"}, "-noise = 1e+300: the labels' variance tr(ΛΩ) + σ² = 1e+300 is more than 1e+08 times the tokens' tr Λ = 1"},
		{[]string{"task-white", "1e200"}, "-task-white = 1e+200: the labels' variance tr(ΛΩ) + σ² = 1e+200 is more than 1e+08"},
		{[]string{"task-eigs", "1e9,1,1,1"}, "-task-eigs = 1e+09,1,1,1: the labels' variance"},
		{[]string{"test-task-white", "2e8"}, "-test-task-white = 2e+08: the labels' variance tr(ΛΩ_test) + σ² = 2e+08"},
		// Issue 45, unclear case 12: train was told "give -layer full".
		{[]string{"layer", "full", "test-task-white", "2", "test", "0"}, "-test-task-white: no in-context test loss is computed here; give -test above 0 (train's test sets)"},
		{[]string{"w0", "1,2,3", "icl", "0.5"}, "-w0 has 3 numbers, want K·D = a multiple of D = 4"},
		{[]string{"w0", "1,2,3,4", "tasks", "2", "icl", "0.5"}, "-tasks = 2 but -w0 holds 1 task vectors"},
		{[]string{"test", "-1"}, "-test = -1, want ≥ 0 test sequences"},
		{[]string{"path", "moments", "attention", "softmax"}, "-path moments is exact for linear attention only"},
		{[]string{"gd", "false", "batch", "10"}, "-gd=false integrates the flow of the full training loss"},
		{[]string{"nu", "0.1"}, "-nu: train draws sequences"},
	} {
		_, err := resolve(parseFlags(t, tc.flags...), 1e12, allGroups...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want %q", tc.flags, err, tc.want)
		}
	}
	// Run's own: the full layer without the context lengths; fixed tasks
	// with no effect.
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"layer", "full", "nu", "0.1"}, "-nu: the full layer's population loss needs the context lengths"},
		{[]string{"tasks", "3"}, "-tasks: with -icl 1 every sequence is in-context and no in-weight test is computed here"},
		{[]string{"w0", "1,2,3,4"}, "-w0: with -icl 1"},
		{[]string{"task-draw", "gaussian"}, "-task-draw: with -icl 1"},
		{[]string{"test-task-white", "2"}, "-test-task-white: no in-context test loss is computed here; give -layer full or labelkey, or a task law other than the paper's"},
	} {
		_, err := resolve(parseFlags(t, tc.flags...), 1e12, GroupSolver, GroupLaw)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("run %v: err = %v, want %q", tc.flags, err, tc.want)
		}
	}
	// Values at the edges of the ranges are accepted.
	for _, flags := range [][]string{
		{"nu", "1"}, {"R", "4"}, {"T", "0"}, {"atol", "5e-324"}, {"samples", "2"}, {"points", "2"}, {"icl", "0"},
		{"test", "0"}, {"batch", "10000"}, {"ntp-max", "1"}, {"spectrum", "power:0", "D", "10"},
		{"icl", "0", "w0", "1,2,3,4,5,6,7,8"}, {"icl", "0.5", "tasks", "16"}, {"noise", "9e7"}, {"task-white", "9e7"},
	} {
		groups := allGroups
		if flags[0] == "nu" {
			groups = groups[:3] // train refuses -nu, the full layer needs N
		}
		if _, err := resolve(parseFlags(t, flags...), 1e12, groups...); err != nil {
			t.Errorf("%v: %v", flags, err)
		}
	}
}

// TestFieldText: a flag's text that is not of the field's type is refused
// by the field's parser, naming what it wants; each kind of field is
// listed.
func TestFieldText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, text, want string }{
		{"D", "3.5", `"3.5" is not an integer`},
		{"seed", "-3", `"-3" is not an integer in [0, 2^64)`},
		{"data-seed", "x", `"x" is not an integer in [0, 2^64)`},
		{"tau", "fast", `"fast" is not a number`},
		{"eigs", "0.4,x", `entry 2 "x" is not a number`},
		{"stability", "maybe", `"maybe" is not true or false`},
		{"model", "softmax", `"softmax" is no model, want separate or merged`},
		{"layer", "half", `"half" is no layer, want full, reduced or labelkey`},
		{"attention", "relu", `"relu" is no attention, want linear or softmax`},
		{"path", "fast", `"fast" is no path, want auto, direct, moments or columns`},
	} {
		if err := (&Spec{}).SetText(tc.name, tc.text); err == nil || err.Error() != tc.want {
			t.Errorf("-%s %s: err = %v, want %q", tc.name, tc.text, err, tc.want)
		}
	}
}

// TestFieldAlternatives: fields that exclude each other are refused
// together, naming both, and a flag given over a spec file replaces the
// file's field together with the fields it excludes.
func TestFieldAlternatives(t *testing.T) {
	t.Parallel()
	values := map[string]string{"eigs": "0.3,0.2", "spectrum": "power:1", "white": "2", "N": "10", "nu": "0.1",
		"ntp-max": "7", "winit": "0.02", "seed": "5", "init": "a.npz", "balanced": "true", "w0": "1,2", "w0-file": "w.npy",
		"task-eigs": "0.3,0.2", "task-spectrum": "power:1", "task-white": "2",
		"test-task-eigs": "0.3,0.2", "test-task-spectrum": "power:1", "test-task-white": "2"}
	pairs := 0
	for _, f := range Fields() {
		for _, a := range f.Alternatives {
			s := parseFlags(t, f.Name, values[f.Name], a, values[a])
			err := CheckFlags(s)
			lo, hi := min(f.Name, a), max(f.Name, a)
			if want := "-" + lo + " and -" + hi + " exclude each other"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("-%s with -%s: err = %v, want %q", f.Name, a, err, want)
			}
			base := parseFlags(t, a, values[a])
			base.Override(parseFlags(t, f.Name, values[f.Name]))
			if base.Given(a) || !base.Given(f.Name) || base.Text(f.Name) != values[f.Name] {
				t.Errorf("-%s over a spec with %s: %s given %v, %s = %q", f.Name, a, a, base.Given(a), f.Name, base.Text(f.Name))
			}
			pairs++
		}
	}
	// Both ways: eigs, spectrum, white; N, nu, ntp-max; init with winit,
	// seed, balanced; w0, w0-file; the task-* and test-task-* triples.
	if pairs != 32 {
		t.Errorf("%d ordered pairs of alternatives, want 32", pairs)
	}
}

// TestInContextAgrees: a spec answers "is every sequence in context"
// (Spec.InContext, asked of sidecars) as the law it resolves to does
// (law.Data.InContext), and the data's answers are those of its task law
// (law.Tasks.InContext, Standard).
func TestInContextAgrees(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{
		{}, {"icl", "1"}, {"layer", "full"}, {"icl", "1", "layer", "full", "tasks", "3"},
		{"icl", "0.5"}, {"icl", "0", "tasks", "2"}, {"noise", "0.1"}, {"task-white", "2"},
	} {
		job, err := resolve(parseFlags(t, flags...), 1e12, GroupSolver, GroupLaw)
		if err != nil {
			t.Fatalf("%v: %v", flags, err)
		}
		tasks := job.Data.Tasks()
		if job.Spec.InContext() != job.Data.InContext() || tasks.InContext() != job.Data.InContext() || tasks.Standard() != job.Data.Standard() {
			t.Errorf("%v: spec in context %v, data %v (tasks %v), standard %v (tasks %v)", flags,
				job.Spec.InContext(), job.Data.InContext(), tasks.InContext(), job.Data.Standard(), tasks.Standard())
		}
	}
}
