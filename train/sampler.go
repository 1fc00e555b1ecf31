package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/linattn/linattn/law"
	"gonum.org/v1/gonum/mat"
)

// sequenceShape is what the context lengths of the data (law.Lengths: a
// fixed N, or the next-token loss over every prefix) make of a sequence:
// its tokens (context and query) and the context lengths first..last of
// its predictions, each with weight in the loss of the sequence.
type sequenceShape struct {
	tokens, first, last int
	weight              float64
}

func shapeOf(l law.Lengths) sequenceShape {
	if l.NTPMax > 0 {
		return sequenceShape{tokens: l.NTPMax + 1, first: 1, last: l.NTPMax, weight: 1 / float64(l.NTPMax)}
	}
	return sequenceShape{tokens: l.N + 1, first: l.N, last: l.N, weight: 1}
}

var errNilData = errors.New("train: Config.Data is nil")

// checkData validates the data: sequences need their context lengths, not
// only ν.
func checkData(data *law.Data) error {
	if data == nil {
		return errNilData
	}
	if l := data.Lengths(); !l.Sampled() {
		return fmt.Errorf("train: the data give only ν = %g; sampling needs the context lengths (law.Data.WithLengths: N or NTPMax)", l.Nu)
	}
	return nil
}

// seqSet names a set of sequences. Each has its own random stream, so the
// training data do not depend on the test-set sizes and vice versa.
type seqSet int

const (
	setTrain seqSet = iota // the training sequences
	// setICL sequences are purely in-context: a fresh w ~ N(0, I) each.
	setICL
	// setIWL sequences are purely in-weight: the query is labeled by a
	// fixed task vector (one of law.Tasks.Fixed, uniformly), and the
	// context labels are independent of the tokens, drawn N(0, tr Λ) (the
	// variance of y under random tasks; the paper's code draws N(0, 1) with
	// tr Λ = 1), so the context carries no information about the query's
	// label.
	setIWL
	_ // the stream law.FixedTasks draws the fixed tasks from
	// setIDG sequences are labeled by a fixed task, context and query
	// alike: the in-distribution test set (law.InDistributionTest).
	setIDG
)

// sequence holds the tokens of one sequence: tok (tokens × (D+1),
// row-major) has the columns x̃_j = (x_j, y_j) of X with the labels the
// context shows, yt the labels to predict.
type sequence struct {
	tok, yt []float64
}

func newSequence(shape sequenceShape, d int) *sequence {
	return &sequence{tok: make([]float64, shape.tokens*(d+1)), yt: make([]float64, shape.tokens)}
}

// sampler draws sequences. Sequence μ of a set is a function of (seed,
// set, μ) only: every sequence has its own PCG stream, so the data do not
// depend on the order in which sequences are drawn, nor on the number of
// goroutines drawing them.
type sampler struct {
	shape  sequenceShape
	seed   uint64
	d      int
	factor []float64   // V diag(√λ), row-major: x = factor·g with g ~ N(0, I)
	icl    float64     // the fraction c of in-context training sequences
	fixed  [][]float64 // the fixed task vectors (law.Tasks.Fixed)
	// omega and omegaTest are Ω^{1/2} and Ω_test^{1/2} (row-major; nil: I),
	// so that w = Ω^{1/2} g with g ~ N(0, I).
	omega, omegaTest []float64
	sigma            float64 // σ, the standard deviation of every label's noise
	noise            float64 // the scale √(tr(ΛΩ) + σ²) of the in-weight test set's context labels
	pcg              *rand.PCG
	rng              *rand.Rand
	g, w             []float64
}

func newSampler(data *law.Data, seed uint64) *sampler {
	d := data.Dim()
	tasks := data.Tasks()
	s := &sampler{shape: shapeOf(data.Lengths()), seed: seed, d: d, icl: tasks.Fraction(), fixed: tasks.Fixed,
		omega: sqrtSym(tasks.Cov), sigma: math.Sqrt(tasks.Noise),
		noise: math.Sqrt(data.LabelVariance()), g: make([]float64, d), w: make([]float64, d)}
	s.omegaTest = s.omega
	if tasks.TestCov != nil {
		s.omegaTest = sqrtSym(tasks.TestCov)
	}
	s.pcg = rand.NewPCG(0, 0)
	s.rng = rand.New(s.pcg)
	lambda, vecs := data.Lambda(), data.Vecs()
	s.factor = make([]float64, d*d)
	for r := 0; r < d; r++ {
		for k := 0; k < d; k++ {
			s.factor[r*d+k] = vecs.At(r, k) * math.Sqrt(lambda[k])
		}
	}
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

// task returns the task vector of a sequence of set whose first draw is
// u ~ U[0, 1): for a training sequence with u ≥ c the fixed task
// ⌊K(u − c)/(1 − c)⌋ (with probability (1 − c)/K each), for an in-weight
// one the fixed task ⌊Ku⌋, else the random w just drawn.
func (s *sampler) task(set seqSet, u float64) []float64 {
	k := len(s.fixed)
	switch {
	case set == setIWL || set == setIDG:
		return s.fixed[min(k-1, int(u*float64(k)))]
	case set == setTrain && u >= s.icl:
		return s.fixed[min(k-1, int((u-s.icl)/(1-s.icl)*float64(k)))]
	}
	return s.w
}

// draw fills q with sequence mu of set. Every sequence consumes the same
// draws in the same order (a uniform for the fixed-task choice, D normals
// for w, then D normals per token, in the in-weight test set one more per
// context token, and with label noise one more per token), so sequences
// with the same (seed, set, μ) share their tokens whatever the fraction c,
// the fixed tasks and Ω.
func (s *sampler) draw(q *sequence, set seqSet, mu int) {
	s.pcg.Seed(s.seed, stream(set, mu))
	d := s.d
	u := s.rng.Float64()
	for i := range s.w {
		s.w[i] = s.rng.NormFloat64()
	}
	s.scaleTask(set)
	w := s.task(set, u)
	n := s.shape.tokens
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
		if s.sigma > 0 { // the label noise, after the draws of the noiseless law
			eps := s.sigma * s.rng.NormFloat64()
			q.yt[j] += eps
			if set != setIWL || j == n-1 {
				q.tok[j*(d+1)+d] += eps
			}
		}
	}
}

// scaleTask turns the random task w ~ N(0, I) just drawn into
// w ~ N(0, Ω) (Ω_test for the in-context test set).
func (s *sampler) scaleTask(set seqSet) {
	f := s.omega
	if set == setICL {
		f = s.omegaTest
	}
	if f == nil {
		return
	}
	copy(s.g, s.w)
	for i := range s.w {
		var v float64
		for k, g := range s.g {
			v += f[i*s.d+k] * g
		}
		s.w[i] = v
	}
}

// sqrtSym returns the symmetric square root V diag(√e) Vᵀ of the positive
// definite m (row-major), nil for nil.
func sqrtSym(m *mat.Dense) []float64 {
	if m == nil {
		return nil
	}
	n, _ := m.Dims()
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, 0.5*(m.At(i, j)+m.At(j, i)))
		}
	}
	var eig mat.EigenSym
	eig.Factorize(sym, true) // law.Data.WithTasks checked that it succeeds
	vals := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for k, e := range vals {
				out[i*n+j] += v.At(i, k) * math.Sqrt(e) * v.At(j, k)
			}
		}
	}
	return out
}
