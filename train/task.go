package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/linattn/linattn/flow"
)

// Task is the in-context linear regression task the sequences are drawn
// from (docs/training.md, "Data"): tokens x ~ N(0, Λ), a task vector per
// sequence, labels y = wᵀx.
type Task struct {
	// Data gives Λ (eigenvalues and eigenvectors). Its ν is not used to
	// sample; it should be that of the context lengths below, for the
	// comparison with the population flow.
	Data *flow.Data
	// N is the fixed context length: each sequence has N context tokens and
	// a query, and the loss is on the query. Used when NTPMax is 0.
	N int
	// NTPMax > 0 selects the next-token loss (paper eq. next-token-loss):
	// each sequence has NTPMax+1 tokens, and the loss averages the
	// prediction of token n+1 from the first n, n = 1..NTPMax (context
	// lengths uniform on 1..NTPMax, ν = H_NTPMax/NTPMax).
	NTPMax int
	// ICL is the fraction c ∈ [0, 1] of training sequences whose task vector
	// is drawn w ~ N(0, I); each of the others (probability 1 − c) uses one
	// fixed task vector w₀ (paper appendix supp:icl-iwl). 1 is the paper's
	// purely in-context task.
	ICL float64
}

var errNilData = errors.New("train: Task.Data is nil")

func (t *Task) validate() error {
	if t.Data == nil {
		return errNilData
	}
	if t.NTPMax < 0 || (t.NTPMax == 0 && t.N < 1) {
		return fmt.Errorf("train: context length N = %d, NTPMax = %d: want N ≥ 1, or NTPMax ≥ 1 for the next-token loss", t.N, t.NTPMax)
	}
	if !(t.ICL >= 0 && t.ICL <= 1) {
		return fmt.Errorf("train: ICL = %g, want a fraction c in [0, 1]", t.ICL)
	}
	return nil
}

// tokens returns the number of tokens of a sequence (context and query).
func (t *Task) tokens() int {
	if t.NTPMax > 0 {
		return t.NTPMax + 1
	}
	return t.N + 1
}

// prefixes returns the context lengths predicted in a sequence, first and
// last, and the weight of each in the loss of the sequence.
func (t *Task) prefixes() (first, last int, weight float64) {
	if t.NTPMax > 0 {
		return 1, t.NTPMax, 1 / float64(t.NTPMax)
	}
	return t.N, t.N, 1
}

// seqSet names a set of sequences. Each has its own random stream, so the
// training data do not depend on the test-set sizes and vice versa.
type seqSet int

const (
	setTrain seqSet = iota // the training sequences
	// setICL sequences are purely in-context: a fresh w ~ N(0, I) each.
	setICL
	// setIWL sequences are purely in-weight: the query is labeled by the
	// fixed task vector w₀, and the context labels are independent of the
	// tokens, drawn N(0, tr Λ) (the variance of y under random tasks; the
	// paper's code draws N(0, 1) with tr Λ = 1), so the context carries no
	// information about the query's label.
	setIWL
	setFixedTask // the stream of w₀
)

// sequence holds the tokens of one sequence: tok (tokens × (D+1),
// row-major) has the columns x̃_j = (x_j, y_j) of X with the labels the
// context shows, yt the labels to predict.
type sequence struct {
	tok, yt []float64
}

func newSequence(t *Task) *sequence {
	n, d := t.tokens(), t.Data.Dim()
	return &sequence{tok: make([]float64, n*(d+1)), yt: make([]float64, n)}
}

// sampler draws sequences. Sequence μ of a set is a function of (seed,
// set, μ) only: every sequence has its own PCG stream, so the data do not
// depend on the order in which sequences are drawn, nor on the number of
// goroutines drawing them.
type sampler struct {
	task   *Task
	seed   uint64
	d      int
	factor []float64 // V diag(√λ), row-major: x = factor·g with g ~ N(0, I)
	w0     []float64 // the fixed task vector, ‖w₀‖ = √D
	noise  float64   // √tr(Λ), the scale of the in-weight test set's context labels
	pcg    *rand.PCG
	rng    *rand.Rand
	g, w   []float64
}

func newSampler(t *Task, seed uint64) *sampler {
	d := t.Data.Dim()
	s := &sampler{task: t, seed: seed, d: d, noise: math.Sqrt(t.Data.Trace()),
		g: make([]float64, d), w: make([]float64, d)}
	s.pcg = rand.NewPCG(0, 0)
	s.rng = rand.New(s.pcg)
	lambda, vecs := t.Data.Lambda(), t.Data.Vecs()
	s.factor = make([]float64, d*d)
	for r := 0; r < d; r++ {
		for k := 0; k < d; k++ {
			s.factor[r*d+k] = vecs.At(r, k) * math.Sqrt(lambda[k])
		}
	}
	s.w0 = fixedTaskVector(d, seed)
	return s
}

// clone returns a sampler with its own random state, for another goroutine.
func (s *sampler) clone() *sampler {
	c := *s
	c.pcg = rand.NewPCG(0, 0)
	c.rng = rand.New(c.pcg)
	c.g, c.w = make([]float64, s.d), make([]float64, s.d)
	return &c
}

// stream returns the PCG stream of sequence mu of set.
func stream(set seqSet, mu int) uint64 { return uint64(set)<<56 | uint64(mu) }

// fixedTaskVector draws w₀ ~ N(0, I) and scales it to ‖w₀‖ = √D, as the
// paper's code does (data.py, gen_dataset).
func fixedTaskVector(d int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, stream(setFixedTask, 0)))
	w := make([]float64, d)
	var n2 float64
	for i := range w {
		w[i] = rng.NormFloat64()
		n2 += w[i] * w[i]
	}
	scale := math.Sqrt(float64(d) / n2)
	for i := range w {
		w[i] *= scale
	}
	return w
}

// draw fills q with sequence mu of set. Every sequence consumes the same
// draws in the same order (a uniform for the fixed-task choice, D normals
// for w, then D normals per token, and in the in-weight test set one more
// per context token), so sequences with the same (seed, set, μ) share
// their tokens whatever the fraction c.
func (s *sampler) draw(q *sequence, set seqSet, mu int) {
	s.pcg.Seed(s.seed, stream(set, mu))
	d := s.d
	fixed := s.rng.Float64() >= s.task.ICL
	for i := range s.w {
		s.w[i] = s.rng.NormFloat64()
	}
	switch set {
	case setICL:
		fixed = false
	case setIWL:
		fixed = true
	}
	w := s.w
	if fixed {
		w = s.w0
	}
	n := s.task.tokens()
	for j := 0; j < n; j++ {
		for k := range s.g {
			s.g[k] = s.rng.NormFloat64()
		}
		x := q.tok[j*(d+1) : j*(d+1)+d]
		var y float64
		for r := 0; r < d; r++ {
			row := s.factor[r*d : (r+1)*d]
			var v float64
			for k, g := range s.g {
				v += row[k] * g
			}
			x[r] = v
			y += w[r] * v
		}
		q.tok[j*(d+1)+d], q.yt[j] = y, y
		if set == setIWL && j < n-1 {
			q.tok[j*(d+1)+d] = s.noise * s.rng.NormFloat64()
		}
	}
}
