package train

import "github.com/linattn/linattn/flow"

// Linear attention is a linear model in features of the sequence
// (docs/training.md, "Linear attention as a linear model"): for a
// prediction from n context tokens, with S = (Σ_{j≤n} x̃_j x̃_jᵀ + x̃_q x̃_qᵀ)/n
// (the paper's XXᵀ/N, a symmetric (D+1)×(D+1) matrix whose label row is
// β = (1/n) Σ_j y_j x_j, then (1/n)Σ_j y_j²),
//
//	ŷ_q = Σ_i ṽ_iᵀ S W^KQ_i x̃_q = uᵀ C x_q = cᵀ (u ⊗ x_q),
//
// with u = vech(S) (the full layer), β (the reduced one) or (β, S_DD)
// (the label-key layer), the entries flow.Layer.Pairs of S, and the
// coefficients c of flow.Coefficients. featureMap computes u from the
// tokens; the coefficients and their chain rule are package flow's, one
// implementation for the population flow and for training.
type featureMap struct {
	d, du int
	pairs [][2]int // the entries (a, b), a ≤ b, of S in u (index D the label)
}

func newFeatureMap(coef *flow.Coefficients, d int) *featureMap {
	return &featureMap{d: d, du: coef.Features() / d, pairs: coef.Pairs()}
}

// size returns the number of features u ⊗ x_q, the length of c.
func (f *featureMap) size() int { return f.du * f.d }

// prefixes calls emit for each prediction of the sequence q with context
// lengths first..last: the features u (valid during the call), the query
// token and its label. acc is scratch of length du.
func (f *featureMap) prefixes(q *sequence, first, last int, acc, u []float64, emit func(u, xq []float64, y float64)) {
	d, d1 := f.d, f.d+1
	clear(acc)
	for j := 0; j < last; j++ {
		f.addToken(acc, q.tok[j*d1:(j+1)*d1])
		n := j + 1
		if n < first {
			continue
		}
		xq := q.tok[n*d1 : n*d1+d]
		copy(u, acc)
		for p, ab := range f.pairs { // the query column x̃_q = (x_q, 0) of S
			if ab[1] < d {
				u[p] += xq[ab[0]] * xq[ab[1]]
			}
		}
		inv := 1 / float64(n)
		for p := range u {
			u[p] *= inv
		}
		emit(u, xq, q.yt[n])
	}
}

// addToken adds the context column x̃ = (x, y) to the running sums of
// x̃_a x̃_b over the pairs: vech(x̃x̃ᵀ) (full), y·x (reduced), y·x and y²
// (label-key).
func (f *featureMap) addToken(acc, col []float64) {
	for p, ab := range f.pairs {
		acc[p] += col[ab[0]] * col[ab[1]]
	}
}
