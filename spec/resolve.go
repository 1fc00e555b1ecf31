package spec

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/internal/choice"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/output"
)

// maxNTP bounds -ntp-max. The landscape of the separate model has 2^D
// rows; the stability analysis diagonalizes a Jacobian of size H + 2HRD at
// each.
const (
	maxNTP          = 1 << 24
	MaxTableDim     = 24
	MaxStabilityDim = 10
)

// resolver is a spec being resolved, with the memory a job may use.
type resolver struct {
	*Spec
	memoryLimit float64
	// forTrain: the law is train's, whose data seed also draws the
	// sequences; tasksGiven: the fixed tasks were given (-w0 or -w0-file),
	// not drawn, before resolution recorded any drawn ones as -w0.
	forTrain, tasksGiven bool
}

// Job is a resolved specification with the objects it describes.
type Job struct {
	// Spec has every field the command reads given, but the solver's that
	// the flow fills in (-T, -tol, -samples, -grid, -method, -rtol, -atol:
	// flow.RunSettings.Resolve) until Record sets them to what a run
	// resolved.
	Spec   *Spec
	Data   *law.Data
	System *flow.System
	Y0     []float64  // initial state, original basis
	Method ode.Method // -method's; nil for the flow's choice until Record
	Inputs map[string]output.Input
	// MemoryBytes is the estimated peak memory of the job.
	MemoryBytes float64
	// Notes are what a user should know about a valid job before it runs
	// (a start that takes long to leave, a slow method), one line each.
	Notes []string
	// DrawnTasks reports whether the fixed tasks were drawn from the data
	// seed as -task-draw says (Spec.W0 then records them when they are
	// few), not given by -w0 or -w0-file; false without fixed tasks.
	DrawnTasks bool

	groups []Group // the groups of fields the command reads
}

// Resolve fills the defaults of every field the commands in groups read
// but the solver's (Job.Spec), validates them and builds the job; it refuses jobs that need more than
// the memory the kernel reports available. Errors name the field and its
// allowed range.
func Resolve(given *Spec, groups ...Group) (*Job, error) {
	return resolve(given, AvailableMemory(), groups...)
}

// resolve is Resolve with memoryLimit bytes available.
func resolve(given *Spec, memoryLimit float64, groups ...Group) (*Job, error) {
	s := &resolver{Spec: given.Clone(), memoryLimit: memoryLimit}
	reads := map[Group]bool{GroupProblem: true}
	for _, g := range groups {
		reads[g] = true
	}
	if err := s.checkGiven(slices.Sorted(maps.Keys(reads))); err != nil {
		return nil, err
	}
	steps := []func() error{s.resolveModel, s.resolveSpectrum, s.resolveContext, s.resolveHeads, s.resolveStart}
	if reads[GroupSolver] {
		steps = append(steps, s.resolveEnd)
	}
	if reads[GroupSolver] || reads[GroupTrain] {
		steps = append(steps, s.resolveOutput)
	}
	if reads[GroupTrain] {
		steps = append(steps, s.resolveTrain)
	}
	if reads[GroupLaw] {
		steps = append(steps, func() error { return s.resolveLaw(reads[GroupTrain]) })
	}
	if reads[GroupSolver] || reads[GroupTrain] {
		steps = append(steps, s.resolveMethod)
	}
	if reads[GroupLandscape] {
		steps = append(steps, s.resolveLandscape)
	}
	if reads[GroupReduced] {
		steps = append(steps, s.resolveReduced)
	}
	steps = append(steps, func() error { return s.checkDepth(reads) })
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	job := &Job{Spec: s.Spec, Inputs: map[string]output.Input{}, groups: append([]Group{GroupProblem}, groups...)}
	job.MemoryBytes = s.estimateBytes(reads)
	if err := s.checkMemory(job.MemoryBytes); err != nil {
		return nil, err
	}
	// Build: everything cheap is validated, the System's memory is known
	// to suffice.
	if err := job.build(s); err != nil {
		return nil, err
	}
	if reads[GroupLaw] {
		if err := job.checkTestLaw(); err != nil {
			return nil, err
		}
	}
	if s.Given("method") {
		job.Method, _ = ode.MethodByName(s.Method)
	}
	if reads[GroupSolver] {
		if err := job.checkRun(s); err != nil {
			return nil, err
		}
	}
	return job, nil
}

