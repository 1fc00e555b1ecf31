package flow

import "fmt"

// Blocks are the weights θ of a layer expanded to the rows of the paper's
// matrices (docs/training.md, "The layer"), row-major:
//
//	V[i]     = ṽ_i ∈ R^{D+1}, the last row of W^V_i (token part v_x, then v_i);
//	W[i]     ∈ R^{(D+1)×D}, the first D columns of W^KQ_i (merged: U_i above u_yᵀ);
//	K[i·R+r] = k̃_{i,r} ∈ R^{D+1}, a row of W^K_i (separate: k, then k_y);
//	Q[i·R+r] = q_{i,r} ∈ R^D, the first D entries of a row of W^Q_i.
//
// The blocks the layer lacks (the reduced layer's v_x, u_y, k_y) are zero.
type Blocks struct {
	V, W, K, Q []float64
	buf        []float64
}

// Zero sets every block to zero.
func (b *Blocks) Zero() { clear(b.buf) }

// Add sets b += o.
func (b *Blocks) Add(o *Blocks) {
	for i, x := range o.buf {
		b.buf[i] += x
	}
}

// Coefficients are the coefficients c(θ) of linear attention as a linear
// model ŷ = cᵀz in the features z = u ⊗ x_q (docs/training.md, "The exact
// fast path"; docs/math.md, "The full layer"), and their derivatives. With
// the three-way tensor T_abc = Σ_i ṽ_ia W̃_ibc (merged) or
// Σ_{i,r} ṽ_ia k̃_{i,r,b} q_{i,r,c} (separate), a, b ∈ 0..D, c < D,
//
//	reduced: c_{b,c} = T_{D,b,c} = M_bc (u = β, c = vec M row-major);
//	full:    c_{(a,b),c} = T_abc + T_bac for a < b, T_aac for a = b (u = vech S).
//
// At sets the point θ; the other methods act at it. A Coefficients is not
// safe for concurrent use.
type Coefficients struct {
	model    Model
	d, n, nf int
	pairs    [][2]int
	pairOf   []int   // pairOf[a*(D+1)+b]: the pair {a, b} (−1: none); layers with extra blocks
	w, dw, g *Blocks // the point, a direction, a gradient
	t, dt, c []float64
	prod     *tensorProducts // T and its chain rule by matrix products
}

// NewCoefficients returns the coefficients of model m at dimension d.
func NewCoefficients(d int, m Model) *Coefficients {
	d1 := d + 1
	c := &Coefficients{model: m, d: d, n: m.flowLen(d) + m.extrasLen(d), pairs: m.Layer.Pairs(d)}
	c.nf = len(c.pairs) * d
	if m.Layer.extra() {
		c.pairOf = make([]int, d1*d1)
		for i := range c.pairOf {
			c.pairOf[i] = -1
		}
		for p, ab := range c.pairs {
			c.pairOf[ab[0]*d1+ab[1]], c.pairOf[ab[1]*d1+ab[0]] = p, p
		}
	}
	c.w, c.dw, c.g = c.NewBlocks(), c.NewBlocks(), c.NewBlocks()
	nt := d1 * d1 * d
	c.t, c.dt, c.c = make([]float64, nt), make([]float64, nt), make([]float64, c.nf)
	c.prod = newTensorProducts(c)
	return c
}

// Len returns the length of θ.
func (c *Coefficients) Len() int { return c.n }

// Features returns the number F of features: D² (reduced), D(D+1)
// (label-key) or D(D+1)(D+2)/2 (full).
func (c *Coefficients) Features() int { return c.nf }

// Pairs returns the entries (a, b) of S whose products with x_q are the
// features, in their order (index D is the label).
func (c *Coefficients) Pairs() [][2]int { return c.pairs }

// hr returns the number of key–query pairs: H·R (separate) or H (merged).
func (c *Coefficients) hr() int {
	if c.model.Kind == Merged {
		return c.model.H
	}
	return c.model.H * c.model.R
}

// head returns the head of key–query pair k.
func (c *Coefficients) head(k int) int {
	if c.model.Kind == Merged {
		return k
	}
	return k / c.model.R
}

// NewBlocks returns zero blocks of the model's shape.
func (c *Coefficients) NewBlocks() *Blocks {
	d1, h := c.d+1, c.model.H
	nv := h * d1
	var nw, nk, nq int
	if c.model.Kind == Merged {
		nw = h * d1 * c.d
	} else {
		nk, nq = h*c.model.R*d1, h*c.model.R*c.d
	}
	b := &Blocks{buf: make([]float64, nv+nw+nk+nq)}
	b.V = b.buf[:nv]
	b.W = b.buf[nv : nv+nw]
	b.K = b.buf[nv+nw : nv+nw+nk]
	b.Q = b.buf[nv+nw+nk:]
	return b
}

func (c *Coefficients) checkLen(name string, x []float64, n int) {
	if len(x) != n {
		panic(fmt.Sprintf("flow: Coefficients: len(%s) = %d, want %d", name, len(x), n))
	}
}

// At sets the point θ and computes c(θ).
func (c *Coefficients) At(theta []float64) {
	c.checkLen("theta", theta, c.n)
	c.Expand(c.w, theta)
	c.prod.set(c.t, c.w)
	c.coeffs(c.t, c.c)
}

// Values returns c(θ) at the point, a view valid until the next At.
func (c *Coefficients) Values() []float64 { return c.c }

// Pullback writes J_cᵀ·dc into dst (length Len()): the gradient with
// respect to θ of a function whose gradient with respect to c is dc.
func (c *Coefficients) Pullback(dst, dc []float64) {
	c.checkLen("dc", dc, c.nf)
	c.gradTensor(dc, c.dt)
	c.g.Zero()
	c.pullback(c.g, c.dt, c.w, c.w, c.w, [3]bool{true, true, true})
	c.Pack(dst, c.g)
}

// Apply writes J_c·dtheta into dc: the change of c(θ) along dtheta.
func (c *Coefficients) Apply(dc, dtheta []float64) {
	c.checkLen("dc", dc, c.nf)
	c.Expand(c.dw, dtheta)
	c.prod.setTangent(c.dt, c.w, c.dw)
	c.coeffs(c.dt, dc)
}

// Curvature writes into dst the change of J_cᵀ·dc along dtheta with dc
// held fixed: Σ_k dc_k ∇²c_k(θ)·dtheta, the second-order part of the
// Hessian of a function of c(θ). dtheta is taken apart in scratch that
// Apply also uses.
func (c *Coefficients) Curvature(dst, dtheta, dc []float64) {
	c.checkLen("dc", dc, c.nf)
	c.Expand(c.dw, dtheta)
	c.gradTensor(dc, c.dt)
	g := c.g
	g.Zero()
	// T is multilinear: the derivative of its pullback replaces one factor
	// by its direction and leaves out that factor's own gradient.
	c.pullback(g, c.dt, c.dw, c.w, c.w, [3]bool{false, true, true})
	c.pullback(g, c.dt, c.w, c.dw, c.w, [3]bool{true, false, true})
	if c.model.Kind == Separate {
		c.pullback(g, c.dt, c.w, c.w, c.dw, [3]bool{true, true, false})
	}
	c.Pack(dst, g)
}
