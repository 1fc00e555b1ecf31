package flow

import (
	"github.com/linattn/linattn/flow/internal/gemm"
	"github.com/linattn/linattn/internal/share"
)

// tensorProducts computes the layer's tensor T and its chain rule by
// matrix products (gemm). With the key–query pairs p = 1..P (merged: the
// heads, P = H; separate: P = H·R), the rows a ∈ [a0, D] of T the layer
// uses and its keys b < b1 (tensorRange: all of them in the full layer,
// the label row a = D alone in the reduced and label-key layers), A the
// P×(D+1−a0) matrix of the pairs' heads' value entries ṽ_ia and B the
// P×b1·D matrix of their key–query matrices (merged: the rows b < b1 of
// W̃_i; separate: k̃_{i,r,b} q_{i,r}ᵀ), both row-major,
//
//	T = Aᵀ B,   ∂A = B ∂Tᵀ,   ∂B = A ∂T,
//
// and the separate model's ∂k̃_{i,r,b} = (∂B_p q)_b, ∂q_{i,r} = ∂B_pᵀ k̃.
// The products are O(P·D³) in the full layer, the cost of its evaluation's
// leading term, and O(P·D²) in the others. The rows a ≥ a0 and columns
// b < b1 of T are one contiguous block of its row-major storage (all of
// T, or a part of its last row), which the products write and read in
// place; set and setTangent zero the entries outside it.
type tensorProducts struct {
	c       *Coefficients
	a0, off int       // the first row of T, and its offset a0·(D+1)·D
	ra, nb  int       // the rows D+1−a0 and columns b1·D of the block
	a, b    []float64 // A and B, then the tangent's [dA; A] and [B; dB] (2P rows)
	dtT     []float64 // the block of ∂T transposed, nb × ra
	ga, gb  []float64 // ∂A (P × ra) and ∂B (P × nb)
	workers int       // goroutines that share each product (share)
}

func newTensorProducts(c *Coefficients) *tensorProducts {
	d1, p := c.d+1, c.hr()
	a0, b1 := c.tensorRange()
	ra, nb := d1-a0, b1*c.d
	tp := &tensorProducts{c: c, a0: a0, off: a0 * d1 * c.d, ra: ra, nb: nb,
		a: make([]float64, 2*p*ra), b: make([]float64, 2*p*nb), dtT: make([]float64, nb*ra),
		ga: make([]float64, p*ra), gb: make([]float64, p*nb)}
	tp.share(0)
	return tp
}

// share sets the processors the products may share their work among
// (0: all; System.setWorkers): all of them where they gain
// (gemm.Workers), else one.
func (tp *tensorProducts) share(procs int) {
	tp.workers = gemm.Workers(tp.c.hr(), tp.nb, tp.ra, procs)
}

// values writes A for the value blocks v into a (P × ra); merged in the
// full layer, A is v's V.
func (tp *tensorProducts) values(a []float64, v *Blocks) []float64 {
	c, d1 := tp.c, tp.c.d+1
	if c.model.Kind == Merged && tp.a0 == 0 {
		return v.V
	}
	for p := 0; p < c.hr(); p++ {
		i := c.head(p)
		copy(a[p*tp.ra:(p+1)*tp.ra], v.V[i*d1+tp.a0:(i+1)*d1])
	}
	return a[:c.hr()*tp.ra]
}

// keyQueries writes B for the key blocks k and query blocks q into b
// (P × nb); merged with every key row, B is k's W̃.
func (tp *tensorProducts) keyQueries(b []float64, k, q *Blocks) []float64 {
	c, d, d1 := tp.c, tp.c.d, tp.c.d+1
	if c.model.Kind == Merged {
		if tp.nb == d1*d {
			return k.W
		}
		for p := 0; p < c.hr(); p++ {
			copy(b[p*tp.nb:(p+1)*tp.nb], k.W[p*d1*d:])
		}
		return b[:c.hr()*tp.nb]
	}
	clear(b[:c.hr()*tp.nb])
	tp.addKeyQueries(b, k, q)
	return b[:c.hr()*tp.nb]
}

// addKeyQueries adds the rows b < b1 of k̃_p q_pᵀ to each row of b
// (separate).
func (tp *tensorProducts) addKeyQueries(b []float64, k, q *Blocks) {
	c, d, d1 := tp.c, tp.c.d, tp.c.d+1
	for p := 0; p < c.hr(); p++ {
		qp := q.Q[p*d : (p+1)*d]
		for r, kb := range k.K[p*d1 : p*d1+tp.nb/d] {
			row := b[p*tp.nb+r*d : p*tp.nb+(r+1)*d]
			for e, qe := range qp {
				row[e] += kb * qe
			}
		}
	}
}

// block returns the block of t that the products write and read.
func (tp *tensorProducts) block(t []float64) []float64 {
	return t[tp.off : tp.off+tp.ra*tp.nb]
}

// outside zeroes the entries of t outside its block and returns the block.
func (tp *tensorProducts) outside(t []float64) []float64 {
	end := tp.off + tp.ra*tp.nb
	clear(t[:tp.off])
	clear(t[end:])
	return t[tp.off:end]
}

