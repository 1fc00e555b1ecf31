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
// selects which factors' gradients are formed (values, W̃ or keys,
// queries); tensorProducts.
func (c *Coefficients) pullback(g *Blocks, dt []float64, v, k, q *Blocks, grads [3]bool) {
	c.prod.pullback(g, dt, v, k, q, grads)
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
// toBlocks, by runs of entries contiguous in both.
func (c *Coefficients) transfer(b *Blocks, flat []float64, toBlocks bool) {
	if toBlocks {
		b.Zero()
	}
	mv := func(bs, fs []float64) {
		if toBlocks {
			copy(bs, fs)
		} else {
			copy(fs, bs)
		}
	}
	d, h, d1 := c.d, c.model.H, c.d+1
	for i := 0; i < h; i++ {
		mv(b.V[i*d1+d:i*d1+d1], flat[i:i+1])
	}
	off := h
	hr := c.hr()
	for p := 0; p < hr; p++ {
		if c.model.Kind == Merged { // the rows r < D of W̃_p, d·d entries
			mv(b.W[p*d1*d:(p*d1+d)*d], flat[off+p*d*d:off+(p+1)*d*d])
			continue
		}
		mv(b.K[p*d1:p*d1+d], flat[off+p*d:off+(p+1)*d])
		mv(b.Q[p*d:(p+1)*d], flat[off+hr*d+p*d:off+hr*d+(p+1)*d])
	}
	off = c.model.flowLen(d)
	if c.model.Layer == FullLayer {
		for i := 0; i < h; i++ {
			mv(b.V[i*d1:i*d1+d], flat[off+i*d:off+(i+1)*d])
		}
		off += h * d
	}
	if !c.model.Layer.extra() {
		return
	}
	for p := 0; p < hr; p++ {
		if c.model.Kind == Merged {
			mv(b.W[(p*d1+d)*d:(p*d1+d1)*d], flat[off+p*d:off+(p+1)*d])
			continue
		}
		mv(b.K[p*d1+d:p*d1+d1], flat[off+p:off+p+1])
	}
}