// checkGiven refuses, whatever the groups, a given field they do not read
// (resolved without them it would be ignored: {"layer": "full"} without
// GroupLaw would run the reduced layer) and a given choice that names
// none: a model, layer, path or activation out of range (set in Go without
// SetText), or a method ode does not know.
func (s *resolver) checkGiven(groups []Group) error {
	for _, f := range fields {
		if !s.Given(f.Name) {
			continue
		}
		if !f.ReadBy(groups) {
			return fmt.Errorf("spec: field %q is not read by the groups resolved (%v); resolve with its command's groups (RunGroups for run)", f.Name, groups)
		}
		if c, ok := f.ptr(s.Spec).(encoding.TextMarshaler); ok {
			if _, err := c.MarshalText(); err != nil {
				return fmt.Errorf("-%s: %w", f.Name, err)
			}
		}
	}
	if _, ok := ode.MethodByName(s.Method); s.Given("method") && !ok {
		return fmt.Errorf("-method = %q, want %s", s.Method, choice.OrList(ode.MethodNames()))
	}
	return nil
}

// checkMemory refuses a job that needs more than the memory available.
func (s *resolver) checkMemory(need float64) error {
	if need > s.memoryLimit {
		return fmt.Errorf("-D = %d, -H = %d: the job needs an estimated %s, more than the %s available; lower -D, -H, -R or -samples",
			s.D, s.H, formatBytes(need), formatBytes(s.memoryLimit))
	}
	return nil
}

// checkRun validates the run of a built job: its method, and its memory
// (runBytes) with the problem's; it notes a slow method or start.
func (job *Job) checkRun(s *resolver) error {
	if err := job.checkDenseMethod(); err != nil {
		return err
	}
	// The continuous extension grows with the run's steps up to its bound
	// (DenseBudget: an eighth of the memory, at least
	// flow.DefaultDenseBytes); the steps are not known in advance, so it
	// counts an eighth of the memory, its share where memory is ample.
	job.MemoryBytes += job.runBytes(int(s.memoryLimit / 8))
	if err := s.checkMemory(job.MemoryBytes); err != nil {
		return err
	}
	job.noteDenseCost()
	if s.T == 0 {
		return job.checkEscape()
	}
	return nil
}

// checkDenseMethod refuses the methods that factor dense matrices of the
// state's size (ode.MaxDenseDim) for larger states.
func (job *Job) checkDenseMethod() error {
	n := job.System.Len()
	m := job.Method // the flow's own choice is never one (flow.Plan)
	if m == nil {
		return nil
	}
	switch m.Family() {
	case ode.DenseImplicit:
		if n <= ode.MaxDenseDim {
			return nil
		}
		return fmt.Errorf("-method = %s factors dense matrices of the state's size, at most %d; here D = %d, H = %d give %d: use auto or rock4",
			methodName(m), ode.MaxDenseDim, job.Spec.D, job.Spec.H, n)
	}
	return nil
}

// def sets the field called name to its default (Field.Default) unless
// it was given, and marks it given.
func (s *resolver) def(name string) {
	f, _ := Lookup(name)
	s.defTo(name, func() { _ = s.SetText(name, f.Default) }) // TestFieldDefaults: each parses
}

// defTo sets the field called name by set unless it was given, and marks
// it given.
func (s *resolver) defTo(name string, set func()) {
	if !s.Given(name) {
		set()
		s.Mark(name)
	}
}

// resolveModel settles the model; a given one checkGiven checked.
func (s *resolver) resolveModel() error {
	s.def("model")
	return nil
}

// resolveSpectrum settles the eigenvalues (-eigs, -spectrum or -white, and
// D) and the eigenvectors.
func (s *resolver) resolveSpectrum() error {
	if !s.Given("spectrum") && !s.Given("white") {
		s.def("eigs")
	}
	switch {
	case s.Given("eigs"):
		if len(s.Eigs) == 0 {
			return fmt.Errorf("-eigs is empty, want D ≥ 1 eigenvalues")
		}
		for i, l := range s.Eigs {
			if !(l > 0) || math.IsInf(l, 0) {
				return fmt.Errorf("-eigs: entry %d is %g, want a finite eigenvalue > 0", i+1, l)
			}
		}
		if s.Given("D") && s.D != len(s.Eigs) {
			return fmt.Errorf("-D = %d but -eigs has %d values; give D equal to their number, or leave it out", s.D, len(s.Eigs))
		}
		s.D = len(s.Eigs)
		s.Mark("D")
	case !s.Given("D"):
		return fmt.Errorf("-D is needed with -spectrum and -white: the dimension D ≥ 1")
	case s.D < 1:
		return fmt.Errorf("-D = %d, want D ≥ 1", s.D)
	case s.Given("white"):
		if !(s.White > 0) || math.IsInf(s.White, 0) {
			return fmt.Errorf("-white = %g, want a finite C > 0", s.White)
		}
	default:
		if _, err := parsePower("spectrum", s.Spectrum); err != nil {
			return err
		}
	}
	s.def("eigvecs")
	if s.Eigvecs == "random" {
		s.Eigvecs = lookup("eigvecs").Default // -eigvecs' usage: random is the default's Haar rotation
	}
	return nil
}

