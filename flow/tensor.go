package flow

// tensorRange returns the value indices a ∈ [a0, D] and key indices
// b ∈ [0, b1) of T that the layer's weights can make nonzero: for the
// reduced layer only T_{D,b,c}, b < D; for the label-key layer T_{D,b,c},
// b ≤ D.
func (c *Coefficients) tensorRange() (a0, b1 int) {
	switch c.model.Layer {
	case ReducedLayer:
		return c.d, c.d
	case LabelKeyLayer:
		return c.d, c.d + 1
	}
	return 0, c.d + 1
}

// addTensor adds to t (row-major (D+1)×(D+1)×D) the tensor of the factors
// v (values), k (W̃ merged, keys separate) and q (queries, separate):
// Σ_i ṽ_ia W̃_ibc or Σ_{i,r} ṽ_ia k̃_{i,r,b} q_{i,r,c}. With one factor a
// direction and the others the point, this is the product rule's term.
func (c *Coefficients) addTensor(t []float64, v, k, q *Blocks) {
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

// coeffs writes the coefficients (F, row-major pairs × D) of the tensor t.
func (c *Coefficients) coeffs(t, out []float64) {
	d, d1 := c.d, c.d+1
	if c.model.Layer == ReducedLayer {
		copy(out, t[(d*d1)*d:(d*d1+d)*d]) // M_bc = T_{D,b,c}
		return
	}
	for p, ab := range c.pairs {
		a, b := ab[0], ab[1]
		row := out[p*d : (p+1)*d]
		copy(row, t[(a*d1+b)*d:(a*d1+b+1)*d])
		if a != b {
			for e, x := range t[(b*d1+a)*d : (b*d1+a+1)*d] {
				row[e] += x
			}
		}
	}
}

// gradTensor writes ∂/∂T from ∂/∂c: each T_abc enters the coefficient of
// the pair {a, b} once.
func (c *Coefficients) gradTensor(dc, dt []float64) {
	d, d1 := c.d, c.d+1
	clear(dt)
	if c.model.Layer == ReducedLayer {
		copy(dt[(d*d1)*d:(d*d1+d)*d], dc)
		return
	}
	for a := 0; a < d1; a++ {
		for b := 0; b < d1; b++ {
			if p := c.pairOf[a*d1+b]; p >= 0 {
				copy(dt[(a*d1+b)*d:(a*d1+b+1)*d], dc[p*d:(p+1)*d])
			}
		}
	}
}

// pullback adds to g the chain rule through the tensor of the factors
// v, k, q of a function whose gradient with respect to T is dt: grads
// selects which factors' gradients are formed (values, W̃ or keys, queries).
func (c *Coefficients) pullback(g *Blocks, dt []float64, v, k, q *Blocks, grads [3]bool) {
	if c.prod != nil {
		c.prod.pullback(g, dt, v, k, q, grads)
		return
	}
	d1 := c.d + 1
	for p := 0; p < c.hr(); p++ {
		i := c.head(p)
		vi, gv := v.V[i*d1:(i+1)*d1], g.V[i*d1:(i+1)*d1]
		if c.model.Kind == Merged {
			c.pullbackMerged(gv, g.W[p*d1*c.d:(p+1)*d1*c.d], dt, vi, k.W[p*d1*c.d:(p+1)*d1*c.d], grads)
			continue
		}
		c.pullbackPair(p, gv, g, dt, vi, k, q, grads)
	}
}

// pullbackMerged is one merged head's chain rule: ∂ṽ_a = Σ_bc ∂T_abc W̃_bc,
// ∂W̃_bc = Σ_a ṽ_a ∂T_abc. For each a the entries (b, c) of ∂T and of W̃
// in range are one contiguous run.
func (c *Coefficients) pullbackMerged(gv, gw, dt, vi, wi []float64, grads [3]bool) {
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

// pullbackPair is the separate model's chain rule for the pair p = i·R + r:
// with E_ab = Σ_c ∂T_abc q_c and F_bc = Σ_a ṽ_a ∂T_abc,
// ∂ṽ_a = Σ_b E_ab k̃_b, ∂k̃_b = Σ_a ṽ_a E_ab, ∂q_c = Σ_b k̃_b F_bc.
func (c *Coefficients) pullbackPair(p int, gv []float64, g *Blocks, dt, vi []float64, k, q *Blocks, grads [3]bool) {
	d, d1 := c.d, c.d+1
	a0, b1 := c.tensorRange()
	kk, gk := k.K[p*d1:(p+1)*d1], g.K[p*d1:(p+1)*d1]
	qq, gq := q.Q[p*d:(p+1)*d], g.Q[p*d:(p+1)*d]
	fb := c.fb
	clear(fb)
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

// Expand writes θ into b (the blocks θ lacks are zero).
func (c *Coefficients) Expand(b *Blocks, theta []float64) {
	c.checkLen("theta", theta, c.n)
	c.transfer(b, theta, true)
}

// Pack writes the blocks of g that θ holds into dst (length Len()).
func (c *Coefficients) Pack(dst []float64, g *Blocks) {
	c.checkLen("dst", dst, c.n)
	c.transfer(g, dst, false)
}

// transfer copies between the flat layout of θ (System, "State layout",
// then the full layer's extra blocks) and the blocks, in the direction
// toBlocks.
func (c *Coefficients) transfer(b *Blocks, flat []float64, toBlocks bool) {
	if toBlocks {
		b.Zero()
	}
	d, h, d1 := c.d, c.model.H, c.d+1
	mv := func(bp, fp *float64) {
		if toBlocks {
			*bp = *fp
		} else {
			*fp = *bp
		}
	}
	for i := 0; i < h; i++ {
		mv(&b.V[i*d1+d], &flat[i])
	}
	off := h
	hr := c.hr()
	for p := 0; p < hr; p++ {
		for r := 0; r < d; r++ {
			if c.model.Kind == Merged {
				for e := 0; e < d; e++ {
					mv(&b.W[(p*d1+r)*d+e], &flat[off+(p*d+r)*d+e])
				}
				continue
			}
			mv(&b.K[p*d1+r], &flat[off+p*d+r])
			mv(&b.Q[p*d+r], &flat[off+hr*d+p*d+r])
		}
	}
	off = c.model.flowLen(d)
	if c.model.Layer == FullLayer {
		for i := 0; i < h; i++ {
			for a := 0; a < d; a++ {
				mv(&b.V[i*d1+a], &flat[off+i*d+a])
			}
		}
		off += h * d
	}
	if !c.model.Layer.extra() {
		return
	}
	for p := 0; p < hr; p++ {
		if c.model.Kind == Merged {
			for e := 0; e < d; e++ {
				mv(&b.W[(p*d1+d)*d+e], &flat[off+p*d+e])
			}
			continue
		}
		mv(&b.K[p*d1+d], &flat[off+p])
	}
}
