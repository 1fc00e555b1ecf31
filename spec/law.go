package spec

import (
	"fmt"
	"math"
	"slices"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// MaxTasks bounds the number K of fixed tasks.
const MaxTasks = 1 << 20

// resolveLaw settles the layer and the law of the labels (-layer, -icl,
// -noise, -task-* and -test-task-*, -tasks or -w0 or -w0-file,
// -task-draw, -data-seed), read by run and train (forTrain).
func (s *resolver) resolveLaw(forTrain bool) error {
	s.defTo("layer", func() {
		s.Layer = "reduced"
		if forTrain {
			s.Layer = "full"
		}
	})
	if _, ok := flow.LayerByName(s.Layer); !ok {
		return fmt.Errorf("-layer = %q, want full, reduced or labelkey", s.Layer)
	}
	if s.Layer == "full" && s.Given("nu") {
		return fmt.Errorf("-nu: the full layer's population loss needs the context lengths themselves (E[1/N²] too), not only ν: give -N or -ntp-max")
	}
	s.def("icl")
	if !(s.ICL >= 0 && s.ICL <= 1) {
		return fmt.Errorf("-icl = %g, want a fraction c in [0, 1]", s.ICL)
	}
	if s.Given("noise") && (!(s.Noise >= 0) || math.IsInf(s.Noise, 0)) {
		return fmt.Errorf("-noise = %g, want a finite label-noise variance σ² ≥ 0", s.Noise)
	}
	for _, c := range []covariance{taskCovariance(s.Spec), testTaskCovariance(s.Spec)} {
		if err := s.resolveCovariance(c); err != nil {
			return err
		}
	}
	if !s.usesTasks() { // the fixed tasks, and run's data seed, have no effect
		for _, f := range []string{"tasks", "w0", "w0-file", "task-draw"} {
			if s.Given(f) {
				return s.noEffect("-" + f)
			}
		}
		if !forTrain {
			return nil
		}
	} else if err := s.resolveTasks(); err != nil {
		return err
	}
	s.defTo("data-seed", func() {
		s.DataSeed = flow.DefaultSeed
		if s.Given("seed") {
			s.DataSeed = s.Seed
		}
	})
	return nil
}

// noEffect refuses fixed tasks given where they have no effect.
func (s *resolver) noEffect(flag string) error {
	return fmt.Errorf("%s: with -icl 1 every sequence is in-context and no in-weight test is computed here, so the fixed tasks have no effect; give -icl below 1 (or -layer full or labelkey)", flag)
}

// checkTestLaw refuses Ω_test where no in-context test loss is computed:
// train without test sets, or run where the test losses are not of
// interest (TestLossesMatter: the reduced layer under the paper's task,
// law.Data.Standard).
func (j *Job) checkTestLaw() error {
	sp := j.Spec
	computed := sp.Test > 0
	if !sp.Given("test") { // run
		computed = TestLossesMatter(j.System)
	}
	for _, f := range []string{"test-task-eigs", "test-task-spectrum", "test-task-white"} {
		if sp.Given(f) && !computed {
			return fmt.Errorf("-%s: no in-context test loss is computed here; give -layer full or labelkey, a task law other than the paper's (-icl below 1, -noise, -task-*), or train with -test above 0", f)
		}
	}
	return nil
}

// resolveTasks settles the fixed tasks where they have an effect (some
// sequences not in-context, or the in-weight test loss computed: train
// with test sets, run of the full layer): -w0 (K·D numbers), or -tasks K
// drawn from the data seed.
func (s *resolver) resolveTasks() error {
	if s.Given("task-draw") && s.TaskDraw != "scaled" && s.TaskDraw != "gaussian" {
		return fmt.Errorf("-task-draw = %q, want scaled or gaussian", s.TaskDraw)
	}
	if s.Given("w0") {
		if len(s.W0) == 0 || len(s.W0)%s.D != 0 {
			return fmt.Errorf("-w0 has %d numbers, want K·D = a multiple of D = %d (K task vectors)", len(s.W0), s.D)
		}
		for i, x := range s.W0 {
			if !(math.Abs(x) <= maxTaskEntry) {
				return fmt.Errorf("-w0: entry %d is %g, want finite numbers of size at most %g", i+1, x, maxTaskEntry)
			}
		}
		if k := len(s.W0) / s.D; s.Given("tasks") && s.Tasks != k {
			return fmt.Errorf("-tasks = %d but -w0 holds %d task vectors of D = %d; give one of the two", s.Tasks, k, s.D)
		}
		s.Tasks = len(s.W0) / s.D
		s.Mark("tasks")
	}
	if s.Given("w0-file") {
		return nil // K is the file's (readTasks)
	}
	s.def("tasks")
	if s.Tasks < 1 || s.Tasks > MaxTasks {
		return fmt.Errorf("-tasks = %d, want 1 ≤ K ≤ %d fixed task vectors", s.Tasks, MaxTasks)
	}
	return nil
}

// usesTasks reports whether the fixed tasks have an effect: the law draws
// some sequences' tasks from them (not Spec.InContext), or the in-weight
// test loss is computed (train with test sets, run of a layer with extra
// blocks).
func (s *resolver) usesTasks() bool {
	if s.Given("test") { // train
		return !s.InContext() || s.Test > 0
	}
	return !s.InContext() || s.Layer != "reduced"
}

// lengths returns the context lengths of -N or -ntp-max (only ν with -nu).
func (s *resolver) lengths() law.Lengths {
	switch {
	case s.Given("N"):
		return law.Lengths{N: s.N}
	case s.Given("ntp-max"):
		return law.Lengths{NTPMax: s.NTPMax}
	}
	return law.Lengths{Nu: s.Nu}
}

// maxTaskEntry bounds the entries of fixed task vectors: the law's
// moments hold their fourth powers, which must stay finite.
const maxTaskEntry = 1e50

// maxRecordedTasks bounds the numbers a sidecar records as -w0 of drawn
// tasks; beyond it the data seed and -task-draw repeat them.
const maxRecordedTasks = 4096

// law returns data with the law of the labels: -icl, -noise, Ω and
// Ω_test, and the fixed tasks of -w0, -w0-file or drawn (K of them, from
// the data seed).
func (j *Job) law(s *resolver, data *law.Data) (*law.Data, error) {
	tasks := law.Tasks{ICL: s.ICL, Noise: s.Noise}
	var err error
	if tasks.Cov, err = j.covarianceMatrix(s, taskCovariance(s.Spec)); err != nil {
		return nil, err
	}
	if tasks.TestCov, err = j.covarianceMatrix(s, testTaskCovariance(s.Spec)); err != nil {
		return nil, err
	}
	if s.Given("tasks") || s.Given("w0-file") {
		if tasks.Fixed, err = j.fixedTasks(s); err != nil {
			return nil, err
		}
	}
	data, err = data.WithTasks(tasks)
	if err != nil {
		return nil, fmt.Errorf("the task law: %w", err)
	}
	return data, nil
}

// fixedTasks returns the tasks of -w0, -w0-file, or drawn. A sidecar
// records drawn tasks as -w0 when they have an effect and are few, so
// that it reruns them.
func (j *Job) fixedTasks(s *resolver) ([][]float64, error) {
	if !s.Given("w0-file") && (s.Tasks < 1 || s.Tasks > MaxTasks) { // given where they have no effect: unchecked before
		return nil, fmt.Errorf("-tasks = %d, want 1 ≤ K ≤ %d fixed task vectors", s.Tasks, MaxTasks)
	}
	switch {
	case s.Given("w0"):
		fixed := make([][]float64, 0, s.Tasks)
		for k := 0; k < s.Tasks; k++ {
			fixed = append(fixed, s.W0[k*s.D:(k+1)*s.D])
		}
		return fixed, nil
	case s.Given("w0-file"):
		return j.readTasks(s)
	}
	draw := law.FixedTasks
	if s.TaskDraw == "gaussian" {
		draw = law.GaussianTasks
	}
	fixed := draw(s.D, s.Tasks, s.DataSeed)
	if s.usesTasks() && s.Tasks*s.D <= maxRecordedTasks {
		s.W0 = slices.Concat(fixed...)
		s.Mark("w0")
	}
	return fixed, nil
}

// readTasks reads -w0-file, a (K, D) float64 array.
func (j *Job) readTasks(s *resolver) ([][]float64, error) {
	data, shape, err := j.readNPY("w0-file", &s.W0File)
	if err != nil {
		return nil, err
	}
	if len(shape) != 2 || shape[1] != s.D || shape[0] < 1 || shape[0] > MaxTasks {
		return nil, fmt.Errorf("-w0-file %s has shape %v, want (K, %d) with 1 ≤ K ≤ %d", s.W0File, shape, s.D, MaxTasks)
	}
	if s.Given("tasks") && s.Tasks != shape[0] {
		return nil, fmt.Errorf("-tasks = %d but -w0-file holds %d task vectors; give one of the two", s.Tasks, shape[0])
	}
	for i, x := range data {
		if !(math.Abs(x) <= maxTaskEntry) {
			return nil, fmt.Errorf("-w0-file %s: entry %d is %g, want finite numbers of size at most %g", s.W0File, i, x, maxTaskEntry)
		}
	}
	s.Tasks = shape[0]
	s.Mark("tasks")
	fixed := make([][]float64, shape[0])
	for k := range fixed {
		fixed[k] = data[k*s.D : (k+1)*s.D : (k+1)*s.D]
	}
	return fixed, nil
}