// lambda returns the eigenvalues of a resolved spec.
func (s *resolver) lambda() []float64 {
	switch {
	case s.Given("eigs"):
		return s.Eigs
	case s.Given("white"):
		return law.White(s.D, s.White)
	default:
		alpha, _ := parsePower("spectrum", s.Spectrum) // checked by resolveSpectrum
		return law.PowerLaw(s.D, alpha, 1)
	}
}

// resolveContext settles the context length: -N, -nu or -ntp-max.
func (s *resolver) resolveContext() error {
	if !s.Given("nu") && !s.Given("ntp-max") {
		s.def("N")
	}
	switch {
	case s.Given("N"):
		if s.N < 1 {
			return fmt.Errorf("-N = %d, want a context length N ≥ 1", s.N)
		}
	case s.Given("nu"):
		if !(s.Nu > 0 && s.Nu <= 1) {
			return fmt.Errorf("-nu = %g, want ν = E[1/N] in (0, 1]", s.Nu)
		}
	default:
		if s.NTPMax < 1 || s.NTPMax > maxNTP {
			return fmt.Errorf("-ntp-max = %d, want 1 ≤ Nmax ≤ %d", s.NTPMax, maxNTP)
		}
	}
	return nil
}

// resolveHeads settles H, R, -balanced and τ.
func (s *resolver) resolveHeads() error {
	s.defTo("H", func() { s.H = s.D })
	if s.H < 1 {
		return fmt.Errorf("-H = %d, want H ≥ 1 heads", s.H)
	}
	if s.Model == flow.Separate {
		s.def("R")
		if s.R < 1 || s.R > s.D {
			return fmt.Errorf("-R = %d, want 1 ≤ R ≤ D = %d", s.R, s.D)
		}
	} else if s.Given("R") {
		s.Clear("R") // keys and queries are merged: R has no meaning
	}
	if s.Model == flow.Merged && !s.Given("init") {
		s.def("balanced")
	} else if s.Balanced { // with -init the two exclude each other (checkAlternatives)
		return fmt.Errorf("-balanced is for the merged model's random start, not -model %s", s.Model)
	}
	s.def("tau")
	if !(s.Tau > 0) || math.IsInf(s.Tau, 0) {
		return fmt.Errorf("-tau = %g, want a finite time constant τ > 0", s.Tau)
	}
	return s.resolveDepth()
}

// resolveDepth settles -layers and -tie: a stack of 1 to
// law.MaxStackLayers layers, tied only from 2, whose loss needs the
// context lengths themselves (law.StackLoss), not ν alone.
func (s *resolver) resolveDepth() error {
	s.def("layers")
	s.def("tie")
	switch {
	case s.Layers < 1 || s.Layers > law.MaxStackLayers:
		return fmt.Errorf("-layers = %d, want 1 ≤ L ≤ %d (a stack's loss is compiled up to %d layers: docs/math.md, \"Depth\")", s.Layers, law.MaxStackLayers, law.MaxStackLayers)
	case s.Tie && s.Layers < 2:
		return fmt.Errorf("-tie with -layers %d: tying shares one set of heads between layers, give -layers 2 to %d", s.Layers, law.MaxStackLayers)
	case s.Layers > 1 && s.Given("nu"):
		return fmt.Errorf("-layers %d with -nu: a stack's loss needs E[1/N^p] up to p = %d, not ν alone: give -N or -ntp-max", s.Layers, 2*s.Layers+1)
	}
	return nil
}

