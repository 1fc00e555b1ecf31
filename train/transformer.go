package train

// transformerTokens evaluates the unrestricted deep linear transformer
// for one prediction from n context tokens (docs/training.md, "Depth"):
// L layers of the paper's full merged layer on a residual stream, every
// block of every layer's value and key–query matrices trained, no masks,
//
//	Z ← Z + Σ_h (1/n) W^V_h Z (Zᵀ W^KQ_h Z),   ŷ = Z_{D, n} after the last layer,
//
// with the tokens the columns of Z, (x_j, y_j) for the context and
// (x_q, 0) for the query, each a key, and W^V_h, W^KQ_h full
// (D+1)×(D+1) matrices. It stores the tokens row by row (Z holds z_iᵀ in
// row i). Linear attention's sum over the keys is formed once, C = Σ_j
// z_j z_jᵀ, so that token i's output is o_i = C K z_i/n (O = Z Kᵀ C/n) in
// O(n(D+1)²) work; the loss is back-propagated by hand.
type transformerTokens struct {
	d1, layers, heads int
	z                 [][]float64 // Z_ℓ for ℓ = 0..L, (n+1) × (D+1) row-major
	c, b, bbar, cbar  []float64   // C = ZᵀZ, B = KᵀC/n and their adjoints, (D+1)×(D+1)
	o, obar, tmp      []float64   // O = Z B, Ō, (n+1) × (D+1)
	zbar, next        []float64   // ∂L/∂Z_{ℓ+1} and ∂L/∂Z_ℓ
}

func newTransformerTokens(d, layers, heads, tokens int) *transformerTokens {
	d1 := d + 1
	sq, col := d1*d1, tokens*d1
	t := &transformerTokens{d1: d1, layers: layers, heads: heads, z: make([][]float64, layers+1),
		c: make([]float64, sq), b: make([]float64, sq), bbar: make([]float64, sq), cbar: make([]float64, sq),
		o: make([]float64, col), obar: make([]float64, col), tmp: make([]float64, col),
		zbar: make([]float64, col), next: make([]float64, col)}
	for l := range t.z {
		t.z[l] = make([]float64, col)
	}
	return t
}

// transformerWeights views a weight vector: layer ℓ, head h has W^V then
// W^KQ, each (D+1)×(D+1) row-major.
func transformerWeights(theta []float64, d1, heads, l, h int) (v, kq []float64) {
	off := ((l*heads + h) * 2) * d1 * d1
	return theta[off : off+d1*d1], theta[off+d1*d1 : off+2*d1*d1]
}

// prefix returns weight·(y − ŷ)² for the prediction of token n of q from
// the n tokens before it and, with grad not nil, adds its gradient.
func (t *transformerTokens) prefix(theta, grad []float64, q *sequence, n int, weight float64) float64 {
	d1, n1 := t.d1, n+1
	z0 := t.z[0][:n1*d1]
	copy(z0, q.tok[:n1*d1])
	z0[n*d1+d1-1] = 0 // the query's label slot
	inv := 1 / float64(n)
	for l := 0; l < t.layers; l++ {
		in, out := t.z[l][:n1*d1], t.z[l+1][:n1*d1]
		copy(out, in)
		mulAtB(t.c, in, in, n1, d1, d1) // C = ZᵀZ, shared by the heads
		for h := 0; h < t.heads; h++ {
			v, kq := transformerWeights(theta, d1, t.heads, l, h)
			t.head(in, kq, n1, inv)
			mulABt(t.tmp, t.o, v, n1, d1, d1) // out += O Vᵀ: row i, V o_i
			axpy(out, 1, t.tmp[:n1*d1])
		}
	}
	r := q.yt[n] - t.z[t.layers][n*d1+d1-1]
	if grad != nil {
		t.backward(theta, grad, n1, inv, -2*weight*r)
	}
	return weight * r * r
}

// head sets B = Kᵀ C/n and O = Z B for one head on the tokens z, with C
// set (row i of O is o_iᵀ = (C K z_i)ᵀ/n, C being symmetric).
func (t *transformerTokens) head(z, kq []float64, n1 int, inv float64) {
	d1 := t.d1
	mulAtB(t.b, kq, t.c, d1, d1, d1)
	for i := range t.b {
		t.b[i] *= inv
	}
	mulAB(t.o, z, t.b, n1, d1, d1)
}

