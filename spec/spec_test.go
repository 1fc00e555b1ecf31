package spec

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
)

// TestDefaults: the empty spec resolves to the paper's D = 4 example; the
// solver's fields stay unset in Job.Spec, and Filled gives them as the
// flow resolves them (auto, 1e-8 and 1e-12: flow.Plan,
// flow.Tolerances).
func TestDefaults(t *testing.T) {
	job, err := Resolve(&Spec{}, GroupSolver)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(job.Spec); strings.Contains(string(b), `"T"`) || strings.Contains(string(b), "method") || job.Method != nil {
		t.Errorf("the solver's fields are filled in before the run: %s", b)
	}
	s := job.Filled()
	if s.Model != flow.Separate || s.D != 4 || s.H != 4 || s.R != 1 || s.N != 31 || s.WInit != 0.01 || s.Seed != 3 ||
		s.T != 0 || s.Tol != 1e-6 || s.Samples != 2001 || s.Grid != "drops" || s.Method != "auto" || s.Eigvecs != "random:1" {
		t.Errorf("defaults: %+v", s)
	}
	if got := job.Data.Lambda(); len(got) != 4 || got[0] != 0.4 || got[3] != 0.1 {
		t.Errorf("eigenvalues %v", got)
	}
	if job.Data.Nu() != 1.0/31 || job.System.Len() != 36 {
		t.Errorf("ν = %v, state size %d", job.Data.Nu(), job.System.Len())
	}
	b, _ := json.Marshal(s)
	want := `{"model":"separate","D":4,"eigs":[0.4,0.3,0.2,0.1],"eigvecs":"random:1","N":31,"H":4,"R":1,"winit":0.01,"seed":3,"tau":1,"layers":1,"tie":false,` +
		`"T":0,"tol":0.000001,"samples":2001,"grid":"drops","method":"auto","rtol":1e-8,"atol":1e-12}`
	if string(b) != want {
		t.Errorf("resolved spec\n%s\nwant\n%s", b, want)
	}
}