// checkDepth refuses a stack where the command or the layer has one
// layer: the 1-D theory (reduced), the fixed points (landscape), the full
// and label-key layers.
func (s *resolver) checkDepth(reads map[Group]bool) error {
	if s.Layers < 2 {
		return nil
	}
	switch {
	case reads[GroupReduced]:
		return fmt.Errorf("-layers %d: linattn reduced is the 1-D theory of one layer's drops; a stack's isotropic reduction is reduced.IsotropicStack (docs/math.md, \"Depth: the isotropic reduction\")", s.Layers)
	case reads[GroupLandscape]:
		return fmt.Errorf("-layers %d: linattn landscape enumerates one layer's fixed points; a stack's are not known in closed form (docs/math.md, \"Depth\")", s.Layers)
	case s.Given("layer") && s.Layer != flow.ReducedLayer && !s.Unrestricted:
		return fmt.Errorf("-layers %d with -layer %s: a stack is of reduced layers (keys read x, values write y); give -layer reduced", s.Layers, s.Layer)
	}
	return nil
}

// resolveStart settles the initial state: -init, or -winit and -seed.
func (s *resolver) resolveStart() error {
	if s.Given("init") {
		if s.Init == "" {
			return fmt.Errorf("-init is empty, want the path of a .npz file")
		}
		return nil
	}
	s.def("winit")
	s.def("seed")
	if !(s.WInit > 0) || math.IsInf(s.WInit, 0) {
		return fmt.Errorf("-winit = %g, want a finite scale > 0 (0 is a fixed point of the flow)", s.WInit)
	}
	return nil
}

// resolveEnd checks where a run ends: -T, or -tol for a run until
// converged. Left out, they stay so: the flow fills them in
// (flow.RunSettings.Resolve) and the sidecar records what it ran with
// (Job.Record).
func (s *resolver) resolveEnd() error {
	if !(s.T >= 0) || math.IsInf(s.T, 0) {
		return fmt.Errorf("-T = %g, want a finite final time ≥ 0 (0: until converged)", s.T)
	}
	if s.T == 0 {
		if s.Given("tol") && !(s.Tol > 0 && s.Tol < 1) {
			return fmt.Errorf("-tol = %g, want a relative tolerance in (0, 1)", s.Tol)
		}
	} else if s.Given("tol") {
		s.Clear("tol") // a fixed final time needs no convergence test
	}
	if s.Given("state-every") && s.StateEvery < 1 { // unset unless given, as -checkpoint
		return fmt.Errorf("-state-every = %d, want K ≥ 1 (1: the states at every output time)", s.StateEvery)
	}
	if s.Given("checkpoint") { // unset unless given, so the sidecars of others do not change
		if _, err := CheckpointInterval(s.Spec); err != nil {
			return err
		}
	}
	return nil
}

// MinCheckpoint is the least interval between checkpoints: each writes
// the run's whole state (up to half a GB at D = 64), which a shorter
// interval would have the run spend itself on.
const MinCheckpoint = time.Second

// CheckpointInterval returns -checkpoint's interval, its default
// (Fields) unless given: how often a run saves its state, so that a killed
// run loses at most this much of its work; 0 for none, else at least
// MinCheckpoint.
func CheckpointInterval(sp *Spec) (time.Duration, error) {
	text := sp.Checkpoint
	if !sp.Given("checkpoint") {
		f, _ := Lookup("checkpoint")
		text = f.Default
	}
	d, err := time.ParseDuration(text)
	switch {
	case text == "0" || d == 0 && err == nil:
		return 0, nil
	case err != nil || d < MinCheckpoint:
		return 0, fmt.Errorf("-checkpoint = %q, want 0 (no checkpoints) or a duration of at least %v such as 30s or 5m: each checkpoint writes the run's whole state", sp.Checkpoint, MinCheckpoint)
	}
	return d, nil
}

// resolveOutput checks the output grid, -samples and -grid, where given.
func (s *resolver) resolveOutput() error {
	if s.Given("samples") && s.Samples < 2 {
		return fmt.Errorf("-samples = %d, want S ≥ 2 output times", s.Samples)
	}
	if _, ok := gridByName(s.Grid); s.Given("grid") && !ok {
		return fmt.Errorf("-grid = %q, want drops, lin or log", s.Grid)
	}
	return nil
}

