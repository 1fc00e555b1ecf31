package train

import (
	"fmt"
	"math"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/internal/choice"
	"github.com/linattn/linattn/law"
)

// Path is how the loss and its gradient are computed.
type Path int

const (
	// AutoPath is MomentsPath where the moments are exact and fit in
	// memory (linear attention, full batch, at most MaxMomentFeatures
	// features), else DirectPath.
	AutoPath Path = iota
	// DirectPath evaluates the layer sequence by sequence at every step: for
	// linear attention through the features of each prediction (its Gram
	// matrix XXᵀ/n, computed once for a fixed context length), for softmax
	// attention column by column. Its cost is proportional to P.
	DirectPath
	// MomentsPath evaluates linear attention through the empirical moments of
	// its features (docs/training.md, "The exact fast path"), accumulated
	// once while the data are drawn and not stored: the cost of a step does
	// not depend on P. Full batch only.
	MomentsPath
	// ColumnsPath evaluates the layer column by column for linear attention too:
	// the literal definition, slower than DirectPath; the reference the others
	// are tested against.
	ColumnsPath
)

func (p Path) String() string {
	switch p {
	case AutoPath:
		return "auto"
	case DirectPath:
		return "direct"
	case MomentsPath:
		return "moments"
	case ColumnsPath:
		return "columns"
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// Paths returns every path, in the order of -path's help.
func Paths() []Path { return []Path{AutoPath, DirectPath, MomentsPath, ColumnsPath} }

// MarshalText writes the path's name.
func (p Path) MarshalText() ([]byte, error) { return choice.Text(p, "path", Paths()) }

// UnmarshalText parses a path's name: auto, direct, moments or columns.
func (p *Path) UnmarshalText(text []byte) error {
	v, err := choice.Parse(text, "path", Paths())
	if err == nil {
		*p = v
	}
	return err
}

// MaxMomentFeatures is the most features F for which AutoPath takes the
// moments: their F×F matrix then takes at most 32 MiB per set of
// sequences, and accumulating it at most 2·10⁶ operations per sequence. F
// is D² (Reduced, D ≤ 45) or D(D+1)(D+2)/2 (Full, D ≤ 15).
const MaxMomentFeatures = 2048

// Config describes a finite-data training problem.
type Config struct {
	Model Model
	// Data is the task the sequences are drawn from (docs/training.md,
	// "Data"): Λ; the context lengths (Data.Lengths: a fixed N or the
	// next-token loss, not ν alone); the law of the task vector
	// (Data.Tasks: the fraction c of in-context training sequences, and
	// the fixed tasks of the others and of the in-weight test set).
	Data *law.Data
	P    int // number of training sequences, ≥ 1
	// Test is the number of sequences in each test set, ≥ 0: in-context,
	// and in-weight and in-distribution when the data have fixed tasks
	// (docs/training.md; law.Sequences).
	Test int
	Seed uint64 // seed of the data (sequences, w₀, minibatch order)
	Path Path
	// Batch > 0 is the minibatch size of SGD (DirectPath or ColumnsPath),
	// ≤ P; 0 is full-batch gradient descent.
	Batch int
}

// Trainer holds the data of a Config and evaluates the loss and its
// gradient on them. It is not safe for concurrent use.
type Trainer struct {
	cfg     Config
	path    Path
	shape   sequenceShape
	coef    *flow.Coefficients
	fm      *featureMap
	train   objective
	testICL objective
	testIWL objective // nil without fixed tasks
	testIDG objective // nil without fixed tasks
}

// New validates cfg, draws the data and prepares their evaluation.
func New(cfg Config) (*Trainer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	coef := flow.NewCoefficients(cfg.Model.D, cfg.Model.flowModel())
	t := &Trainer{cfg: cfg, path: cfg.resolvePath(), shape: shapeOf(cfg.Data.Lengths()), coef: coef,
		fm: newFeatureMap(coef, cfg.Model.D)}
	if err := t.checkPath(); err != nil {
		return nil, err
	}
	smp := newSampler(t.cfg.Data, cfg.Seed)
	t.train = t.objective(smp, setTrain, cfg.P)
	if cfg.Test > 0 {
		t.testICL = t.objective(smp, setICL, cfg.Test)
		if len(smp.fixed) > 0 {
			t.testIWL = t.objective(smp, setIWL, cfg.Test)
			t.testIDG = t.objective(smp, setIDG, cfg.Test)
		}
	}
	return t, nil
}

func (c *Config) validate() error {
	if err := c.Model.validate(); err != nil {
		return err
	}
	if err := checkData(c.Data); err != nil {
		return err
	}
	if c.Data.Dim() != c.Model.D {
		return fmt.Errorf("train: the data have D = %d, the model D = %d", c.Data.Dim(), c.Model.D)
	}
	if c.P < 1 {
		return fmt.Errorf("train: P = %d training sequences, want P ≥ 1", c.P)
	}
	if c.Test < 0 {
		return fmt.Errorf("train: Test = %d, want ≥ 0 test sequences", c.Test)
	}
	if c.Batch < 0 || c.Batch > c.P {
		return fmt.Errorf("train: Batch = %d, want 0 (full batch) or a minibatch size in [1, P = %d]", c.Batch, c.P)
	}
	if c.Path < AutoPath || c.Path > ColumnsPath {
		return fmt.Errorf("train: Path = %d, want AutoPath, DirectPath, MomentsPath or ColumnsPath", int(c.Path))
	}
	return nil
}

func (c *Config) resolvePath() Path {
	if c.Path != AutoPath {
		return c.Path
	}
	if c.Model.Depth() > 1 || c.Model.Unrestricted {
		return DirectPath
	}
	if c.Model.Attention == Linear && c.Batch == 0 && c.features() <= MaxMomentFeatures {
		return MomentsPath
	}
	return DirectPath
}

// features returns the number F of features of linear attention: D²
// (reduced layer), D(D+1) (label-key) or D(D+1)(D+2)/2 (full).
func (c *Config) features() int {
	return len(c.Model.Layer.Pairs(c.Model.D)) * c.Model.D
}

func (t *Trainer) checkPath() error {
	if (t.cfg.Model.Depth() > 1 || t.cfg.Model.Unrestricted) && t.path != DirectPath {
		return fmt.Errorf("train: a stack of %d layers is evaluated token by token (DirectPath), not by the %v path", t.cfg.Model.Depth(), t.path)
	}
	if t.path != MomentsPath {
		return nil
	}
	switch {
	case t.cfg.Model.Attention != Linear:
		return fmt.Errorf("train: the moments path is exact for linear attention only, not %v", t.cfg.Model.Attention)
	case t.cfg.Batch != 0:
		return fmt.Errorf("train: the moments path is full batch; minibatches (Batch = %d) need the direct path", t.cfg.Batch)
	}
	return nil
}

// objective draws n sequences of set and prepares their evaluation.
func (t *Trainer) objective(smp *sampler, set seqSet, n int) objective {
	m := &t.cfg.Model
	switch {
	case m.Unrestricted:
		return newTransformerObjective(sampleRaw(smp, set, n), m, t.shape)
	case m.Depth() > 1:
		return newStackObjective(sampleRaw(smp, set, n), m, t.shape)
	case t.path == MomentsPath:
		return newLinearObjective(t.coef, newMomentsObjective(sampleMoments(smp, t.fm, set, n)))
	case t.path == ColumnsPath || m.Attention == Softmax:
		return newTokenObjective(sampleRaw(smp, set, n), m, t.coef, t.shape)
	case t.shape.first != t.shape.last:
		return newLinearObjective(t.coef, newPrefixObjective(sampleRaw(smp, set, n), t.fm, t.shape))
	}
	return newLinearObjective(t.coef, newGramObjective(sampleGram(smp, t.fm, set, n)))
}

// Path returns the path in use (AutoPath resolved).
func (t *Trainer) Path() Path { return t.path }

// Config returns the configuration.
func (t *Trainer) Config() Config { return t.cfg }

// Len returns the length of the weight vector.
func (t *Trainer) Len() int { return t.cfg.Model.Len() }

// Features returns the number F of features of linear attention
// (docs/training.md): D² for the reduced layer, D(D+1)(D+2)/2 for the full
// one.
func (t *Trainer) Features() int { return t.coef.Features() }

// Time returns t = 2ητ·step, the time of the flow that gradient descent
// with learning rate lr follows.
func (t *Trainer) Time(lr float64, step int) float64 { return 2 * lr * t.cfg.Model.Tau * float64(step) }

// Loss returns the training loss L̂(θ) = (1/P) Σ_μ (y_μ − ŷ_μ)² (averaged
// over the prefixes for the next-token loss).
func (t *Trainer) Loss(theta []float64) float64 { return t.eval(t.train, theta, nil, nil) }

// Gradient writes ∂L̂/∂θ into grad and returns L̂(θ).
func (t *Trainer) Gradient(grad, theta []float64) float64 {
	return t.eval(t.train, theta, grad, nil)
}

// TestLosses returns the losses on the in-context, in-weight and
// in-distribution test sets (docs/training.md, "Data"), NaN without test
// sets (and the last two without fixed tasks).
func (t *Trainer) TestLosses(theta []float64) (icl, iwl, idg float64) {
	out := [3]float64{math.NaN(), math.NaN(), math.NaN()}
	for i, o := range []objective{t.testICL, t.testIWL, t.testIDG} {
		if o != nil {
			out[i] = t.eval(o, theta, nil, nil)
		}
	}
	return out[0], out[1], out[2]
}

func (t *Trainer) eval(o objective, theta, grad []float64, batch []int32) float64 {
	if n := t.cfg.Model.Len(); len(theta) != n || (grad != nil && len(grad) != n) {
		panic(fmt.Sprintf("train: len(theta) = %d, len(grad) = %d, want %d", len(theta), len(grad), n))
	}
	return o.eval(theta, grad, batch)
}

// EstimateBytes returns the memory the data of cfg take once drawn and
// prepared: the moments (F² numbers per set), the features of every
// prediction (fixed context length, direct path), or the tokens, plus the
// per-block partial sums.
func (c *Config) EstimateBytes() float64 {
	d, tokens := float64(c.Model.D), float64(shapeOf(c.Data.Lengths()).tokens)
	f := float64(c.features())
	du := f / d
	sets := []int{c.P}
	if c.Test > 0 {
		sets = append(sets, c.Test, c.Test, c.Test)
	}
	var words float64
	for _, n := range sets {
		p := float64(n)
		blocks := float64(numBlocks(n))
		switch path := c.resolvePath(); {
		case path == MomentsPath:
			words += f * f
		case path == ColumnsPath || c.Model.Attention == Softmax:
			words += p*tokens*(d+2) + blocks*float64(c.Model.Len()+c.Model.H*(c.Model.D+1))
		case c.Data.Lengths().NTPMax > 0:
			words += p*tokens*(d+2) + blocks*f
		default:
			words += p*(du+d+1) + blocks*f
		}
	}
	return 8 * words
}
