package flow

import "github.com/linattn/linattn/flow/internal/gemm"

// tensorProducts computes the full layer's tensor T and its chain rule by
// matrix products (gemm) instead of loops over its entries. With the
// key–query pairs p = 1..P (merged: the heads, P = H; separate: P = H·R),
// A the P×(D+1) matrix of their heads' value rows ṽ_i and B the
// P×(D+1)D matrix of their key–query matrices (merged: W̃_i; separate:
// k̃_{i,r} q_{i,r}ᵀ), both row-major,
//
//	T = Aᵀ B   ((D+1) × (D+1)D),
//	∂A = B ∂Tᵀ,   ∂B = A ∂T,
//
// and the separate model's ∂k̃_{i,r} = ∂B_p q, ∂q_{i,r} = ∂B_pᵀ k̃. Each is
// O(P·D³), the cost of the evaluation's leading term, now in the kernels
// of package gemm. The layers whose tensor has only the row a = D (the
// reduced and label-key layers: O(P·D²)) keep addTensor's loops.
type tensorProducts struct {
	c      *Coefficients
	nb     int       // (D+1)·D, the columns of B and T
	a, b   []float64 // A and B, then the tangent's [dA; A] and [B; dB] (2P rows)
	dtT    []float64 // ∂Tᵀ, (D+1)D × (D+1)
	ga, gb []float64 // ∂A (P × (D+1)) and ∂B (P × (D+1)D)
}

func newTensorProducts(c *Coefficients) *tensorProducts {
	d1, p := c.d+1, c.hr()
	nb := d1 * c.d
	return &tensorProducts{c: c, nb: nb,
		a: make([]float64, 2*p*d1), b: make([]float64, 2*p*nb), dtT: make([]float64, nb*d1),
		ga: make([]float64, p*d1), gb: make([]float64, p*nb)}
}

// values writes A for the value blocks v into a (P × (D+1)).
func (tp *tensorProducts) values(a []float64, v *Blocks) []float64 {
	c, d1 := tp.c, tp.c.d+1
	if c.model.Kind == Merged {
		return v.V
	}
	for p := 0; p < c.hr(); p++ {
		i := c.head(p)
		copy(a[p*d1:(p+1)*d1], v.V[i*d1:(i+1)*d1])
	}
	return a[:c.hr()*d1]
}

// keyQueries writes B for the key blocks k and query blocks q into b
// (P × (D+1)D); merged, B is k's W̃.
func (tp *tensorProducts) keyQueries(b []float64, k, q *Blocks) []float64 {
	c, d, d1 := tp.c, tp.c.d, tp.c.d+1
	if c.model.Kind == Merged {
		return k.W
	}
	for p := 0; p < c.hr(); p++ {
		qp := q.Q[p*d : (p+1)*d]
		for r, kb := range k.K[p*d1 : (p+1)*d1] {
			row := b[(p*d1+r)*d : (p*d1+r+1)*d]
			for e, qe := range qp {
				row[e] = kb * qe
			}
		}
	}
	return b[:c.hr()*tp.nb]
}

// set writes T = Aᵀ B at the point w into t.
func (tp *tensorProducts) set(t []float64, w *Blocks) {
	p := tp.c.hr()
	a := tp.values(tp.a, w)
	b := tp.keyQueries(tp.b, w, w)
	gemm.MulTA(tp.c.d+1, tp.nb, p, a, b, t)
}

// setTangent writes the change of T along dw at w into t: dAᵀB + AᵀdB =
// [dA; A]ᵀ [B; dB], dB = dW̃ (merged) or dk̃ qᵀ + k̃ dqᵀ (separate).
func (tp *tensorProducts) setTangent(t []float64, w, dw *Blocks) {
	c, p, d1 := tp.c, tp.c.hr(), tp.c.d+1
	pa, pb := p*d1, p*tp.nb
	copy(tp.a[:pa], tp.values(tp.a[:pa], dw))
	copy(tp.a[pa:], tp.values(tp.a[pa:], w))
	copy(tp.b[:pb], tp.keyQueries(tp.b[:pb], w, w))
	if c.model.Kind == Merged {
		copy(tp.b[pb:], dw.W)
	} else {
		db := tp.keyQueries(tp.b[pb:], dw, w)
		tp.addKeyQueries(db, w, dw)
	}
	gemm.MulTA(d1, tp.nb, 2*p, tp.a, tp.b, t)
}

// addKeyQueries adds k̃_p qᵀ_p to each row block of b (separate).
func (tp *tensorProducts) addKeyQueries(b []float64, k, q *Blocks) {
	c, d, d1 := tp.c, tp.c.d, tp.c.d+1
	for p := 0; p < c.hr(); p++ {
		qp := q.Q[p*d : (p+1)*d]
		for r, kb := range k.K[p*d1 : (p+1)*d1] {
			row := b[(p*d1+r)*d : (p*d1+r+1)*d]
			for e, qe := range qp {
				row[e] += kb * qe
			}
		}
	}
}

// pullback adds to g the chain rule through T = Aᵀ B of the factors v
// (in A) and k, q (in B) of a function whose gradient with respect to T
// is dt; grads selects the factors whose gradients are formed, as
// Coefficients.pullback.
func (tp *tensorProducts) pullback(g *Blocks, dt []float64, v, k, q *Blocks, grads [3]bool) {
	c, p, d1 := tp.c, tp.c.hr(), tp.c.d+1
	if grads[0] {
		transpose(tp.dtT, dt, d1, tp.nb)
		b := tp.keyQueries(tp.b, k, q)
		gemm.Mul(p, d1, tp.nb, b, tp.dtT, tp.ga) // ∂A = B ∂Tᵀ
		for pp := 0; pp < p; pp++ {
			gv := g.V[c.head(pp)*d1 : (c.head(pp)+1)*d1]
			for a, x := range tp.ga[pp*d1 : (pp+1)*d1] {
				gv[a] += x
			}
		}
	}
	if !grads[1] && (c.model.Kind == Merged || !grads[2]) {
		return
	}
	a := tp.values(tp.a, v)
	gemm.Mul(p, tp.nb, d1, a, dt, tp.gb) // ∂B = A ∂T
	if c.model.Kind == Merged {
		for i, x := range tp.gb {
			g.W[i] += x
		}
		return
	}
	tp.pullbackKeyQueries(g, k, q, grads)
}

// pullbackKeyQueries adds ∂k̃_p = ∂B_p q_p and ∂q_p = ∂B_pᵀ k̃_p to g
// (separate), as grads selects.
func (tp *tensorProducts) pullbackKeyQueries(g, k, q *Blocks, grads [3]bool) {
	c, d, d1 := tp.c, tp.c.d, tp.c.d+1
	for p := 0; p < c.hr(); p++ {
		qp, kp := q.Q[p*d:(p+1)*d], k.K[p*d1:(p+1)*d1]
		gk, gq := g.K[p*d1:(p+1)*d1], g.Q[p*d:(p+1)*d]
		for r := 0; r < d1; r++ {
			row := tp.gb[(p*d1+r)*d : (p*d1+r+1)*d]
			if grads[1] {
				var s float64
				for e, x := range row {
					s += x * qp[e]
				}
				gk[r] += s
			}
			if grads[2] {
				for e, x := range row {
					gq[e] += kp[r] * x
				}
			}
		}
	}
}

// transpose writes the transpose of the row-major m×n matrix a into at.
func transpose(at, a []float64, m, n int) {
	for i := 0; i < m; i++ {
		for j, x := range a[i*n : (i+1)*n] {
			at[j*m+i] = x
		}
	}
}
