package train

import (
	"math"

	"github.com/linattn/linattn/flow"
)

// rhoSoftmax is the scaling ρ of softmax attention: 1, as in the paper's
// code (net.py applies torch.softmax to the unscaled scores).
const rhoSoftmax = 1.0

// tokenLayer evaluates the attention layer literally, column by column, for
// one prediction (docs/training.md, "The layer"): for each head i,
//
//	c_i = W^KQ_i x̃_q,  s_ij = x̃_jᵀ c_i,  a_ij = s_ij/n (linear) or softmax_j(s_ij/ρ),
//	o_i = Σ_j a_ij x̃_j,  ŷ = Σ_i ṽ_iᵀ o_i,
//
// over the n context columns x̃_j and the query column x̃_q = (x_q, 0), and
// back-propagates (y − ŷ)² through it by hand. It is the reference for every
// other evaluation and the only one for softmax attention. The heads are
// the innermost index of its scratch (cT, oT, vT are (D+1)×H; s, ds are
// columns×H), so that every product is one loop over the columns.
type tokenLayer struct {
	m             *Model
	d, h          int
	cT, oT, vT    []float64 // (D+1)×H: c_i, o_i, ṽ_i as columns
	dcT           []float64 // (D+1)×H: ∂L/∂c_i
	s, ds         []float64 // columns×H: scores, then weights; ∂L/∂a, then ∂L/∂s
	qx            []float64 // H·R: q_{i,r}·x_q (separate)
	mx, sum, mean []float64 // H: softmax scratch
}

func newTokenLayer(m *Model, tokens int) *tokenLayer {
	d1, h := m.D+1, m.H
	return &tokenLayer{m: m, d: m.D, h: h,
		cT: make([]float64, d1*h), oT: make([]float64, d1*h), vT: make([]float64, d1*h), dcT: make([]float64, d1*h),
		s: make([]float64, tokens*h), ds: make([]float64, tokens*h), qx: make([]float64, m.hr()),
		mx: make([]float64, h), sum: make([]float64, h), mean: make([]float64, h)}
}

// prefix returns weight·(y − ŷ)² for the prediction of token n of q from
// the n tokens before it and, with g not nil, adds its gradient to g.
func (l *tokenLayer) prefix(w, g *flow.Blocks, q *sequence, n int, weight float64) float64 {
	yhat := l.forward(w, q, n)
	r := q.yt[n] - yhat
	if g != nil {
		l.backward(w, g, q, n, -2*weight*r)
	}
	return weight * r * r
}

// rowTimes sets out[j] = x̃_jᵀ M for the columns j = 0..n of the
// prediction from n tokens (the query's label entry is 0), M (D+1)×H.
func rowTimes(out, tok, mat []float64, n, d1, h int) {
	if h == 2 {
		rowTimes2(out, tok, mat, n, d1)
		return
	}
	rowTimesAny(out, tok, mat, n, d1, h)
}

// rowTimesAny is rowTimes for any number of heads.
func rowTimesAny(out, tok, mat []float64, n, d1, h int) {
	for j := 0; j <= n; j++ {
		oj := out[j*h : (j+1)*h]
		clear(oj)
		row := tok[j*d1 : (j+1)*d1]
		if j == n {
			row = row[:d1-1]
		}
		for k, x := range row {
			mk := mat[k*h : (k+1)*h]
			for i := range oj {
				oj[i] += x * mk[i]
			}
		}
	}
}

// weightedSum sets M = Σ_j x̃_j a_jᵀ over the columns j = 0..n, M (D+1)×H.
func weightedSum(mat, tok, a []float64, n, d1, h int) {
	if h == 2 {
		weightedSum2(mat, tok, a, n, d1)
		return
	}
	weightedSumAny(mat, tok, a, n, d1, h)
}

// weightedSumAny is weightedSum for any number of heads.
func weightedSumAny(mat, tok, a []float64, n, d1, h int) {
	clear(mat)
	for j := 0; j <= n; j++ {
		aj := a[j*h : (j+1)*h]
		row := tok[j*d1 : (j+1)*d1]
		if j == n {
			row = row[:d1-1]
		}
		for k, x := range row {
			mk := mat[k*h : (k+1)*h]
			for i, ai := range aj {
				mk[i] += x * ai
			}
		}
	}
}

