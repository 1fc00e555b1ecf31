package train

import (
	"fmt"
	"math"
)

// Path is how the loss and its gradient are computed.
type Path int

const (
	// Auto is Moments where they are exact and fit in memory (linear
	// attention, full batch, at most MaxMomentFeatures features), else
	// Direct.
	Auto Path = iota
	// Direct evaluates the layer sequence by sequence at every step: for
	// linear attention through the features of each prediction (its Gram
	// matrix XXᵀ/n, computed once for a fixed context length), for softmax
	// attention column by column. Its cost is proportional to P.
	Direct
	// Moments evaluates linear attention through the empirical moments of
	// its features (docs/training.md, "The exact fast path"), accumulated
	// once while the data are drawn and not stored: the cost of a step does
	// not depend on P. Full batch only.
	Moments
	// Columns evaluates the layer column by column for linear attention too:
	// the literal definition, slower than Direct; the reference the others
	// are tested against.
	Columns
)

func (p Path) String() string {
	switch p {
	case Auto:
		return "auto"
	case Direct:
		return "direct"
	case Moments:
		return "moments"
	case Columns:
		return "columns"
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// MaxMomentFeatures is the most features F for which Auto takes the
// moments: their F×F matrix then takes at most 32 MiB per set of
// sequences, and accumulating it at most 2·10⁶ operations per sequence. F
// is D² (Reduced, D ≤ 45) or D(D+1)(D+2)/2 (Full, D ≤ 15).
const MaxMomentFeatures = 2048

// Config describes a finite-data training problem.
type Config struct {
	Model Model
	Task  Task
	P     int    // number of training sequences, ≥ 1
	Test  int    // sequences in each test set (in-context, in-weight; docs/training.md), ≥ 0
	Seed  uint64 // seed of the data (sequences, w₀, minibatch order)
	Path  Path
	// Batch > 0 is the minibatch size of SGD (Direct or Columns path),
	// ≤ P; 0 is full-batch gradient descent.
	Batch int
	// Tau > 0 is the time constant: gradient descent with learning rate η
	// takes t/τ = 2η per step (docs/math.md, "Conventions").
	Tau float64
}

// Trainer holds the data of a Config and evaluates the loss and its
// gradient on them. It is not safe for concurrent use.
type Trainer struct {
	cfg     Config
	path    Path
	fm      *featureMap
	train   objective
	testICL objective
	testIWL objective
	w, g    *weights
}

// New validates cfg, draws the data and prepares their evaluation.
func New(cfg Config) (*Trainer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg, path: cfg.resolvePath(), fm: newFeatureMap(&cfg.Model)}
	if err := t.checkPath(); err != nil {
		return nil, err
	}
	smp := newSampler(&t.cfg.Task, cfg.Seed)
	t.train = t.objective(smp, setTrain, cfg.P)
	if cfg.Test > 0 {
		t.testICL = t.objective(smp, setICL, cfg.Test)
		t.testIWL = t.objective(smp, setIWL, cfg.Test)
	}
	t.w, t.g = newWeights(&t.cfg.Model), newWeights(&t.cfg.Model)
	return t, nil
}

func (c *Config) validate() error {
	if err := c.Model.validate(); err != nil {
		return err
	}
	if err := c.Task.validate(); err != nil {
		return err
	}
	if c.Task.Data.Dim() != c.Model.D {
		return fmt.Errorf("train: the data have D = %d, the model D = %d", c.Task.Data.Dim(), c.Model.D)
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
	if !(c.Tau > 0) || math.IsInf(c.Tau, 0) {
		return fmt.Errorf("train: Tau = %g, want a finite τ > 0", c.Tau)
	}
	if c.Path < Auto || c.Path > Columns {
		return fmt.Errorf("train: Path = %d, want Auto, Direct, Moments or Columns", int(c.Path))
	}
	return nil
}

func (c *Config) resolvePath() Path {
	if c.Path != Auto {
		return c.Path
	}
	if c.Model.Attention == Linear && c.Batch == 0 && newFeatureMap(&c.Model).size() <= MaxMomentFeatures {
		return Moments
	}
	return Direct
}

func (t *Trainer) checkPath() error {
	if t.path != Moments {
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
	m, task := &t.cfg.Model, &t.cfg.Task
	switch {
	case t.path == Moments:
		return newLinearObjective(t.fm, sampleMoments(smp, t.fm, set, n))
	case t.path == Columns || m.Attention == Softmax:
		return newTokenObjective(sampleRaw(smp, set, n), m, task)
	case task.NTPMax > 0:
		return newLinearObjective(t.fm, newPrefixObjective(sampleRaw(smp, set, n), t.fm, task))
	}
	return newLinearObjective(t.fm, newGramObjective(sampleGram(smp, t.fm, set, n)))
}

// Path returns the path in use (Auto resolved).
func (t *Trainer) Path() Path { return t.path }

// Config returns the configuration.
func (t *Trainer) Config() Config { return t.cfg }

// Len returns the length of the weight vector.
func (t *Trainer) Len() int { return t.cfg.Model.Len() }

// Features returns the number F of features of linear attention
// (docs/training.md): D² for the Reduced model, D(D+1)(D+2)/2 for the Full
// one.
func (t *Trainer) Features() int { return t.fm.size() }

// Time returns t = 2ητ·step, the time of the flow that gradient descent
// with learning rate lr follows.
func (t *Trainer) Time(lr float64, step int) float64 { return 2 * lr * t.cfg.Tau * float64(step) }

// Loss returns the training loss L̂(θ) = (1/P) Σ_μ (y_μ − ŷ_μ)² (averaged
// over the prefixes for the next-token loss).
func (t *Trainer) Loss(theta []float64) float64 { return t.eval(t.train, theta, nil, nil) }

// Gradient writes ∂L̂/∂θ into grad and returns L̂(θ).
func (t *Trainer) Gradient(grad, theta []float64) float64 {
	return t.eval(t.train, theta, grad, nil)
}

// TestLosses returns the losses on the in-context and in-weight test sets
// (docs/training.md, "Data"), NaN without test sets.
func (t *Trainer) TestLosses(theta []float64) (icl, iwl float64) {
	if t.testICL == nil {
		return math.NaN(), math.NaN()
	}
	return t.eval(t.testICL, theta, nil, nil), t.eval(t.testIWL, theta, nil, nil)
}

func (t *Trainer) eval(o objective, theta, grad []float64, batch []int32) float64 {
	m := &t.cfg.Model
	if len(theta) != m.Len() {
		panic(fmt.Sprintf("train: len(theta) = %d, want %d", len(theta), m.Len()))
	}
	m.expand(t.w, theta)
	if grad == nil {
		return o.eval(t.w, nil, batch)
	}
	loss := o.eval(t.w, t.g, batch)
	m.pack(grad, t.g)
	return loss
}

// EstimateBytes returns the memory the data of cfg take once drawn and
// prepared: the moments (F² numbers per set), the features of every
// prediction (fixed context length, direct path), or the tokens, plus the
// per-block partial sums.
func (c *Config) EstimateBytes() float64 {
	fm := newFeatureMap(&c.Model)
	d, tokens := float64(c.Model.D), float64(c.Task.tokens())
	f := float64(fm.size())
	sets := []int{c.P}
	if c.Test > 0 {
		sets = append(sets, c.Test, c.Test)
	}
	var words float64
	for _, n := range sets {
		p := float64(n)
		blocks := float64(numBlocks(n))
		switch path := c.resolvePath(); {
		case path == Moments:
			words += f * f
		case path == Columns || c.Model.Attention == Softmax:
			words += p*tokens*(d+2) + blocks*float64(c.Model.Len()+c.Model.H*(c.Model.D+1))
		case c.Task.NTPMax > 0:
			words += p*tokens*(d+2) + blocks*f
		default:
			words += p*(float64(fm.du)+d+1) + blocks*f
		}
	}
	return 8 * words
}