// backward propagates ∂loss/∂ŷ = g through the layers in reverse: with
// G = ∂L/∂Z_{ℓ+1}, for each head ∂V = Gᵀ O and Ō = G V; through O = Z B,
// Z̄ += Ō Bᵀ and B̄ = Zᵀ Ō; through B = KᵀC/n, ∂K = C B̄ᵀ/n and
// C̄ += K B̄/n; and through C = ZᵀZ, Z̄ += Z (C̄ + C̄ᵀ).
func (t *transformerTokens) backward(theta, grad []float64, n1 int, inv, g float64) {
	d1 := t.d1
	zbar := t.zbar[:n1*d1]
	clear(zbar)
	zbar[(n1-1)*d1+d1-1] = g
	next := t.next[:n1*d1]
	for l := t.layers - 1; l >= 0; l-- {
		z := t.z[l][:n1*d1]
		copy(next, zbar) // the residual path
		mulAtB(t.c, z, z, n1, d1, d1)
		clear(t.cbar)
		for h := 0; h < t.heads; h++ {
			v, kq := transformerWeights(theta, d1, t.heads, l, h)
			gv, gkq := transformerWeights(grad, d1, t.heads, l, h)
			t.head(z, kq, n1, inv)
			mulAtBAdd(gv, zbar, t.o, n1, d1, d1) // ∂V += Gᵀ O
			mulAB(t.obar, zbar, v, n1, d1, d1)   // Ō = G V
			mulABt(t.tmp, t.obar, t.b, n1, d1, d1)
			axpy(next, 1, t.tmp[:n1*d1]) // Z̄ += Ō Bᵀ
			mulAtB(t.bbar, z, t.obar, n1, d1, d1)
			mulABt(t.tmp, t.c, t.bbar, d1, d1, d1) // ∂K += C B̄ᵀ/n
			axpy(gkq, inv, t.tmp[:d1*d1])
			mulAB(t.tmp, kq, t.bbar, d1, d1, d1) // C̄ += K B̄/n
			axpy(t.cbar, inv, t.tmp[:d1*d1])
		}
		for i := 0; i < d1; i++ { // C̄ + C̄ᵀ, in place
			for j := i; j < d1; j++ {
				s := t.cbar[i*d1+j] + t.cbar[j*d1+i]
				t.cbar[i*d1+j], t.cbar[j*d1+i] = s, s
			}
		}
		mulAB(t.tmp, z, t.cbar, n1, d1, d1)
		axpy(next, 1, t.tmp[:n1*d1])
		copy(zbar, next)
	}
}

// mulAB sets c = a·b for row-major a (m×k), b (k×n).
func mulAB(c, a, b []float64, m, k, n int) {
	for i := 0; i < m; i++ {
		ci := c[i*n : (i+1)*n]
		clear(ci)
		for p, x := range a[i*k : (i+1)*k] {
			axpy(ci, x, b[p*n:(p+1)*n])
		}
	}
}

// mulABt sets c = a·bᵀ for row-major a (m×k), b (n×k).
func mulABt(c, a, b []float64, m, n, k int) {
	for i := 0; i < m; i++ {
		ai := a[i*k : (i+1)*k]
		for j := 0; j < n; j++ {
			c[i*n+j] = inner(ai, b[j*k:(j+1)*k])
		}
	}
}

// mulAtB sets c = aᵀ·b for row-major a (k×m), b (k×n).
func mulAtB(c, a, b []float64, k, m, n int) {
	clear(c[:m*n])
	mulAtBAdd(c, a, b, k, m, n)
}

// mulAtBAdd adds aᵀ·b to c.
func mulAtBAdd(c, a, b []float64, k, m, n int) {
	for p := 0; p < k; p++ {
		bp := b[p*n : (p+1)*n]
		for i, x := range a[p*m : (p+1)*m] {
			axpy(c[i*n:(i+1)*n], x, bp)
		}
	}
}

// transformerObjective is the loss of the unrestricted transformer on
// stored sequences.
type transformerObjective struct {
	set    *rawSet
	m      *Model
	shape  sequenceShape
	nw     int
	tokens []*transformerTokens
	part   [][]float64 // per block: the gradient
	loss   []float64
}

func newTransformerObjective(set *rawSet, m *Model, shape sequenceShape) *transformerObjective {
	nb, nw := numBlocks(set.n), workers()
	o := &transformerObjective{set: set, m: m, shape: shape, nw: nw, tokens: make([]*transformerTokens, nw),
		part: make([][]float64, nb), loss: make([]float64, nb)}
	for w := range o.tokens {
		o.tokens[w] = newTransformerTokens(m.D, m.Depth(), m.H, shape.tokens)
	}
	for b := range o.part {
		o.part[b] = make([]float64, m.Len())
	}
	return o
}

func (o *transformerObjective) eval(theta, grad []float64, batch []int32) float64 {
	total, nb := sumPredictions(o.set, batch, o.shape, o.nw, o.loss, func(_, b int) {
		if grad != nil {
			clear(o.part[b])
		}
	}, func(k, b int, q *sequence, np int, wt float64) float64 {
		var g []float64
		if grad != nil {
			g = o.part[b]
		}
		return o.tokens[k].prefix(theta, g, q, np, wt)
	})
	if grad != nil {
		copy(grad, o.part[0])
		for b := 1; b < nb; b++ {
			axpy(grad, 1, o.part[b])
		}
	}
	return total
}