// rowTimes2 is rowTimes for two heads: each sum in a register and in the
// same order (k = 0, 1, …), so with the same results bit for bit, two
// columns at a time so that four independent sums overlap.
func rowTimes2(out, tok, mat []float64, n, d1 int) {
	mat = mat[:2*d1]
	j := 0
	for ; j+1 < n; j += 2 { // columns j and j+1, both before the query
		r0, r1 := tok[j*d1:(j+1)*d1], tok[(j+1)*d1:(j+2)*d1]
		r1 = r1[:len(r0)]
		var a0, a1, b0, b1 float64
		for k, x := range r0 {
			y := r1[k]
			m0, m1 := mat[2*k], mat[2*k+1]
			a0 += x * m0
			a1 += x * m1
			b0 += y * m0
			b1 += y * m1
		}
		out[2*j], out[2*j+1], out[2*j+2], out[2*j+3] = a0, a1, b0, b1
	}
	for ; j <= n; j++ {
		row := tok[j*d1 : (j+1)*d1]
		if j == n {
			row = row[:d1-1] // the query's label entry is 0
		}
		var a0, a1 float64
		for k, x := range row {
			a0 += x * mat[2*k]
			a1 += x * mat[2*k+1]
		}
		out[2*j], out[2*j+1] = a0, a1
	}
}

// weightedSum2 is weightedSum for two heads: each entry of M summed over
// the columns j = 0, 1, … in order, as weightedSum does, in registers, two
// rows of M at a time so that four independent sums overlap.
func weightedSum2(mat, tok, a []float64, n, d1 int) {
	a = a[:2*(n+1)]
	k := 0
	for ; k+1 < d1-1; k += 2 { // rows k and k+1, both summed over j = 0..n
		var m0, m1, m2, m3 float64
		for j := 0; j <= n; j++ {
			x, y := tok[j*d1+k], tok[j*d1+k+1]
			a0, a1 := a[2*j], a[2*j+1]
			m0 += x * a0
			m1 += x * a1
			m2 += y * a0
			m3 += y * a1
		}
		mat[2*k], mat[2*k+1], mat[2*k+2], mat[2*k+3] = m0, m1, m2, m3
	}
	for ; k < d1; k++ {
		last := n
		if k == d1-1 { // the query's label entry is 0
			last = n - 1
		}
		var m0, m1 float64
		for j := 0; j <= last; j++ {
			x := tok[j*d1+k]
			m0 += x * a[2*j]
			m1 += x * a[2*j+1]
		}
		mat[2*k], mat[2*k+1] = m0, m1
	}
}

func (l *tokenLayer) forward(w *flow.Blocks, q *sequence, n int) float64 {
	d, d1, h := l.d, l.d+1, l.h
	l.queries(w, q.tok[n*d1:n*d1+d])
	rowTimes(l.s, q.tok, l.cT, n, d1, h)
	l.activate(n)
	weightedSum(l.oT, q.tok, l.s, n, d1, h)
	var yhat float64
	for i := 0; i < h; i++ {
		for k, v := range w.V[i*d1 : (i+1)*d1] {
			yhat += v * l.oT[k*h+i]
		}
	}
	return yhat
}

// queries sets c_i = W^KQ_i x̃_q for every head: W̃_i x_q (merged), or
// Σ_r k̃_{i,r} (q_{i,r}·x_q) (separate, with qx the inner products).
func (l *tokenLayer) queries(w *flow.Blocks, xq []float64) {
	m, d, d1, h := l.m, l.d, l.d+1, l.h
	clear(l.cT)
	for k := 0; k < m.hr(); k++ {
		if m.Kind == flow.Merged {
			wi := w.W[k*d1*d : (k+1)*d1*d]
			for b := 0; b < d1; b++ {
				var s float64
				for c, x := range xq {
					s += wi[b*d+c] * x
				}
				l.cT[b*h+k] = s
			}
			continue
		}
		var s float64
		for c, x := range xq {
			s += w.Q[k*d+c] * x
		}
		l.qx[k] = s
		i := k / m.R
		for b, kb := range w.K[k*d1 : (k+1)*d1] {
			l.cT[b*h+i] += kb * s
		}
	}
}