// set writes T = Aᵀ B at the point w into t.
func (tp *tensorProducts) set(t []float64, w *Blocks) {
	a := tp.values(tp.a, w)
	b := tp.keyQueries(tp.b, w, w)
	gemm.MulTAShared(tp.workers, tp.ra, tp.nb, tp.c.hr(), a, b, tp.outside(t))
}

// setTangent writes the change of T along dw at w into t:
// dAᵀB + AᵀdB = [dA; A]ᵀ [B; dB], dB = dW̃ (merged) or
// dk̃ qᵀ + k̃ dqᵀ (separate).
func (tp *tensorProducts) setTangent(t []float64, w, dw *Blocks) {
	p := tp.c.hr()
	pa, pb := p*tp.ra, p*tp.nb
	copy(tp.a[:pa], tp.values(tp.a[:pa], dw))
	copy(tp.a[pa:], tp.values(tp.a[pa:], w))
	copy(tp.b[:pb], tp.keyQueries(tp.b[:pb], w, w))
	if tp.c.model.Kind == Merged {
		copy(tp.b[pb:], tp.keyQueries(tp.b[pb:], dw, dw))
	} else {
		db := tp.keyQueries(tp.b[pb:], dw, w)
		tp.addKeyQueries(db, w, dw)
	}
	gemm.MulTAShared(tp.workers, tp.ra, tp.nb, 2*p, tp.a, tp.b, tp.outside(t))
}

// pullback adds to g the chain rule through T = Aᵀ B of the factors v
// (in A) and k, q (in B) of a function whose gradient with respect to T
// is dt; grads selects the factors whose gradients are formed, as
// Coefficients.pullback.
func (tp *tensorProducts) pullback(g *Blocks, dt []float64, v, k, q *Blocks, grads [3]bool) {
	c, p, d1 := tp.c, tp.c.hr(), tp.c.d+1
	dtb := tp.block(dt)
	if grads[0] {
		tp.transpose(tp.dtT, dtb)
		b := tp.keyQueries(tp.b, k, q)
		gemm.MulShared(tp.workers, p, tp.ra, tp.nb, b, tp.dtT, tp.ga) // ∂A = B ∂Tᵀ
		for pp := 0; pp < p; pp++ {
			gv := g.V[c.head(pp)*d1+tp.a0 : (c.head(pp)+1)*d1]
			for a, x := range tp.ga[pp*tp.ra : (pp+1)*tp.ra] {
				gv[a] += x
			}
		}
	}
	if !grads[1] && (c.model.Kind == Merged || !grads[2]) {
		return
	}
	a := tp.values(tp.a, v)
	gemm.MulShared(tp.workers, p, tp.nb, tp.ra, a, dtb, tp.gb) // ∂B = A ∂T
	if c.model.Kind == Merged {
		for pp := 0; pp < p; pp++ {
			gw := g.W[pp*d1*c.d : pp*d1*c.d+tp.nb]
			for i, x := range tp.gb[pp*tp.nb : (pp+1)*tp.nb] {
				gw[i] += x
			}
		}
		return
	}
	tp.pullbackKeyQueries(g, k, q, grads)
}

// pullbackKeyQueries adds ∂k̃_{p,b} = (∂B_p q_p)_b and ∂q_p = ∂B_pᵀ k̃_p
// to g (separate), as grads selects.
func (tp *tensorProducts) pullbackKeyQueries(g, k, q *Blocks, grads [3]bool) {
	c, d, d1 := tp.c, tp.c.d, tp.c.d+1
	for p := 0; p < c.hr(); p++ {
		qp, kp := q.Q[p*d:(p+1)*d], k.K[p*d1:(p+1)*d1]
		gk, gq := g.K[p*d1:(p+1)*d1], g.Q[p*d:(p+1)*d]
		for r := 0; r < tp.nb/d; r++ {
			row := tp.gb[p*tp.nb+r*d : p*tp.nb+(r+1)*d]
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

// transpose writes the transpose of the ra×nb block a into at, its rows
// shared by tp.workers goroutines.
func (tp *tensorProducts) transpose(at, a []float64) {
	w := tp.workers
	if w == 1 {
		transpose(at, a, tp.ra, tp.nb, 0, tp.ra)
		return
	}
	share.Ranges(tp.ra, w, transposeRows, func(_, lo, hi int) {
		transpose(at, a, tp.ra, tp.nb, lo, hi)
	})
}

// transpose writes the rows i0 … i1−1 of the row-major m×n matrix a into
// the columns of its transpose at, transposeRows rows of a at a time, so
// that each pass writes runs of at's rows rather than one entry per row
// of at (at D = 64, 65 × 4160: a 2 MB matrix, out of the cache).
func transpose(at, a []float64, m, n, i0, i1 int) {
	for r0 := i0; r0 < i1; r0 += transposeRows {
		r1 := min(r0+transposeRows, i1)
		for j := 0; j < n; j++ {
			row := at[j*m+r0 : j*m+r1]
			for i := range row {
				row[i] = a[(r0+i)*n+j]
			}
		}
	}
}

const transposeRows = 8
