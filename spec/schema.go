package spec

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"unicode/utf8"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/train"
)

// The specification of a job, as a sidecar holds it: the problem (data,
// model, initialization) and how it was solved, one name per field that is
// also the command-line flag (with a dash) and the JSON key.
//
// A Spec records which fields were given. Sources are layered: a JSON spec
// file, then the command-line flags, each given field replacing the one
// below it together with its alternatives (-N, -nu and -ntp-max exclude
// each other, as do -eigs, -spectrum and -white, and -init with -winit and
// -seed). The linattn command fills every default in and validates; the
// resolved spec, written back as JSON, is itself a spec that repeats the job
// exactly.

// Spec is a job specification. Zero values mean "not given" only through
// Given; in a sidecar every field the command read is given.
type Spec struct {
	Model    flow.Kind
	D        int
	Eigs     []float64
	Spectrum string
	White    float64
	Eigvecs  string
	N        int
	Nu       float64
	NTPMax   int
	H        int
	R        int
	WInit    float64
	Seed     uint64
	Init     string
	Balanced bool
	Tau      float64
	Layers   int
	Tie      bool

	T       float64
	Tol     float64
	Samples int
	Grid    string
	Method  string
	RTol    float64
	ATol    float64

	Checkpoint string
	StateEvery int

	Stability bool

	Align  float64
	Points int

	P         int
	LR        float64
	Steps     int
	Batch     int
	Attention train.Attention
	Test      int
	Path      train.Path
	GD        bool

	Unrestricted bool

	Layer    flow.Layer
	ICL      float64
	Tasks    int
	W0       []float64
	W0File   string
	TaskDraw string
	DataSeed uint64
	Noise    float64

	// The covariance Ω of the in-context tasks, and Ω_test of the
	// in-context test set's, given as Λ is.
	TaskEigs, TestTaskEigs         []float64
	TaskSpectrum, TestTaskSpectrum string
	TaskWhite, TestTaskWhite       float64
	TaskEigvecs, TestTaskEigvecs   string

	given map[string]bool
}

// Group says which commands read a field.
type Group int

const (
	GroupProblem   Group = iota // data, model and initialization: every command
	GroupSolver                 // integration: run and reduced
	GroupLandscape              // landscape only
	GroupReduced                // reduced only
	GroupTrain                  // train only
	// GroupLaw: the layer and the law of the task vector, read by run and
	// train.
	GroupLaw
)

func (g Group) String() string {
	names := [...]string{"GroupProblem", "GroupSolver", "GroupLandscape", "GroupReduced", "GroupTrain", "GroupLaw"}
	if g < 0 || int(g) >= len(names) {
		return fmt.Sprintf("Group(%d)", int(g))
	}
	return names[g]
}

// Field describes one field of Spec.
type Field struct {
	Name  string // flag name without the dash, and JSON key
	Group Group
	Usage string // meaning and allowed range; Help adds the default
	// Default is the field's value when it is not given, as a command
	// line writes it (SetText), where that is one value: resolution fills
	// it in from here, and Help states it. It is empty where the default
	// depends on other fields (DefaultNote says how) and for the solver's
	// fields that package flow fills in (method, rtol, atol, samples, T,
	// tol: flow.RunSettings), whose Default only states flow's.
	Default string
	// DefaultNote follows "default" (or Default) in Help: a default that
	// depends on other fields, or a qualification.
	DefaultNote string
	// Alternatives are the fields this one excludes.
	Alternatives []string
	// Also lists other groups that read the field.
	Also []Group
	ptr  func(*Spec) any
}

// Help returns the field's usage with its default, for -h.
func (f *Field) Help() string {
	if f.Default == "" && f.DefaultNote == "" {
		return f.Usage
	}
	return f.Usage + " (default" + prefix(" ", f.Default) + f.DefaultNote + ")"
}