// activate turns the scores of the n+1 columns (in s) into attention
// weights: s/n (linear) or the softmax over the columns of each head.
func (l *tokenLayer) activate(n int) {
	h := l.h
	s := l.s[:(n+1)*h]
	if l.m.Attention == Linear {
		inv := 1 / float64(n)
		for j := range s {
			s[j] *= inv
		}
		return
	}
	const inv = 1 / rhoSoftmax
	for i := range l.mx {
		l.mx[i], l.sum[i] = math.Inf(-1), 0
	}
	for j := 0; j <= n; j++ {
		for i, x := range s[j*h : (j+1)*h] {
			if x*inv > l.mx[i] {
				l.mx[i] = x * inv
			}
		}
	}
	for j := 0; j <= n; j++ {
		sj := s[j*h : (j+1)*h]
		for i, x := range sj {
			sj[i] = math.Exp(x*inv - l.mx[i])
			l.sum[i] += sj[i]
		}
	}
	for i := range l.sum {
		l.sum[i] = 1 / l.sum[i]
	}
	for j := 0; j <= n; j++ {
		sj := s[j*h : (j+1)*h]
		for i := range sj {
			sj[i] *= l.sum[i]
		}
	}
}

// backward adds to g the gradient of a loss with ∂/∂ŷ = gy.
func (l *tokenLayer) backward(w, g *flow.Blocks, q *sequence, n int, gy float64) {
	d, d1, h := l.d, l.d+1, l.h
	for i := 0; i < h; i++ {
		gv := g.V[i*d1 : (i+1)*d1]
		for k, v := range w.V[i*d1 : (i+1)*d1] {
			l.vT[k*h+i] = v
			gv[k] += gy * l.oT[k*h+i]
		}
	}
	rowTimes(l.ds, q.tok, l.vT, n, d1, h) // ṽ_iᵀ x̃_j; ∂L/∂a_ij = gy times it
	l.scoreGrad(n, gy)
	weightedSum(l.dcT, q.tok, l.ds, n, d1, h) // ∂L/∂c_i = Σ_j ∂L/∂s_ij x̃_j
	l.queryGrad(w, g, q.tok[n*d1:n*d1+d])
}

// scoreGrad turns ṽ_iᵀx̃_j (in ds) into ∂L/∂s_ij: with ∂L/∂a = gy·ṽᵀx̃,
// linear a = s/n; softmax ∂s_j = a_j (∂a_j − Σ_k a_k ∂a_k)/ρ.
func (l *tokenLayer) scoreGrad(n int, gy float64) {
	h := l.h
	ds, a := l.ds[:(n+1)*h], l.s[:(n+1)*h]
	if l.m.Attention == Linear {
		c := gy / float64(n)
		for j := range ds {
			ds[j] *= c
		}
		return
	}
	clear(l.mean)
	for j, x := range ds {
		l.mean[j%h] += a[j] * x
	}
	c := gy / rhoSoftmax
	for j := 0; j <= n; j++ {
		dj, aj := ds[j*h:(j+1)*h], a[j*h:(j+1)*h]
		for i := range dj {
			dj[i] = c * aj[i] * (dj[i] - l.mean[i])
		}
	}
}

// queryGrad adds the gradient through c_i = W^KQ_i x̃_q, given ∂L/∂c_i in
// the columns of dcT.
func (l *tokenLayer) queryGrad(w, g *flow.Blocks, xq []float64) {
	m, d, d1, h := l.m, l.d, l.d+1, l.h
	for k := 0; k < m.hr(); k++ {
		if m.Kind == flow.Merged {
			gw := g.W[k*d1*d : (k+1)*d1*d]
			for b := 0; b < d1; b++ {
				dcb := l.dcT[b*h+k]
				for c, x := range xq {
					gw[b*d+c] += dcb * x
				}
			}
			continue
		}
		i := k / m.R
		kk, gk := w.K[k*d1:(k+1)*d1], g.K[k*d1:(k+1)*d1]
		var s float64
		for b := range gk {
			dcb := l.dcT[b*h+i]
			gk[b] += dcb * l.qx[k]
			s += dcb * kk[b]
		}
		gq := g.Q[k*d : (k+1)*d]
		for c, x := range xq {
			gq[c] += s * x
		}
	}
}