// TestLayering: a flag replaces the spec file's field and its alternatives.
func TestLayering(t *testing.T) {
	base, err := Parse([]byte(`{"N": 10, "eigs": [0.5, 0.25], "seed": 1, "meta": {"ignored": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	flags := &Spec{}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	for _, name := range []string{"ntp-max", "white", "D", "init"} {
		fs.Var(NewValue(flags, name), name, "")
	}
	if err := fs.Parse([]string{"-ntp-max", "4", "-white", "2", "-D", "3"}); err != nil {
		t.Fatal(err)
	}
	base.Override(flags)
	if base.Given("N") || base.Given("eigs") || !base.Given("ntp-max") || base.NTPMax != 4 || base.White != 2 || base.Seed != 1 {
		t.Errorf("override: %+v", base)
	}
	job, err := Resolve(base)
	if err != nil {
		t.Fatal(err)
	}
	// ν = H_4/4 = (1 + 1/2 + 1/3 + 1/4)/4 = 25/48.
	if math.Abs(job.Data.Nu()-25.0/48) > 1e-15 || job.Data.Lambda()[2] != 2 {
		t.Errorf("ν = %v, λ = %v", job.Data.Nu(), job.Data.Lambda())
	}
	for _, bad := range []string{`{"N": 3, "nu": 0.5}`, `{"init": "a.npz", "seed": 2}`, `{"bogus": 1}`, `{"N": 3.5}`, `{"seed": -1}`, `{"eigs": null}`, `[1]`, `{"N": 3} {}`, `null`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestInputFiles: -eigvecs and -init files, in C and Fortran order, are
// read, hashed and recorded with absolute paths.
func TestInputFiles(t *testing.T) {
	dir := t.TempDir()
	// A rotation by 30° in the plane of the first two coordinates.
	c, s := math.Cos(math.Pi/6), math.Sin(math.Pi/6)
	vecs := filepath.Join(dir, "vecs.npy")
	if err := export.SaveNPY(vecs, export.Floats("x", []float64{c, -s, 0, s, c, 0, 0, 0, 1}, 3, 3)); err != nil {
		t.Fatal(err)
	}
	sp, err := Parse([]byte(`{"eigs": [0.3, 0.2, 0.1], "eigvecs": "vecs.npy", "H": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	sp.Rebase(dir)
	job, err := Resolve(sp)
	if err != nil {
		t.Fatal(err)
	}
	if got := job.Data.Vecs().At(1, 0); math.Abs(got-s) > 1e-15 {
		t.Errorf("eigenvector 1 = column 0: V[1][0] = %v, want %v", got, s)
	}
	if in := job.Inputs["eigvecs"]; in.Path != vecs || len(in.SHA256) != 64 || job.Spec.Eigvecs != vecs {
		t.Errorf("input record %+v, spec %q", in, job.Spec.Eigvecs)
	}

	// Fortran order: the C-order matrix [[1,2,3],[4,5,6]] stored by columns.
	fortran := []byte("\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }")
	fortran = append(fortran, bytes.Repeat([]byte(" "), 127-len(fortran))...) // header padded to 128 bytes
	fortran = append(fortran, '\n')
	for _, x := range []float64{1, 4, 2, 5, 3, 6} {
		var b [8]byte
		bits := math.Float64bits(x)
		for i := range b {
			b[i] = byte(bits >> (8 * i))
		}
		fortran = append(fortran, b[:]...)
	}
	data, shape, err := decodeNPY(fortran)
	if err != nil {
		t.Fatal(err)
	}
	if len(shape) != 2 || shape[0] != 2 || shape[1] != 3 || jsonOf(data) != "[1,2,3,4,5,6]" {
		t.Errorf("Fortran order: shape %v, data %v", shape, data)
	}
}

func jsonOf(x any) string { b, _ := json.Marshal(x); return string(b) }

// TestMemoryRefusal: a job larger than the memory limit is refused with its
// estimated size before anything is allocated.
func TestMemoryRefusal(t *testing.T) {
	t.Parallel()
	sp, _ := Parse([]byte(`{"spectrum": "power:1", "D": 20000}`))
	_, err := resolve(sp, 1e9, GroupSolver)
	if err == nil || !strings.Contains(err.Error(), "needs an estimated") || !strings.Contains(err.Error(), "1 GB available") {
		t.Errorf("err = %v", err)
	}
}

// FuzzParse: any input either fails to parse or resolve with an error, or
// resolves to a spec whose JSON parses and resolves to the same JSON.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"model": "merged", "H": 2}`, `{"spectrum": "power:1.5", "D": 5, "R": 2}`,
		`{"white": 2, "D": 3, "ntp-max": 7, "T": 100, "grid": "log"}`, `{"eigs": [1, 2, 3], "nu": 0.25, "eigvecs": "identity"}`,
		`{"eigvecs": "random:99", "seed": 18446744073709551615, "winit": 1e-300}`, `{"tol": 0.5, "stability": false, "align": 0.5}`,
		`{"D": -1}`, `{"samples": 1e3}`, `{"model": "separate", "meta": {"x": 1}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		if s.Given("init") || (s.Given("eigvecs") && strings.HasSuffix(s.Eigvecs, ".npy")) {
			return // file inputs are tested elsewhere
		}
		job, err := resolve(s, 2e7, GroupSolver, GroupLandscape, GroupReduced)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		b1, err := json.Marshal(job.Spec)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := Parse(b1)
		if err != nil {
			t.Fatalf("resolved spec %s does not parse: %v", b1, err)
		}
		job2, err := resolve(s2, 2e7, GroupSolver, GroupLandscape, GroupReduced)
		if err != nil {
			t.Fatalf("resolved spec %s does not resolve: %v", b1, err)
		}
		b2, _ := json.Marshal(job2.Spec)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("resolution is not idempotent:\n%s\n%s", b1, b2)
		}
		for i, y := range job.Y0 {
			if math.IsNaN(y) || math.IsInf(y, 0) || y != job2.Y0[i] {
				t.Fatalf("initial state %d: %v, %v", i, y, job2.Y0[i])
			}
		}
	})
}

// TestTaskLawFiles: -w0-file gives the fixed tasks (K from the file) and
// -task-eigvecs a .npy of Ω's eigenvectors; the sidecar records both
// files with their hashes, and Ω = V diag(e) Vᵀ.
func TestTaskLawFiles(t *testing.T) {
	dir := t.TempDir()
	tasks, vecs := filepath.Join(dir, "tasks.npy"), filepath.Join(dir, "vecs.npy")
	w := []float64{1, 2, 3, 4, -1, 0.5, 0, 2}
	if err := export.SaveNPY(tasks, export.Floats("w", w, 2, 4)); err != nil {
		t.Fatal(err)
	}
	c, s := math.Cos(0.3), math.Sin(0.3) // a rotation in the plane of e_1, e_2
	v := []float64{c, -s, 0, 0, s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
	if err := export.SaveNPY(vecs, export.Floats("v", v, 4, 4)); err != nil {
		t.Fatal(err)
	}
	sp := &Spec{}
	for _, kv := range [][2]string{{"icl", "0.5"}, {"w0-file", tasks}, {"task-eigs", "2,1,1,1"}, {"task-eigvecs", vecs}, {"noise", "0.1"}} {
		if err := sp.SetText(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	job, err := Resolve(sp, RunGroups()...)
	if err != nil {
		t.Fatal(err)
	}
	law := job.Data.Tasks()
	if len(law.Fixed) != 2 || law.Fixed[1][1] != 0.5 || job.Spec.Tasks != 2 || law.Noise != 0.1 {
		t.Errorf("tasks %v (K = %d), noise %g", law.Fixed, job.Spec.Tasks, law.Noise)
	}
	// Ω = I + v₁v₁ᵀ with v₁ = (c, s, 0, 0): Ω₀₁ = cs.
	if got := law.Cov.At(0, 1); math.Abs(got-c*s) > 1e-15 {
		t.Errorf("Ω₀₁ = %g, want cos·sin = %g", got, c*s)
	}
	for _, f := range []string{"w0-file", "task-eigvecs"} {
		if in, ok := job.Inputs[f]; !ok || in.SHA256 == "" || !filepath.IsAbs(in.Path) {
			t.Errorf("-%s not recorded: %+v", f, in)
		}
	}
}

// TestTestLawEigenvectors: Ω_test given by its eigenvalues alone takes
// Ω's eigenvectors (issue 45, unclear case 14: it took the identity, so
// -task-eigs 4,2,1,0.5 -task-eigvecs random:5 -test-task-eigs 4,2,1,0.5
// tested on another law than the training one); with a white Ω, or none,
// the identity. A white covariance records no eigenvectors, as it has
// none of its own.
func TestTestLawEigenvectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags    []string
		vecs     string // the resolved -test-task-eigvecs
		sameAsTr bool   // Ω_test = Ω
	}{
		{[]string{"task-eigs", "4,2,1,0.5", "task-eigvecs", "random:5", "test-task-eigs", "4,2,1,0.5"}, "random:5", true},
		{[]string{"task-eigs", "4,2,1,0.5", "task-eigvecs", "random:5", "test-task-eigs", "4,2,1,0.5", "test-task-eigvecs", "identity"}, "identity", false},
		{[]string{"task-white", "2", "test-task-eigs", "4,2,1,0.5"}, "identity", false},
		{[]string{"noise", "0.1", "test-task-spectrum", "power:1"}, "identity", false},
	} {
		job, err := Resolve(parseFlags(t, tc.flags...), RunGroups()...)
		if err != nil {
			t.Fatalf("%v: %v", tc.flags, err)
		}
		tasks := job.Data.Tasks()
		if got := job.Spec.TestTaskEigvecs; got != tc.vecs {
			t.Errorf("%v: -test-task-eigvecs resolved to %q, want %q", tc.flags, got, tc.vecs)
		}
		if same := tasks.Cov != nil && mat.EqualApprox(tasks.Cov, tasks.TestCov, 1e-15); same != tc.sameAsTr {
			t.Errorf("%v: Ω_test = Ω is %v, want %v", tc.flags, same, tc.sameAsTr)
		}
		if job.Spec.Given("task-white") && job.Spec.Given("task-eigvecs") {
			t.Errorf("%v: a white Ω records -task-eigvecs %q", tc.flags, job.Spec.TaskEigvecs)
		}
	}
}

// TestInputDataTypes: an input array of another type than float64 is
// refused with one message, whatever the reader knows of the type (issue
// 45, unclear case 3: float32 was refused "want float64 …, int64 or bool",
// int64 "want float64"): -w0-file of float32 (numpy's default for torch
// tensors) and of int64, and an -init array of int64.
func TestInputDataTypes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f32 := filepath.Join(dir, "f32.npy")
	// A (2, 4) float32 array as numpy.save writes it: magic, version 1.0,
	// the header padded to 128 bytes with a newline, the data.
	header := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }"
	header += strings.Repeat(" ", 128-10-len(header)-1) + "\n"
	raw := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), 0)
	raw = append(append(raw, header...), make([]byte, 8*4)...)
	if err := os.WriteFile(f32, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	i64 := filepath.Join(dir, "i64.npy")
	if err := export.SaveNPY(i64, export.Ints("w", make([]int64, 8), 2, 4)); err != nil {
		t.Fatal(err)
	}
	init := filepath.Join(dir, "init.npz")
	if err := export.SaveNPZ(init, []export.Array{export.Ints("v", make([]int64, 4), 4),
		export.Floats("K", make([]float64, 16), 4, 1, 4), export.Floats("Q", make([]float64, 16), 4, 1, 4)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"icl", "0.5", "w0-file", f32}, `-w0-file ` + f32 + `: data type "<f4", want float64 ('<f8'; numpy: a.astype(numpy.float64))`},
		{[]string{"icl", "0.5", "w0-file", i64}, `-w0-file ` + i64 + `: data type "<i8", want float64 ('<f8'; numpy: a.astype(numpy.float64))`},
		{[]string{"init", init}, `-init ` + init + `: array "v": data type "<i8", want float64 ('<f8'; numpy: a.astype(numpy.float64))`},
	} {
		_, err := Resolve(parseFlags(t, tc.flags...), RunGroups()...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: err = %v, want %s", tc.flags, err, tc.want)
		}
	}
}

// TestGivenTasks: with the fixed tasks given (-w0, -w0-file), the flags
// that would draw them have no effect and are refused (issue 45, unclear
// cases 7 and 8: -task-draw gaussian and, for run, -data-seed were
// accepted and ignored, and the summary said "drawn" and named the seed);
// train's -data-seed, which draws its sequences, stays. A run's resolved
// spec, which records drawn tasks as -w0 with the data seed and -task-draw
// that drew them, resolves again to the same tasks, drawn
// (Job.DrawnTasks); tasks given record no data seed for run.
func TestGivenTasks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"icl", "0.5", "w0", "1,2,3,4", "task-draw", "gaussian"}, "-task-draw has no effect: the fixed tasks are given by -w0, not drawn (-data-seed 3 with -task-draw gaussian draws others); leave it out"},
		{[]string{"icl", "0.5", "w0", "1,2,3,4", "data-seed", "7"}, "-data-seed has no effect: the fixed tasks are given by -w0, not drawn (-data-seed 7 with -task-draw scaled draws others); leave it out"},
		{[]string{"icl", "0.5", "w0", "1,2,3,4", "data-seed", "7", "task-draw", "gaussian"}, "-task-draw and -data-seed have no effect"},
	} {
		if _, err := Resolve(parseFlags(t, tc.flags...), RunGroups()...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %v: err = %v, want %q", tc.flags, err, tc.want)
		}
	}
	job, err := Resolve(parseFlags(t, "icl", "0.5", "w0", "1,2,3,4", "data-seed", "7"), GroupTrain, GroupLaw)
	if err != nil || job.DrawnTasks {
		t.Errorf("train -w0 -data-seed 7: %v, drawn %v", err, job != nil && job.DrawnTasks)
	}
	job, err = Resolve(parseFlags(t, "icl", "0.5", "w0", "1,2,3,4"), RunGroups()...)
	if err != nil || job.DrawnTasks || job.Spec.Given("data-seed") {
		t.Errorf("run -w0: %v; drawn %v, data seed recorded %v", err, job != nil && job.DrawnTasks, job != nil && job.Spec.Given("data-seed"))
	}
	drawn, err := Resolve(parseFlags(t, "icl", "0.5", "tasks", "3", "task-draw", "gaussian", "data-seed", "5"), RunGroups()...)
	if err != nil || !drawn.DrawnTasks || !drawn.Spec.Given("w0") {
		t.Fatalf("drawn tasks: %v, drawn %v", err, drawn != nil && drawn.DrawnTasks)
	}
	again, err := Resolve(drawn.Spec, RunGroups()...)
	if err != nil || !again.DrawnTasks {
		t.Fatalf("the drawn run's spec: %v, drawn %v", err, again != nil && again.DrawnTasks)
	}
	a, b := drawn.Data.Tasks().Fixed, again.Data.Tasks().Fixed
	if len(a) != 3 || !slices.EqualFunc(a, b, slices.Equal) {
		t.Errorf("tasks %v, again %v", a, b)
	}
}