// prefix returns p+s, or "" for an empty s.
func prefix(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// num writes a default as -h shows it: the shortest form, 1e-6 for 1e-06.
func num(x float64) string {
	return strings.Replace(strconv.FormatFloat(x, 'g', -1, 64), "e-0", "e-", 1)
}

// tightFor states the methods whose default tolerance (of, for a model
// and method: flow.Tolerances) is tight, for -rtol and -atol's Help:
// "; 1e-10 for bdf (not with -layer full), dop853, dp5, tsit5".
func tightFor(tight float64, of func(flow.Model, ode.Method) float64) string {
	var names []string
	for _, name := range ode.MethodNames() {
		m, _ := ode.MethodByName(name)
		reduced, full := of(flow.Model{}, m) == tight, of(flow.Model{Layer: flow.FullLayer}, m) == tight
		switch {
		case reduced && full:
			names = append(names, name)
		case reduced:
			names = append(names, name+" (not with -layer full)")
		}
	}
	return "; " + num(tight) + " for " + strings.Join(names, ", ")
}

// ReadBy reports whether a command reading groups reads the field.
func (f *Field) ReadBy(groups []Group) bool {
	for _, g := range groups {
		if g == f.Group || slices.Contains(f.Also, g) {
			return true
		}
	}
	return false
}

// Fields returns a copy of every field, in the order of -h and of the
// JSON output.
func Fields() []Field {
	out := make([]Field, len(fields))
	for i, f := range fields {
		out[i] = f.clone()
	}
	return out
}

// eigvecsDefault is -eigvecs' default, a Haar rotation of seed 1, also
// what -eigvecs random means.
const eigvecsDefault = "random:1"

// fields is the table behind Fields.
//
// The problem's defaults are the paper's D = 4 separate key–query example
// (figure attnS-value: λ = 0.4, 0.3, 0.2, 0.1, N = 31, H = 4, R = 1) with
// the small initialization of the paper's code (flow.DefaultWInit,
// flow.DefaultSeed).
var fields = []Field{
	{Name: "model", Usage: "attention model: separate (ATTN_S, rank-R keys and queries) or merged (ATTN_M)", Default: "separate",
		ptr: func(s *Spec) any { return &s.Model }},
	{Name: "D", Usage: "token dimension D ≥ 1, for -spectrum and -white; with -eigs it must equal their number", DefaultNote: ": the number of -eigs",
		ptr: func(s *Spec) any { return &s.D }},
	{Name: "eigs", Usage: "eigenvalues of Λ, comma-separated, each finite and > 0; sorted decreasing", Default: "0.4,0.3,0.2,0.1", DefaultNote: ", the paper's example",
		Alternatives: []string{"spectrum", "white"}, ptr: func(s *Spec) any { return &s.Eigs }},
	{Name: "spectrum", Usage: "power:ALPHA: λ_d ∝ d^-ALPHA with ALPHA ≥ 0 and trace 1, with -D",
		Alternatives: []string{"eigs", "white"}, ptr: func(s *Spec) any { return &s.Spectrum }},
	{Name: "white", Usage: "C > 0: white covariance Λ = C·I, with -D",
		Alternatives: []string{"eigs", "spectrum"}, ptr: func(s *Spec) any { return &s.White }},
	{Name: "eigvecs", Usage: "eigenvectors of Λ: identity, random (Haar, seed " + strings.TrimPrefix(eigvecsDefault, "random:") + "), random:SEED, or FILE.npy holding a D×D orthonormal matrix whose columns are the eigenvectors of -eigs in order", Default: eigvecsDefault,
		ptr: func(s *Spec) any { return &s.Eigvecs }},
	{Name: "N", Usage: "context length N ≥ 1, ν = 1/N", Default: "31",
		Alternatives: []string{"nu", "ntp-max"}, ptr: func(s *Spec) any { return &s.N }},
	{Name: "nu", Usage: "ν = E[1/N] in (0, 1] directly, for a distribution of context lengths",
		Alternatives: []string{"N", "ntp-max"}, ptr: func(s *Spec) any { return &s.Nu }},
	{Name: "ntp-max", Usage: "Nmax ≥ 1: next-token loss over context lengths 1..Nmax, ν = H_Nmax/Nmax",
		Alternatives: []string{"N", "nu"}, ptr: func(s *Spec) any { return &s.NTPMax }},
	{Name: "H", Usage: "number of heads H ≥ 1", DefaultNote: " D",
		ptr: func(s *Spec) any { return &s.H }},
	{Name: "R", Usage: "rank of each head's key and query, 1 ≤ R ≤ D, separate model only", Default: "1",
		ptr: func(s *Spec) any { return &s.R }},
	{Name: "winit", Usage: "initialization scale w_init > 0 of the paper's random initialization", Default: num(flow.DefaultWInit),
		Alternatives: []string{"init"}, ptr: func(s *Spec) any { return &s.WInit }},
	{Name: "seed", Usage: "seed of the random initialization, an integer in [0, 2^64)", Default: strconv.Itoa(flow.DefaultSeed),
		Alternatives: []string{"init"}, ptr: func(s *Spec) any { return &s.Seed }},
	{Name: "init", Usage: "FILE.npz with the initial weights in the original coordinates: v (H,) and K, Q (H, R, D) for separate, U (H, D, D) for merged; for the full layer also v_x (H, D) and u_y (H, D) or k_y (H, R) if given, else zero",
		Alternatives: []string{"winit", "seed", "balanced"}, ptr: func(s *Spec) any { return &s.Init }},
	{Name: "balanced", Usage: "merged model: start balanced and aligned, U_i = v_i I/√D with the paper's random v (w_init, seed), the start from which the white-Λ closed form is exact", Default: "false",
		Alternatives: []string{"init"}, ptr: func(s *Spec) any { return &s.Balanced }},
	{Name: "tau", Usage: "time constant τ > 0 of the flow; gradient descent with learning rate η follows it with t/τ = 2η·steps", Default: num(flow.DefaultTau),
		ptr: func(s *Spec) any { return &s.Tau }},
	{Name: "layers", Usage: "depth L: 1, the paper's layer, or a stack of 2 to " + strconv.Itoa(law.MaxStackLayers) + " reduced layers on a residual stream, L steps of preconditioned gradient descent on the context (keys over the context only, the context's labels written with the opposite sign to the query's: docs/math.md, \"Depth\"); run and train, with -N or -ntp-max", Default: "1",
		ptr: func(s *Spec) any { return &s.Layers }},
	{Name: "tie", Usage: "with -layers 2 or more: one set of heads shared by every layer (the looped transformer)", Default: "false",
		ptr: func(s *Spec) any { return &s.Tie }},

	{Name: "T", Group: GroupSolver, Usage: "final time ≥ 0; 0 runs until converged, see -tol", Default: "0",
		ptr: func(s *Spec) any { return &s.T }},
	{Name: "tol", Group: GroupSolver, Usage: "with -T 0, stop when L − L_min ≤ tol·(L(0) − L_min), tol in (0, 1)", Default: num(flow.DefaultTol),
		ptr: func(s *Spec) any { return &s.Tol }},
	{Name: "samples", Group: GroupSolver, Also: []Group{GroupTrain}, Usage: "number S ≥ 2 of output times", Default: strconv.Itoa(flow.DefaultSamples),
		ptr: func(s *Spec) any { return &s.Samples }},
	{Name: "grid", Group: GroupSolver, Also: []Group{GroupTrain}, Usage: "output times: drops (⌊S/4⌋ points equally spaced in time from 0 to T, ⌊S/4⌋ log-spaced from t_f/10 to T, t_f when the loss has fallen by 1%, which shows the first plateau, the rest equally spaced in loss, which resolves every drop), lin (S points from 0 to T inclusive) or log (0, then S−1 points log-spaced from T·1e-6 to T)", Default: gridName(flow.GridDrops),
		ptr: func(s *Spec) any { return &s.Grid }},
	{Name: "method", Group: GroupSolver, Also: []Group{GroupTrain}, Usage: "integrator: auto (dop853, switching to rock4 where stiff), bdf (variable-order BDF, Newton–Krylov with the flow's block preconditioner, or a dense Cholesky/LU of the full layer), rock4, rodas5p or radau5 (dense LU: small D), dop853, dp5 or tsit5", DefaultNote: ": the flow's choice (flow.Plan): " + flow.MethodRule(),
		ptr: func(s *Spec) any { return &s.Method }},
	{Name: "rtol", Group: GroupSolver, Also: []Group{GroupTrain}, Usage: "relative tolerance in (0, 1)", Default: num(flow.DefaultRTol), DefaultNote: tightFor(flow.ExplicitRTol, func(m flow.Model, meth ode.Method) float64 { r, _ := flow.Tolerances(m, meth); return r }),
		ptr: func(s *Spec) any { return &s.RTol }},
	{Name: "atol", Group: GroupSolver, Also: []Group{GroupTrain}, Usage: "absolute tolerance > 0, finite", Default: num(flow.DefaultATol), DefaultNote: tightFor(flow.ExplicitATol, func(m flow.Model, meth ode.Method) float64 { _, a := flow.Tolerances(m, meth); return a }),
		ptr: func(s *Spec) any { return &s.ATol }},

	{Name: "checkpoint", Group: GroupSolver, Also: []Group{GroupTrain}, Usage: "run and train: save the run's state beside its output (FILE.ckpt; train also FILE.population.ckpt, its population flow's) every DURATION (at least " + MinCheckpoint.String() + ", such as 30s or 5m, and never so often that saving takes more than a tenth of the run's time; 0: never), and when interrupted, so that the same command continues a killed run where it was saved, with the same output bit for bit", Default: "1m",
		ptr: func(s *Spec) any { return &s.Checkpoint }},

	{Name: "state-every", Group: GroupSolver, Usage: "run: keep at most as many states (v, K, Q, U, key_alignment, M) as every K-th output time and the last, K ≥ 1, at steps of the run spread over it, their times in state_t; the loss and the test losses are kept at every time, interpolated between the steps", DefaultNote: stateEveryNote(),
		ptr: func(s *Spec) any { return &s.StateEvery }},

	{Name: "layer", Group: GroupLaw, Usage: "full (every block of the layer that enters ŷ: it learns in weight when tasks are fixed), reduced (the paper's reduction: only v and U, or v, K and Q) or labelkey (the reduction with keys that also read the labels, ŷ = x_qᵀΓ[β; (1/N)Σy²]: Lu et al.'s linear attention)", DefaultNote: ": reduced for run and for a stack, full for train",
		ptr: func(s *Spec) any { return &s.Layer }},
	{Name: "icl", Group: GroupLaw, Usage: "fraction c in [0, 1] of sequences with a random task vector w ~ N(0, Ω) (in-context); the others use one of the -tasks fixed vectors", Default: "1",
		ptr: func(s *Spec) any { return &s.ICL }},
	{Name: "tasks", Group: GroupLaw, Usage: "number K of fixed task vectors, 1 ≤ K ≤ 2^20, drawn from -data-seed as -task-draw says; they label the sequences that are not in-context and the in-weight and in-distribution tests", Default: "1", DefaultNote: ", or the number of -w0",
		ptr: func(s *Spec) any { return &s.Tasks }},
	{Name: "w0", Group: GroupLaw, Usage: "the fixed task vectors themselves, K·D numbers comma-separated (row k is task k, original basis), instead of drawing them; a sidecar records drawn ones here up to 4096 numbers", DefaultNote: ": drawn",
		Alternatives: []string{"w0-file"}, ptr: func(s *Spec) any { return &s.W0 }},
	{Name: "w0-file", Group: GroupLaw, Usage: "FILE.npy holding the fixed task vectors as a (K, D) float64 array, original basis, instead of drawing them",
		Alternatives: []string{"w0"}, ptr: func(s *Spec) any { return &s.W0File }},
	{Name: "task-draw", Group: GroupLaw, Usage: "how the fixed tasks are drawn: scaled (N(0, I) scaled to norm √D, as the paper's code) or gaussian (plain N(0, I), as Raventós et al. and Lu et al.)", Default: "scaled",
		ptr: func(s *Spec) any { return &s.TaskDraw }},
	{Name: "noise", Group: GroupLaw, Usage: "variance σ² ≥ 0 of the label noise: every label is y = wᵀx + ε, ε ~ N(0, σ²)", Default: "0",
		ptr: func(s *Spec) any { return &s.Noise }},
	{Name: "task-eigs", Group: GroupLaw, Usage: "eigenvalues of the in-context tasks' covariance Ω, D values comma-separated, each finite and > 0", DefaultNote: ": Ω = I",
		Alternatives: []string{"task-spectrum", "task-white"}, ptr: func(s *Spec) any { return &s.TaskEigs }},
	{Name: "task-spectrum", Group: GroupLaw, Usage: "power:ALPHA: Ω's eigenvalues ∝ d^-ALPHA with ALPHA ≥ 0 and trace D",
		Alternatives: []string{"task-eigs", "task-white"}, ptr: func(s *Spec) any { return &s.TaskSpectrum }},
	{Name: "task-white", Group: GroupLaw, Usage: "C > 0: Ω = C·I",
		Alternatives: []string{"task-eigs", "task-spectrum"}, ptr: func(s *Spec) any { return &s.TaskWhite }},
	{Name: "task-eigvecs", Group: GroupLaw, Usage: "Ω's eigenvectors (original basis of the tokens): identity, random:SEED or FILE.npy, as -eigvecs", Default: "identity",
		ptr: func(s *Spec) any { return &s.TaskEigvecs }},
	{Name: "test-task-eigs", Group: GroupLaw, Usage: "eigenvalues of the in-context test set's task covariance Ω_test (task alignment), as -task-eigs", DefaultNote: ": Ω",
		Alternatives: []string{"test-task-spectrum", "test-task-white"}, ptr: func(s *Spec) any { return &s.TestTaskEigs }},
	{Name: "test-task-spectrum", Group: GroupLaw, Usage: "power:ALPHA: Ω_test's eigenvalues ∝ d^-ALPHA, trace D",
		Alternatives: []string{"test-task-eigs", "test-task-white"}, ptr: func(s *Spec) any { return &s.TestTaskSpectrum }},
	{Name: "test-task-white", Group: GroupLaw, Usage: "C > 0: Ω_test = C·I",
		Alternatives: []string{"test-task-eigs", "test-task-spectrum"}, ptr: func(s *Spec) any { return &s.TestTaskWhite }},
	{Name: "test-task-eigvecs", Group: GroupLaw, Usage: "Ω_test's eigenvectors: identity, random:SEED or FILE.npy", DefaultNote: ": Ω's, -task-eigvecs, where Ω is given by -task-eigs or -task-spectrum; else identity",
		ptr: func(s *Spec) any { return &s.TestTaskEigvecs }},
	{Name: "data-seed", Group: GroupLaw, Usage: "seed of the data: the fixed tasks, and train's sequences and minibatches, an integer in [0, 2^64)", DefaultNote: ": -seed, or " + strconv.Itoa(flow.DefaultSeed) + " with -init",
		ptr: func(s *Spec) any { return &s.DataSeed }},

	{Name: "stability", Group: GroupLandscape, Usage: "analyze the stability of every fixed point (separate model: D ≤ 10)", Default: "true",
		ptr: func(s *Spec) any { return &s.Stability }},

	{Name: "align", Group: GroupReduced, Usage: "key and query alignment in (0, 1) from which the 1-D ansatz is taken to hold", Default: "0.99",
		ptr: func(s *Spec) any { return &s.Align }},
	{Name: "points", Group: GroupReduced, Usage: "comparison times per drop, ≥ 2", Default: "2000",
		ptr: func(s *Spec) any { return &s.Points }},

	// train's: a run of the default problem at -lr 0.5 reaches
	// t/τ = 2·0.5·40000 = 40000, past its last drop (t ≈ 28400); at this η
	// gradient descent on the population moments drops within 0.3% of the
	// flow (docs/training.md).
	{Name: "P", Group: GroupTrain, Usage: "number of training sequences P ≥ 1", Default: "10000",
		ptr: func(s *Spec) any { return &s.P }},
	{Name: "lr", Group: GroupTrain, Usage: "learning rate η > 0; a step advances t/τ by 2η", Default: "0.5",
		ptr: func(s *Spec) any { return &s.LR }},
	{Name: "steps", Group: GroupTrain, Usage: "gradient-descent steps ≥ 1; with -gd=false the flow runs to t/τ = 2η·steps", Default: "40000",
		ptr: func(s *Spec) any { return &s.Steps }},
	{Name: "batch", Group: GroupTrain, Usage: "minibatch size of SGD in [1, P], or 0 for full-batch gradient descent", Default: "0",
		ptr: func(s *Spec) any { return &s.Batch }},
	{Name: "attention", Group: GroupTrain, Usage: "linear (weights s/N) or softmax (over the context and query columns, ρ = 1)", Default: "linear",
		ptr: func(s *Spec) any { return &s.Attention }},
	{Name: "test", Group: GroupTrain, Usage: "sequences in each test set (in-context, in-weight), ≥ 0", Default: "1000",
		ptr: func(s *Spec) any { return &s.Test }},
	{Name: "path", Group: GroupTrain, Usage: "auto (moments where exact, else direct), direct (sequence by sequence), moments (the exact fast path: linear attention, full batch) or columns (the layer column by column)", Default: "auto",
		ptr: func(s *Spec) any { return &s.Path }},
	{Name: "gd", Group: GroupTrain, Usage: "gradient descent; false integrates the gradient flow of the training loss with -method (full batch)", Default: "true",
		ptr: func(s *Spec) any { return &s.GD }},
	{Name: "unrestricted", Group: GroupTrain, Usage: "train the unrestricted deep linear transformer: -layers L of the full merged layer on a residual stream, every block of every value and key–query matrix ((D+1)×(D+1)) trained, no masks, from the small start w_init/(√H·(D+1)) per entry; the exact flow beside it is the stack of gradient-descent layers (-layer reduced) from the paper's start; with -model merged", Default: "false",
		ptr: func(s *Spec) any { return &s.Unrestricted }},
}

// Lookup returns a copy of the field called name.
func Lookup(name string) (*Field, bool) {
	f := lookup(name)
	if f == nil {
		return nil, false
	}
	c := f.clone()
	return &c, true
}

// lookup returns the field called name in the table, or nil.
func lookup(name string) *Field {
	for i := range fields {
		if fields[i].Name == name {
			return &fields[i]
		}
	}
	return nil
}

// clone returns a copy of f with its own slices.
func (f Field) clone() Field {
	f.Alternatives, f.Also = slices.Clone(f.Alternatives), slices.Clone(f.Also)
	return f
}

// InContext reports whether every sequence of the spec's task law draws
// its task afresh: -icl 1, its default. It is law.Tasks.InContext of the
// law the spec resolves to (Job.Data), asked of a spec that is not
// resolved, such as a sidecar's.
func (s *Spec) InContext() bool { return !s.Given("icl") || s.ICL == 1 }

// Given reports whether the field called name was given.
func (s *Spec) Given(name string) bool { return s.given[name] }

// Clone returns a deep copy of s.
func (s *Spec) Clone() *Spec {
	c := *s
	c.Eigs = append([]float64(nil), s.Eigs...)
	c.W0 = append([]float64(nil), s.W0...)
	c.TaskEigs = append([]float64(nil), s.TaskEigs...)
	c.TestTaskEigs = append([]float64(nil), s.TestTaskEigs...)
	c.given = make(map[string]bool, len(s.given))
	for k, v := range s.given {
		c.given[k] = v
	}
	return &c
}

// Mark marks the field called name as given.
func (s *Spec) Mark(name string) {
	if s.given == nil {
		s.given = map[string]bool{}
	}
	s.given[name] = true
}

// Clear sets the field called name to its zero value, not given.
func (s *Spec) Clear(name string) {
	delete(s.given, name)
	zero(lookup(name).ptr(s))
}

// zero sets the field *p to its zero value.
func zero(p any) { reflect.ValueOf(p).Elem().SetZero() }

// CheckAlternatives rejects a source that gives two fields excluding each
// other, naming them with prefix ("-" for flags).
func (s *Spec) CheckAlternatives(prefix string) error {
	for _, f := range fields {
		if !s.given[f.Name] {
			continue
		}
		for _, a := range f.Alternatives {
			if s.given[a] && f.Name < a {
				return fmt.Errorf("%s%s and %s%s exclude each other; give one", prefix, f.Name, prefix, a)
			}
		}
	}
	return nil
}

// Override lays o over s: every field given in o replaces s's, and clears
// the fields it excludes.
func (s *Spec) Override(o *Spec) {
	for _, f := range fields {
		if !o.given[f.Name] {
			continue
		}
		for _, a := range f.Alternatives {
			if s.given[a] {
				s.Clear(a)
			}
		}
		setFrom(f.ptr(s), f.ptr(o))
		s.Mark(f.Name)
	}
}

// setFrom copies the field *src to *dst, a list by value.
func setFrom(dst, src any) {
	if d, ok := dst.(*[]float64); ok {
		*d = slices.Clone(*src.(*[]float64))
		return
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}

// Parse decodes a JSON spec: an object whose keys are field names. Values
// have the field's type; unknown keys are errors.
func Parse(data []byte) (*Spec, error) {
	obj, err := DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s := &Spec{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == output.MetaKey {
			continue
		}
		f := lookup(k)
		if f == nil {
			return nil, fmt.Errorf("spec: unknown field %q (known: %s)", k, strings.Join(Names(), ", "))
		}
		raw := obj[k]
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return nil, fmt.Errorf("spec: field %q is null; leave it out for its default", k)
		}
		if err := json.Unmarshal(raw, f.ptr(s)); err != nil {
			var typ *json.UnmarshalTypeError
			if _, choice := f.ptr(s).(encoding.TextUnmarshaler); choice && !errors.As(err, &typ) {
				return nil, fmt.Errorf("spec: field %q: %w", k, err) // a string naming no choice
			}
			return nil, fmt.Errorf("spec: field %q: want %s, got %s", k, typeName(f.ptr(s)), raw)
		}
		s.Mark(k)
	}
	if err := s.CheckAlternatives(""); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return s, nil
}

// Names returns the field names in order.
func Names() []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

func typeName(p any) string {
	switch p.(type) {
	case *string:
		return "a string"
	case *int:
		return "an integer"
	case *uint64:
		return "a non-negative integer"
	case *float64:
		return "a number"
	case *bool:
		return "true or false"
	case *[]float64:
		return "a list of numbers"
	case encoding.TextUnmarshaler:
		return "a name"
	}
	return "?"
}

// MarshalJSON writes the given fields in the order of Fields.
func (s *Spec) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	for _, f := range fields {
		if !s.given[f.Name] {
			continue
		}
		b, err := json.Marshal(f.ptr(s))
		if err != nil {
			return nil, fmt.Errorf("spec: field %q: %w", f.Name, err)
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(f.Name)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Text returns the value of the field called name as a command line
// writes it, or "" when it was not given.
func (s *Spec) Text(name string) string {
	f := lookup(name)
	if f == nil || !s.given[name] {
		return ""
	}
	switch p := f.ptr(s).(type) {
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *uint64:
		return strconv.FormatUint(*p, 10)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	case *bool:
		return strconv.FormatBool(*p)
	case *[]float64:
		s := make([]string, len(*p))
		for i, x := range *p {
			s[i] = strconv.FormatFloat(x, 'g', -1, 64)
		}
		return strings.Join(s, ",")
	case encoding.TextMarshaler:
		b, _ := p.MarshalText() // a given choice has a name
		return string(b)
	}
	return ""
}

// SetText parses the value of the field called name as a command line
// gives it (a list comma-separated) and marks the field given.
func (s *Spec) SetText(name, text string) error {
	f := lookup(name)
	if f == nil {
		return fmt.Errorf("no field %q", name)
	}
	text = strings.TrimSpace(text)
	switch p := f.ptr(s).(type) {
	case *string:
		*p = text
	case *int:
		x, err := strconv.Atoi(text)
		if err != nil {
			return fmt.Errorf("%q is not an integer", text)
		}
		*p = x
	case *uint64:
		x, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer in [0, 2^64)", text)
		}
		*p = x
	case *float64:
		x, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", text)
		}
		*p = x
	case *bool:
		x, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
		*p = x
	case *[]float64:
		var xs []float64
		for i, f := range strings.Split(text, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return fmt.Errorf("entry %d %q is not a number", i+1, f)
			}
			xs = append(xs, x)
		}
		*p = xs
	case encoding.TextUnmarshaler:
		if err := p.UnmarshalText([]byte(text)); err != nil {
			return err
		}
	}
	s.Mark(name)
	return nil
}