// resolveMethod checks the tolerances of the integrator (checkGiven its
// name), where given;
// the flow picks them otherwise (flow.Plan, flow.Tolerances).
func (s *resolver) resolveMethod() error {
	if s.Given("rtol") && !(s.RTol > 0 && s.RTol < 1) {
		return fmt.Errorf("-rtol = %g, want a relative tolerance in (0, 1)", s.RTol)
	}
	// A zero tolerance would be the flow's default (flow.RunSettings), not
	// a purely relative one: refused.
	if s.Given("atol") && (!(s.ATol > 0) || math.IsInf(s.ATol, 0)) {
		return fmt.Errorf("-atol = %g, want a finite absolute tolerance > 0", s.ATol)
	}
	return s.resolveCheckpoint()
}

func (s *resolver) resolveLandscape() error {
	s.def("stability")
	if s.Model == flow.Separate && s.D > MaxTableDim && s.Stability {
		return fmt.Errorf("-D = %d: the separate model's landscape has 2^D fixed points; want D ≤ %d for their stability, or D ≤ %d with -stability=false for the loss table alone", s.D, MaxStabilityDim, MaxTableDim)
	}
	if s.Model == flow.Separate && s.D > MaxTableDim {
		return fmt.Errorf("-D = %d: the separate model's landscape has 2^D fixed points; want D ≤ %d for the loss table (D ≤ %d with their stability)", s.D, MaxTableDim, MaxStabilityDim)
	}
	if s.Model == flow.Separate && s.Stability && s.D > MaxStabilityDim {
		return fmt.Errorf("-D = %d: the stability of all 2^D fixed points needs D ≤ %d (or -stability=false for the loss table alone)", s.D, MaxStabilityDim)
	}
	return nil
}

func (s *resolver) resolveReduced() error {
	s.def("align")
	if !(s.Align > 0 && s.Align < 1) {
		return fmt.Errorf("-align = %g, want an alignment in (0, 1)", s.Align)
	}
	s.def("points")
	if s.Points < 2 {
		return fmt.Errorf("-points = %d, want ≥ 2 comparison times per drop", s.Points)
	}
	return nil
}

// build constructs the data, the system and the initial state of the
// resolved spec s.
func (job *Job) build(s *resolver) error {
	vecs, err := job.eigenvectors(s.D)
	if err != nil {
		return err
	}
	if job.Data, err = law.NewData(s.lambda(), vecs, s.lengths()); err != nil {
		return fmt.Errorf("-eigvecs: %w", err)
	}
	if job.Data, err = job.law(s, job.Data); err != nil {
		return err
	}
	model := s.flowModel()
	if job.System, err = flow.NewSystem(job.Data, model); err != nil {
		return fmt.Errorf("-layer %s, -D = %d: %w", s.Layer, s.D, err)
	}
	switch {
	case s.Given("init"):
		job.Y0, err = job.readInit()
	default:
		job.Y0, err = job.System.Init(s.WInit, s.Seed)
		if err == nil && s.Balanced {
			job.Y0, err = job.System.BalancedAligned(job.System.Values(job.Y0))
		}
	}
	return err
}

// flowModel returns the model of the resolved spec.
func (s *resolver) flowModel() flow.Model {
	model := flow.Model{Kind: flow.Separate, H: s.H, R: s.R, Tau: s.Tau, Tied: s.Tie}
	if s.Layers > 1 {
		model.Layers = s.Layers
	}
	if s.Model == flow.Merged {
		model.Kind, model.R = flow.Merged, 0
	}
	model.Layer = s.Layer // reduced where not read
	if s.Unrestricted {
		model.Layer = flow.ReducedLayer // the flow beside the transformer: the stack of gradient-descent layers
	}
	return model
}

// methodName returns the -method name of m.
func methodName(m ode.Method) string {
	for _, name := range ode.MethodNames() {
		if k, _ := ode.MethodByName(name); k == m {
			return name
		}
	}
	return m.Name()
}

// parsePower parses the power:ALPHA of the field called name.
func parsePower(name, spec string) (float64, error) {
	rest, ok := strings.CutPrefix(spec, "power:")
	alpha, err := strconv.ParseFloat(rest, 64)
	if !ok || err != nil || !(alpha >= 0) || math.IsInf(alpha, 0) {
		return 0, fmt.Errorf("-%s = %q, want power:ALPHA with a finite ALPHA ≥ 0", name, spec)
	}
	return alpha, nil
}

// eigenvectors returns the eigenvector matrix of -eigvecs (nil: identity).
func (j *Job) eigenvectors(d int) (*mat.Dense, error) {
	return j.eigenvectorsOf("eigvecs", &j.Spec.Eigvecs, d)
}

