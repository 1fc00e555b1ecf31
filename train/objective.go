package train

import "github.com/linattn/linattn/flow"

// objective is the loss on a set of sequences as a function of the
// weights θ: eval returns it and, with grad not nil, writes its gradient
// into grad. batch lists the sequences of a minibatch (nil: all); the loss
// is the mean over the sequences it covers.
type objective interface {
	eval(theta, grad []float64, batch []int32) float64
}

// coeffObjective is the loss of linear attention as a function of the
// coefficients c of its features (flow.Coefficients): evalC returns it
// and, with dc not nil, writes ∂L/∂c.
type coeffObjective interface {
	evalC(c, dc []float64, batch []int32) float64
}

// linearObjective is a coeffObjective seen as a function of the weights,
// through c(θ) and its chain rule (flow.Coefficients).
type linearObjective struct {
	coef  *flow.Coefficients
	inner coeffObjective
	dc    []float64
}

func newLinearObjective(coef *flow.Coefficients, inner coeffObjective) *linearObjective {
	return &linearObjective{coef: coef, inner: inner, dc: make([]float64, coef.Features())}
}

func (o *linearObjective) eval(theta, grad []float64, batch []int32) float64 {
	o.coef.At(theta)
	if grad == nil {
		return o.inner.evalC(o.coef.Values(), nil, batch)
	}
	loss := o.inner.evalC(o.coef.Values(), o.dc, batch)
	o.coef.Pullback(grad, o.dc)
	return loss
}

// selection is the sequences an evaluation covers: all n, or a batch.
type selection struct {
	n     int
	batch []int32
}

func (s selection) len() int {
	if s.batch != nil {
		return len(s.batch)
	}
	return s.n
}

func (s selection) at(k int) int {
	if s.batch != nil {
		return int(s.batch[k])
	}
	return k
}

// gramObjective is linear attention evaluated sequence by sequence from
// the stored features of each prediction (gramSet): ŷ = uᵀ C x_q, and
// ∂L/∂C = Σ −2w(y − ŷ) u x_qᵀ, each block of sequences summed in order.
type gramObjective struct {
	set  *gramSet
	nw   int
	part [][]float64 // per block: ∂L/∂c
	loss []float64   // per block
}

func newGramObjective(set *gramSet) *gramObjective {
	nb, nw := numBlocks(set.n), workers()
	o := &gramObjective{set: set, nw: nw, part: make([][]float64, nb), loss: make([]float64, nb)}
	for b := range o.part {
		o.part[b] = make([]float64, set.du*set.d)
	}
	return o
}

func (o *gramObjective) evalC(c, dc []float64, batch []int32) float64 {
	sel := selection{n: o.set.n, batch: batch}
	n := sel.len()
	wt := 1 / float64(n)
	nb := numBlocks(n)
	forBlocks(nb, o.nw, func(_, b int) {
		lo, hi := blockRange(b, n)
		o.loss[b] = o.block(c, o.part[b], dc != nil, sel, lo, hi, wt)
	})
	return reduceBlocks(o.loss[:nb], o.part[:nb], dc)
}

// block evaluates sequences lo..hi−1 of sel; with grad it writes their
// ∂L/∂c into part.
func (o *gramObjective) block(c, part []float64, grad bool, sel selection, lo, hi int, wt float64) float64 {
	s := o.set
	du, d := s.du, s.d
	if grad {
		clear(part)
	}
	var loss float64
	if sel.batch == nil { // contiguous: four sequences at a time
		for ; lo+4 <= hi; lo += 4 {
			loss += predict4(c, part, grad, s.u[lo*du:(lo+4)*du], s.xq[lo*d:(lo+4)*d], s.yq[lo:lo+4], wt)
		}
	}
	for k := lo; k < hi; k++ {
		mu := sel.at(k)
		loss += predict(c, part, grad, s.u[mu*du:(mu+1)*du], s.xq[mu*d:(mu+1)*d], s.yq[mu], wt)
	}
	return loss
}

// predict returns wt·(y − ŷ)² for ŷ = uᵀ C x_q and, with grad, adds its
// gradient −2wt(y − ŷ) u x_qᵀ to part.
func predict(c, part []float64, grad bool, u, xq []float64, y, wt float64) float64 {
	d := len(xq)
	var yhat float64
	for p, up := range u {
		row := c[p*d : (p+1)*d]
		row = row[:len(xq)] // one bounds check for the loop
		var r float64
		for j, x := range xq {
			r += row[j] * x
		}
		yhat += up * r
	}
	res := y - yhat
	if grad {
		g := -2 * wt * res
		for p, up := range u {
			gu := g * up
			row := part[p*d : (p+1)*d]
			row = row[:len(xq)]
			for j, x := range xq {
				row[j] += gu * x
			}
		}
	}
	return wt * res * res
}