// Kind names the type of the field's values: string, int, uint, float,
// list (of floats) or bool.
func (f *Field) Kind() string {
	switch f.ptr(&Spec{}).(type) {
	case *string:
		return "string"
	case *int:
		return "int"
	case *uint64:
		return "uint"
	case *float64:
		return "float"
	case *[]float64:
		return "list"
	case encoding.TextUnmarshaler:
		return "string"
	}
	return "bool"
}

// Rebase makes the relative paths of the -init, -eigvecs, -task-eigvecs,
// -test-task-eigvecs and -w0-file files relative to dir, the directory of
// the spec file that gave them.
func (s *Spec) Rebase(dir string) {
	if s.given["init"] && s.Init != "" && !filepath.IsAbs(s.Init) {
		s.Init = filepath.Join(dir, s.Init)
	}
	for _, p := range []*string{&s.Eigvecs, &s.TaskEigvecs, &s.TestTaskEigvecs, &s.W0File} {
		if strings.HasSuffix(*p, ".npy") && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
}

// DecodeObject decodes a spec file's one JSON object, by key. Its errors
// say that the file is empty, or where (line and column) the JSON breaks.
func DecodeObject(data []byte) (map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New(`the file is empty; want a JSON object of fields, e.g. {"seed": 5}`)
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&obj); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			line, col := position(data, syn.Offset)
			return nil, fmt.Errorf("line %d, column %d: %v", line, col, err)
		case errors.As(err, &typ):
			return nil, fmt.Errorf("want a JSON object of fields, got %s", typ.Value)
		case errors.Is(err, io.ErrUnexpectedEOF):
			line, col := position(data, int64(len(data)))
			return nil, fmt.Errorf("line %d, column %d: the JSON ends before its object does", line, col)
		}
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("want a JSON object of fields, got null")
	}
	if dec.More() {
		off := dec.InputOffset()
		for off < int64(len(data)) && strings.ContainsRune(" \t\r\n", rune(data[off])) {
			off++
		}
		line, col := position(data, off+1)
		return nil, fmt.Errorf("line %d, column %d: data after the JSON object", line, col)
	}
	return obj, nil
}

// position returns the line and column (from 1, in characters) of the
// byte offset off of data; encoding/json's SyntaxError.Offset counts the
// bytes read, the offending one included.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 1), int64(len(data)))
	before := data[:off-1]
	line = 1 + bytes.Count(before, []byte("\n"))
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[start:])
}
