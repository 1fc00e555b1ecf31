package spec

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// MaxTasks bounds the number K of fixed tasks.
const MaxTasks = 1 << 20

// DefaultLayer is the layer a command reads unless told: the full layer
// for train's single layer, the reduced layer otherwise (a stack of
// layers is of reduced layers, docs/math.md "Depth").
func DefaultLayer(train bool, layers int) flow.Layer {
	if train && layers < 2 {
		return flow.FullLayer
	}
	return flow.ReducedLayer
}

// resolveLaw settles the layer and the law of the labels (-layer, -icl,
// -noise, -task-* and -test-task-*, -tasks or -w0 or -w0-file,
// -task-draw, -data-seed), read by run and train (forTrain).
func (s *resolver) resolveLaw(forTrain bool) error {
	s.forTrain, s.tasksGiven = forTrain, s.Given("w0") || s.Given("w0-file")
	s.defTo("layer", func() { s.Layer = DefaultLayer(forTrain, s.Layers) })
	if s.Layer == flow.FullLayer && s.Given("nu") {
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
	if s.tasksGiven && !forTrain && !s.Given("data-seed") {
		return nil // run draws nothing from the data seed but tasks
	}
	s.defTo("data-seed", func() { s.DataSeed = s.defaultDataSeed() })
	return nil
}

// defaultDataSeed is -data-seed's default: -seed's value, or
// flow.DefaultSeed with -init.
func (s *resolver) defaultDataSeed() uint64 {
	if s.Given("seed") {
		return s.Seed
	}
	return flow.DefaultSeed
}

// noEffect refuses fixed tasks given where they have no effect.
func (s *resolver) noEffect(flag string) error {
	return fmt.Errorf("%s: with -icl 1 every sequence is in-context and no in-weight test is computed here, so the fixed tasks have no effect; give -icl below 1 (or -layer full or labelkey)", flag)
}

// checkTestLaw refuses Ω_test where no in-context test loss is computed:
// train without test sets, or run where the test losses are not of
// interest (flow.Plan.Tests: none for the reduced layer under the paper's task,
// law.Data.Standard).
func (j *Job) checkTestLaw() error {
	sp := j.Spec
	computed, give := sp.Test > 0, "give -test above 0 (train's test sets)"
	if !sp.Given("test") { // run
		computed, give = j.System.Plan().Tests.ICL, "give -layer full or labelkey, or a task law other than the paper's (-icl below 1, -noise, -task-*)"
	}
	for _, f := range []string{"test-task-eigs", "test-task-spectrum", "test-task-white"} {
		if sp.Given(f) && !computed {
			return fmt.Errorf("-%s: no in-context test loss is computed here; %s", f, give)
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
	return !s.InContext() || s.Layer != flow.ReducedLayer
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
	for _, c := range []struct {
		cov *mat.Dense
		f   covariance
	}{{tasks.Cov, taskCovariance(s.Spec)}, {tasks.TestCov, testTaskCovariance(s.Spec)}} {
		if err := s.checkLabelScale(data, c.cov, c.f); err != nil {
			return nil, err
		}
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
// that it reruns them (with the data seed and -task-draw that drew them:
// givenTasks).
func (j *Job) fixedTasks(s *resolver) ([][]float64, error) {
	if !s.Given("w0-file") && (s.Tasks < 1 || s.Tasks > MaxTasks) { // given where they have no effect: unchecked before
		return nil, fmt.Errorf("-tasks = %d, want 1 ≤ K ≤ %d fixed task vectors", s.Tasks, MaxTasks)
	}
	var fixed [][]float64
	switch {
	case s.Given("w0"):
		for k := 0; k < s.Tasks; k++ {
			fixed = append(fixed, s.W0[k*s.D:(k+1)*s.D])
		}
	case s.Given("w0-file"):
		var err error
		if fixed, err = j.readTasks(s); err != nil {
			return nil, err
		}
	default:
		fixed = s.drawTasks()
		j.DrawnTasks = true
		if s.usesTasks() && s.Tasks*s.D <= maxRecordedTasks {
			s.W0 = slices.Concat(fixed...)
			s.Mark("w0")
		}
		return fixed, nil
	}
	return fixed, j.givenTasks(s, fixed)
}

// drawTasks draws the K fixed tasks from the data seed as -task-draw says.
func (s *resolver) drawTasks() [][]float64 {
	draw := law.FixedTasks
	if s.TaskDraw == "gaussian" {
		draw = law.GaussianTasks
	}
	return draw(s.D, s.Tasks, s.DataSeed)
}

// givenTasks checks the flags that draw tasks beside given ones: -task-draw
// (and, for run, whose data seed draws nothing else, -data-seed) describe
// the tasks only when they draw exactly these, as in the sidecar of a run
// that drew them, which records them as -w0 (Job.DrawnTasks); otherwise
// they have no effect and are refused (issue 45: -w0 … -task-draw
// gaussian was accepted and ignored, and the summary said "drawn").
func (j *Job) givenTasks(s *resolver, fixed [][]float64) error {
	var flags []string
	for _, f := range []string{"task-draw", "data-seed"} {
		if s.Given(f) && (f == "task-draw" || !s.forTrain) {
			flags = append(flags, "-"+f)
		}
	}
	if len(flags) == 0 {
		return nil
	}
	if !s.Given("data-seed") { // the seed a run that drew them had: -data-seed's default
		s.DataSeed = s.defaultDataSeed()
	}
	if slices.EqualFunc(s.drawTasks(), fixed, slices.Equal) {
		j.DrawnTasks = true
		return nil
	}
	given := "-w0"
	if s.Given("w0-file") {
		given = "-w0-file " + s.W0File
	}
	has, it := "has", "it"
	if len(flags) > 1 {
		has, it = "have", "them"
	}
	return fmt.Errorf("%s %s no effect: the fixed tasks are given by %s, not drawn (%s draws others); leave %s out",
		strings.Join(flags, " and "), has, given, describeDraw(s.Spec), it)
}

// describeDraw names how the fixed tasks are drawn: the data seed and
// -task-draw.
func describeDraw(sp *Spec) string {
	draw := sp.TaskDraw
	if draw == "" {
		draw = lookup("task-draw").Default
	}
	return fmt.Sprintf("-data-seed %d with -task-draw %s", sp.DataSeed, draw)
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

// MaxLabelScale bounds the in-context labels' variance tr(ΛΩ) + σ²
// against the tokens' tr Λ: beyond, the moments of the features, which
// hold the labels to the fourth power beside the tokens (docs/math.md,
// "The full layer"), lose their precision in float64 (at 10¹² the full
// layer's least loss L_lb came out above its run's final loss, at 10²⁰⁰ the
// eigendecomposition of its moments failed; up to 10⁸ every layer runs
// and agrees with the reduced one to 10⁻⁷).
const MaxLabelScale = 1e8

// checkLabelScale refuses a label law whose variance tr(ΛΩ) + σ² (Ω =
// cov, nil for I, given by the fields of c) exceeds MaxLabelScale·tr Λ,
// naming the flag that makes it so: -noise, or Ω's.
func (s *resolver) checkLabelScale(data *law.Data, cov *mat.Dense, c covariance) error {
	lam := data.Covariance()
	signal := mat.Trace(lam)
	if cov != nil {
		var prod mat.Dense
		prod.MulElem(lam, cov)
		signal = mat.Sum(&prod) // tr(ΛΩ), both symmetric
	}
	labels, tokens := signal+s.Noise, mat.Trace(lam)
	if labels <= MaxLabelScale*tokens {
		return nil
	}
	flag := fmt.Sprintf("-noise = %g", s.Noise)
	if signal > s.Noise {
		switch {
		case s.Given(c.name("eigs")):
			flag = "-" + c.name("eigs") + " = " + s.Text(c.name("eigs"))
		case s.Given(c.name("white")):
			flag = fmt.Sprintf("-%s = %g", c.name("white"), *c.white)
		default:
			flag = "-" + c.name("spectrum") + " = " + *c.spectrum
		}
	}
	omega := "Ω"
	if c.prefix == "test-task" {
		omega = "Ω_test"
	}
	return fmt.Errorf("%s: the labels' variance tr(Λ%s) + σ² = %.6g is more than %g times the tokens' tr Λ = %.6g, beyond which the moments of the features lose their precision; want a smaller one",
		flag, omega, labels, MaxLabelScale, tokens)
}