// eigenvectorsOf returns the eigenvector matrix that the field called name
// (value *ev: identity, random:SEED or FILE.npy) gives (nil: identity); a
// file's path becomes absolute in *ev.
func (j *Job) eigenvectorsOf(name string, ev *string, d int) (*mat.Dense, error) {
	switch {
	case *ev == "identity":
		return nil, nil
	case strings.HasPrefix(*ev, "random:"):
		seed, err := strconv.ParseUint(strings.TrimPrefix(*ev, "random:"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("-%s = %q, want random:SEED with SEED an integer in [0, 2^64)", name, *ev)
		}
		return law.RandomRotation(d, seed), nil
	}
	if !strings.HasSuffix(*ev, ".npy") {
		if name != "eigvecs" { // -eigvecs random is Λ's default rotation (resolveSpectrum); Ω's have no default seed
			return nil, fmt.Errorf("-%s = %q, want identity, random:SEED (a Haar rotation drawn from SEED) or a FILE.npy", name, *ev)
		}
		return nil, fmt.Errorf("-%s = %q, want identity, random, random:SEED or a FILE.npy", name, *ev)
	}
	data, shape, err := j.readNPY(name, ev)
	if err != nil {
		return nil, err
	}
	if len(shape) != 2 || shape[0] != d || shape[1] != d {
		return nil, fmt.Errorf("-%s %s has shape %v, want (%d, %d)", name, *ev, shape, d, d)
	}
	return mat.NewDense(d, d, data), nil
}

// record remembers an input file's absolute path (which replaces the spec's
// path, so that the sidecar works from any directory) and hash.
func (j *Job) record(field, path string, content []byte) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("-%s %s: %w", field, path, err)
	}
	sum := sha256.Sum256(content)
	j.Inputs[field] = output.Input{Path: abs, SHA256: hex.EncodeToString(sum[:])}
	return abs, nil
}

// readNPY reads the .npy file at *path, given by the field called field,
// records it and makes *path absolute.
func (j *Job) readNPY(field string, path *string) ([]float64, []int, error) {
	content, err := os.ReadFile(*path)
	if err != nil {
		return nil, nil, fmt.Errorf("-%s: %w", field, err)
	}
	given := *path
	if *path, err = j.record(field, *path, content); err != nil {
		return nil, nil, err
	}
	data, shape, err := decodeNPY(content)
	if err != nil {
		return nil, nil, fmt.Errorf("-%s %s: %w", field, given, err)
	}
	return data, shape, nil
}

// estimateBytes is the peak memory of the job's problem, before its
// System is built: the eigenvectors and their rotations, the System's
// vectors and the start, the moments of the layer's features and the
// landscape's Jacobians. The run's is added when the System is built
// (runBytes).
func (s *resolver) estimateBytes(reads map[Group]bool) float64 {
	d := float64(s.D)
	n := float64(s.flowModel().StateLen(s.D))
	words := 6*d*d + 4*n
	if reads[GroupLaw] && s.Layer != flow.ReducedLayer {
		words += flow.MomentBytes(s.Layer, s.D) / 8 // the moments of the layer's features
	}
	if reads[GroupLandscape] && s.Stability && s.D <= 30 {
		// One Jacobian of n² and its eigen-decomposition at a time, and the
		// eigenvalue table (2^D × n).
		words += 3*n*n + math.Exp2(d)*n
	}
	return 8 * words
}

// runBytes is the peak memory of the job's run with its continuous
// extension bounded by denseBytes (flow.System.RunBytes), and of the
// arrays linattn writes from it: with each state kept a copy of it, its
// map M (D²) and, for the separate model, its key alignment (HRD).
func (j *Job) runBytes(denseBytes int) float64 {
	rs := j.RunSettings()
	rs.DenseBytes = denseBytes
	m := j.System.RunBytes(j.Y0, rs)
	d, mo := j.System.Dim(), j.System.Model
	perState := j.System.Len() + d*d + mo.H*mo.R*d
	return m.Total() + 8*float64(m.Kept)*float64(perState)
}

func formatBytes(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	i := 0
	for b >= 1000 && i < len(units)-1 {
		b /= 1000
		i++
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}

// AvailableMemory reads MemAvailable from /proc/meminfo, in bytes; where
// that is not readable it assumes 4 GB.
func AvailableMemory() float64 {
	const fallback = 4e9
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return fallback
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return fallback
}