// predict4 is predict for four sequences whose features, queries and
// labels are consecutive in u, xq and y: each coefficient is loaded, and
// each gradient entry stored, once for the four.
func predict4(c, part []float64, grad bool, u, xq, y []float64, wt float64) float64 {
	d := len(xq) / 4
	du := len(u) / 4
	u0, u1, u2, u3 := u[:du], u[du:2*du], u[2*du:3*du], u[3*du:4*du]
	x0, x1, x2, x3 := xq[:d], xq[d:2*d], xq[2*d:3*d], xq[3*d:4*d]
	var h0, h1, h2, h3 float64
	for p := range u0 {
		row := c[p*d : (p+1)*d]
		row = row[:len(x0)]
		var r0, r1, r2, r3 float64
		for j, cj := range row {
			r0 += cj * x0[j]
			r1 += cj * x1[j]
			r2 += cj * x2[j]
			r3 += cj * x3[j]
		}
		h0 += u0[p] * r0
		h1 += u1[p] * r1
		h2 += u2[p] * r2
		h3 += u3[p] * r3
	}
	e0, e1, e2, e3 := y[0]-h0, y[1]-h1, y[2]-h2, y[3]-h3
	if grad {
		g := -2 * wt
		for p := range u0 {
			a0, a1, a2, a3 := g*e0*u0[p], g*e1*u1[p], g*e2*u2[p], g*e3*u3[p]
			row := part[p*d : (p+1)*d]
			row = row[:len(x0)]
			for j := range row {
				row[j] += a0*x0[j] + a1*x1[j] + a2*x2[j] + a3*x3[j]
			}
		}
	}
	return wt * (e0*e0 + e1*e1 + e2*e2 + e3*e3)
}

// reduceBlocks adds the per-block losses and, with dst not nil, the
// per-block gradients into dst, in block order.
func reduceBlocks(loss []float64, parts [][]float64, dst []float64) float64 {
	var total float64
	for _, l := range loss {
		total += l
	}
	if dst != nil {
		clear(dst)
		for _, p := range parts {
			for i, x := range p {
				dst[i] += x
			}
		}
	}
	return total
}

// prefixObjective is linear attention evaluated sequence by sequence from
// the stored tokens, computing the features of every prefix on the fly:
// the direct path of the next-token loss.
type prefixObjective struct {
	set    *rawSet
	fm     *featureMap
	shape  sequenceShape
	nw     int
	part   [][]float64
	loss   []float64
	acc, u [][]float64 // per worker
}

func newPrefixObjective(set *rawSet, fm *featureMap, shape sequenceShape) *prefixObjective {
	nb, nw := numBlocks(set.n), workers()
	o := &prefixObjective{set: set, fm: fm, shape: shape, nw: nw, part: make([][]float64, nb), loss: make([]float64, nb)}
	for b := range o.part {
		o.part[b] = make([]float64, fm.size())
	}
	o.acc, o.u = make([][]float64, nw), make([][]float64, nw)
	for w := 0; w < nw; w++ {
		o.acc[w], o.u[w] = make([]float64, fm.du), make([]float64, fm.du)
	}
	return o
}

func (o *prefixObjective) evalC(c, dc []float64, batch []int32) float64 {
	sel := selection{n: o.set.n, batch: batch}
	n := sel.len()
	first, last := o.shape.first, o.shape.last
	wt := o.shape.weight / float64(n)
	nb := numBlocks(n)
	forBlocks(nb, o.nw, func(w, b int) {
		lo, hi := blockRange(b, n)
		part, grad := o.part[b], dc != nil
		if grad {
			clear(part)
		}
		var loss float64
		var q sequence
		for k := lo; k < hi; k++ {
			o.set.at(&q, sel.at(k))
			o.fm.prefixes(&q, first, last, o.acc[w], o.u[w], func(u, xq []float64, y float64) {
				loss += predict(c, part, grad, u, xq, y, wt)
			})
		}
		o.loss[b] = loss
	})
	return reduceBlocks(o.loss[:nb], o.part[:nb], dc)
}

// tokenObjective is the layer evaluated column by column (tokenLayer) on
// stored sequences: linear or softmax attention, any blocks.
type tokenObjective struct {
	set    *rawSet
	m      *Model
	coef   *flow.Coefficients // for the blocks of θ
	shape  sequenceShape
	nw     int
	layers []*tokenLayer
	w      *flow.Blocks
	part   []*flow.Blocks
	loss   []float64
}

func newTokenObjective(set *rawSet, m *Model, coef *flow.Coefficients, shape sequenceShape) *tokenObjective {
	nb, nw := numBlocks(set.n), workers()
	o := &tokenObjective{set: set, m: m, coef: coef, shape: shape, nw: nw, layers: make([]*tokenLayer, nw),
		w: coef.NewBlocks(), part: make([]*flow.Blocks, nb), loss: make([]float64, nb)}
	for w := range o.layers {
		o.layers[w] = newTokenLayer(m, shape.tokens)
	}
	for b := range o.part {
		o.part[b] = coef.NewBlocks()
	}
	return o
}

func (o *tokenObjective) eval(theta, grad []float64, batch []int32) float64 {
	o.coef.Expand(o.w, theta)
	total, nb := sumPredictions(o.set, batch, o.shape, o.nw, o.loss, func(_, b int) {
		if grad != nil {
			o.part[b].Zero()
		}
	}, func(k, b int, q *sequence, np int, wt float64) float64 {
		var gb *flow.Blocks
		if grad != nil {
			gb = o.part[b]
		}
		return o.layers[k].prefix(o.w, gb, q, np, wt)
	})
	if grad != nil {
		g := o.part[0]
		for b := 1; b < nb; b++ {
			g.Add(o.part[b])
		}
		o.coef.Pack(grad, g)
	}
	return total
}
