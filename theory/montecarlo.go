package theory

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Setting is the in-context regression law of the reference predictors:
// tokens x ~ N(0, TokenVar·I_D), labels y = wᵀx + ε with ε ~ N(0, NoiseVar),
// N context pairs followed by one query.
type Setting struct {
	D        int     // token dimension, ≥ 1
	N        int     // context pairs before the query, ≥ 0
	TokenVar float64 // σ_x², > 0 and finite
	NoiseVar float64 // σ², ≥ 0 and finite
}

// Validate returns an error naming the first field of s outside its range.
func (s Setting) Validate() error {
	switch {
	case s.D < 1:
		return fmt.Errorf("theory: Setting.D = %d: must be ≥ 1", s.D)
	case s.N < 0:
		return fmt.Errorf("theory: Setting.N = %d: must be ≥ 0", s.N)
	case !(s.TokenVar > 0) || math.IsInf(s.TokenVar, 1):
		return fmt.Errorf("theory: Setting.TokenVar = %v: must be > 0 and finite", s.TokenVar)
	case !(s.NoiseVar >= 0) || math.IsInf(s.NoiseVar, 1):
		return fmt.Errorf("theory: Setting.NoiseVar = %v: must be ≥ 0 and finite", s.NoiseVar)
	}
	return nil
}

// The configuration of Raventós et al. (icl/configs/example.py of
// mansheej/icl-task-diversity, commit 7c35803e68c49f94ac2e618ce4e1bc14470b771b):
// n_dims = 8, n_points = 16, data_scale = task_scale = 1, noise_scale = 0.5,
// n_tasks from 1 to 2^20 (1_048_576 in the example).
const (
	RaventosD        = 8
	RaventosPoints   = 16
	RaventosNoiseVar = 0.25
)

// RaventosSetting returns the law of Raventós et al. with n context pairs.
// Their sequences hold RaventosPoints pairs and the prediction at position
// i (from 0) sees the i pairs before it, so their contexts have
// n = 0…15 pairs; their training loss and their logged errors average over
// the positions.
func RaventosSetting(n int) Setting {
	return Setting{D: RaventosD, N: n, TokenVar: 1, NoiseVar: RaventosNoiseVar}
}

// Estimate is a Monte Carlo estimate.
type Estimate struct {
	Mean    float64 // sample mean
	StdErr  float64 // sample standard deviation / √Samples
	Samples int
}

// ExpectedError estimates by Monte Carlo the expected squared error
// E[(y_q − ŷ_q)²] of the predictor p on the law s, label noise included:
// samples independent draws of a task w, a context of s.N pairs and its
// labels, seeded by seed (same arguments, bit-identical result). The task
// is fresh, w ~ N(0, I_D), if set is nil, and a uniformly drawn row of set
// (K×D) otherwise.
//
// The query is integrated out exactly: given w and ŵ,
// E[(y_q − ŵᵀx_q)²] = σ_x²‖w − ŵ‖² + σ², and the estimate is the sample
// mean of that quantity, with the standard error of the mean. The noiseless
// error E[(wᵀx_q − ŷ_q)²] is Mean − s.NoiseVar with the same standard error;
// Raventós et al. plot that divided by D (train.py: mse(preds, oracle)/n_dims).
//
// The draws do not depend on p, so two predictors estimated with the same
// seed see the same tasks and contexts and their difference has a small
// standard error (common random numbers).
func ExpectedError(s Setting, p Predictor, set mat.Matrix, samples int, seed uint64) (Estimate, error) {
	if err := s.Validate(); err != nil {
		return Estimate{}, err
	}
	if p == nil {
		return Estimate{}, fmt.Errorf("theory: ExpectedError: nil predictor")
	}
	if samples < 2 {
		return Estimate{}, fmt.Errorf("theory: ExpectedError samples = %d: must be ≥ 2", samples)
	}
	var k int
	if set != nil {
		var d int
		k, d = set.Dims()
		if d != s.D {
			return Estimate{}, fmt.Errorf("theory: ExpectedError: task set has D = %d: must be Setting.D = %d", d, s.D)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x7468656f7279)) // "theory"
	sx, se := math.Sqrt(s.TokenVar), math.Sqrt(s.NoiseVar)
	w := make([]float64, s.D)
	wh := make([]float64, s.D)
	c := Context{D: s.D, X: make([]float64, s.N*s.D), Y: make([]float64, s.N)}
	var mean, m2 float64 // Welford
	for i := range samples {
		if set == nil {
			for j := range w {
				w[j] = rng.NormFloat64()
			}
		} else {
			mat.Row(w, rng.IntN(k), set)
		}
		for j := range c.X {
			c.X[j] = sx * rng.NormFloat64()
		}
		for n := range c.Y {
			c.Y[n] = floats.Dot(c.X[n*s.D:(n+1)*s.D], w) + se*rng.NormFloat64()
		}
		if _, err := p.Weights(wh, c); err != nil {
			return Estimate{}, err
		}
		dist := floats.Distance(w, wh, 2)
		e := s.TokenVar*dist*dist + s.NoiseVar
		delta := e - mean
		mean += delta / float64(i+1)
		m2 += delta * (e - mean)
	}
	sd := math.Sqrt(m2 / float64(samples-1))
	return Estimate{Mean: mean, StdErr: sd / math.Sqrt(float64(samples)), Samples: samples}, nil
}
