package theory

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Context is one in-context regression prompt: N pairs (x_n, y_n) with
// x_n ∈ R^D stored row-major in X (N·D values) and the labels in Y (N
// values). N = 0 is an empty context.
type Context struct {
	D int
	X []float64
	Y []float64
}

// check returns an error if c is malformed.
func (c Context) check() error {
	if c.D < 1 {
		return fmt.Errorf("theory: Context.D = %d: must be ≥ 1", c.D)
	}
	if len(c.X) != len(c.Y)*c.D {
		return fmt.Errorf("theory: Context.X has %d values: must be len(Y)·D = %d", len(c.X), len(c.Y)*c.D)
	}
	return nil
}

// Predictor is an in-context predictor that is linear in the query: it
// estimates a task vector ŵ from a context and predicts ŷ = ŵᵀx_q.
type Predictor interface {
	// Weights writes ŵ for the context c into dst and returns it. dst must
	// be nil (a new slice is allocated) or of length c.D.
	Weights(dst []float64, c Context) ([]float64, error)
}

// Ridge is ridge regression on the context,
//
//	ŵ = (XᵀX + λI)⁻¹ Xᵀy,
//
// the posterior mean of w, so the Bayes predictor, for the prior
// w ~ N(0, I_D) and label noise of variance λ, whatever the token law.
// λ = 0 is the limit λ → 0⁺, the minimum-norm least-squares solution X⁺y.
// Raventós et al. use λ = σ²/σ_w² = 0.25 (models.Ridge with
// lam = noise_scale²/task_scale² in icl/tasks.py of mansheej/icl-task-diversity).
//
// A Ridge keeps scratch space and is not safe for concurrent use.
//
// References:
//
//	Raventós, Paul, Chen, Ganguli, "Pretraining task diversity and the
//	emergence of non-Bayesian in-context learning for regression",
//	NeurIPS 2023, arXiv:2306.15063.
type Ridge struct {
	lambda float64
	gram   mat.SymDense
	chol   mat.Cholesky
	svd    mat.SVD
	b      mat.VecDense
}

// NewRidge returns ridge regression with regularization lambda ≥ 0.
func NewRidge(lambda float64) (*Ridge, error) {
	if !(lambda >= 0) || math.IsInf(lambda, 1) {
		return nil, fmt.Errorf("theory: ridge lambda = %v: must be ≥ 0 and finite", lambda)
	}
	return &Ridge{lambda: lambda}, nil
}

// Lambda returns the regularization λ of r.
func (r *Ridge) Lambda() float64 { return r.lambda }

// Weights implements Predictor. An empty context gives ŵ = 0.
func (r *Ridge) Weights(dst []float64, c Context) ([]float64, error) {
	dst, err := weightsDst(dst, c)
	if err != nil || len(c.Y) == 0 {
		return dst, err
	}
	n := len(c.Y)
	x := mat.NewDense(n, c.D, c.X)
	w := mat.NewVecDense(c.D, dst)
	if r.lambda == 0 {
		return dst, r.minNorm(w, x, c.Y)
	}
	r.gram.Reset()
	r.gram.SymOuterK(1, x.T())
	for i := range c.D {
		r.gram.SetSym(i, i, r.gram.At(i, i)+r.lambda)
	}
	if !r.chol.Factorize(&r.gram) {
		return dst, fmt.Errorf("theory: ridge: XᵀX + λI not positive definite (λ = %v)", r.lambda)
	}
	r.b.Reset()
	r.b.MulVec(x.T(), mat.NewVecDense(n, c.Y))
	if err := r.chol.SolveVecTo(w, &r.b); err != nil {
		return dst, fmt.Errorf("theory: ridge: %w", err)
	}
	return dst, nil
}

// minNorm writes X⁺y into w, with singular values at or below
// max(N, D)·ε·σ_max treated as zero (numpy's lstsq default).
func (r *Ridge) minNorm(w *mat.VecDense, x *mat.Dense, y []float64) error {
	if !r.svd.Factorize(x, mat.SVDThin) {
		return fmt.Errorf("theory: ridge: SVD of the context failed")
	}
	n, d := x.Dims()
	rank := r.svd.Rank(float64(max(n, d)) * 0x1p-52)
	if rank == 0 {
		w.Zero()
		return nil
	}
	r.svd.SolveVecTo(w, mat.NewVecDense(n, y), rank)
	return nil
}

// weightsDst checks c and returns dst of length c.D, zeroed if the context
// is empty.
func weightsDst(dst []float64, c Context) ([]float64, error) {
	if err := c.check(); err != nil {
		return dst, err
	}
	if dst == nil {
		dst = make([]float64, c.D)
	}
	if len(dst) != c.D {
		return dst, fmt.Errorf("theory: weights dst has length %d: must be D = %d", len(dst), c.D)
	}
	if len(c.Y) == 0 {
		for i := range dst {
			dst[i] = 0
		}
	}
	return dst, nil
}
