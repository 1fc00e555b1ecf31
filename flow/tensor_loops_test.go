package flow

// The tensor T of the layer's factors and its chain rule by loops over
// T's entries, the definitions (Coefficients) that tensorProducts' matrix
// products are tested against.

// loopPullback adds to g the chain rule through the tensor by loops.
func (c *Coefficients) loopPullback(g *Blocks, dt []float64, v, k, q *Blocks, grads [3]bool) {
	d1 := c.d + 1
	for p := 0; p < c.hr(); p++ {
		i := c.head(p)
		vi, gv := v.V[i*d1:(i+1)*d1], g.V[i*d1:(i+1)*d1]
		if c.model.Kind == Merged {
			c.loopPullbackMerged(gv, g.W[p*d1*c.d:(p+1)*d1*c.d], dt, vi, k.W[p*d1*c.d:(p+1)*d1*c.d], grads)
			continue
		}
		c.loopPullbackPair(p, gv, g, dt, vi, k, q, grads)
	}
}

// loopTensor adds to t (row-major (D+1)×(D+1)×D) the tensor of the factors
// v (values), k (W̃ merged, keys separate) and q (queries, separate):
// Σ_i ṽ_ia W̃_ibc or Σ_{i,r} ṽ_ia k̃_{i,r,b} q_{i,r,c}. With one factor a
// direction and the others the point, this is the product rule's term.
func (c *Coefficients) loopTensor(t []float64, v, k, q *Blocks) {
	d, d1 := c.d, c.d+1
	a0, b1 := c.tensorRange()
	merged := c.model.Kind == Merged
	for p := 0; p < c.hr(); p++ {
		vi := v.V[c.head(p)*d1 : (c.head(p)+1)*d1]
		for a := a0; a < d1; a++ {
			if vi[a] == 0 {
				continue
			}
			for b := 0; b < b1; b++ {
				row := t[(a*d1+b)*d : (a*d1+b+1)*d]
				if merged {
					wb := k.W[(p*d1+b)*d : (p*d1+b+1)*d]
					for e := range row {
						row[e] += vi[a] * wb[e]
					}
					continue
				}
				vk := vi[a] * k.K[p*d1+b]
				for e, qe := range q.Q[p*d : (p+1)*d] {
					row[e] += vk * qe
				}
			}
		}
	}
}

// loopPullbackMerged is one merged head's chain rule: ∂ṽ_a = Σ_bc ∂T_abc W̃_bc,
// ∂W̃_bc = Σ_a ṽ_a ∂T_abc. For each a the entries (b, c) of ∂T and of W̃
// in range are one contiguous run.
func (c *Coefficients) loopPullbackMerged(gv, gw, dt, vi, wi []float64, grads [3]bool) {
	d, d1 := c.d, c.d+1
	a0, b1 := c.tensorRange()
	n := b1 * d
	wi, gw = wi[:n], gw[:n]
	for a := a0; a < d1; a++ {
		dta := dt[a*d1*d : a*d1*d+n]
		if grads[0] {
			var s float64
			for e, x := range dta {
				s += x * wi[e]
			}
			gv[a] += s
		}
		if grads[1] {
			va := vi[a]
			for e, x := range dta {
				gw[e] += va * x
			}
		}
	}
}

// loopPullbackPair is the separate model's chain rule for the pair p = i·R + r:
// with E_ab = Σ_c ∂T_abc q_c and F_bc = Σ_a ṽ_a ∂T_abc,
// ∂ṽ_a = Σ_b E_ab k̃_b, ∂k̃_b = Σ_a ṽ_a E_ab, ∂q_c = Σ_b k̃_b F_bc.
func (c *Coefficients) loopPullbackPair(p int, gv []float64, g *Blocks, dt, vi []float64, k, q *Blocks, grads [3]bool) {
	d, d1 := c.d, c.d+1
	a0, b1 := c.tensorRange()
	kk, gk := k.K[p*d1:(p+1)*d1], g.K[p*d1:(p+1)*d1]
	qq, gq := q.Q[p*d:(p+1)*d], g.Q[p*d:(p+1)*d]
	fb := make([]float64, d1*d)
	for a := a0; a < d1; a++ {
		for b := 0; b < b1; b++ {
			dtab := dt[(a*d1+b)*d : (a*d1+b+1)*d]
			var s float64
			for e, x := range dtab {
				s += x * qq[e]
				fb[b*d+e] += vi[a] * x
			}
			if grads[1] {
				gk[b] += vi[a] * s
			}
			if grads[0] {
				gv[a] += s * kk[b]
			}
		}
	}
	if !grads[2] {
		return
	}
	for b := 0; b < b1; b++ {
		for e := 0; e < d; e++ {
			gq[e] += kk[b] * fb[b*d+e]
		}
	}
}
