package traces

import "github.com/linattn/linattn/flow/internal/gemm"

// tangent holds the derivatives along a direction of everything an Eval
// computes: the letters, nodes, traces and ω, and the adjoints.
type tangent struct {
	mats, nodes [][]float64
	tr, omega   []float64
	suffix      []float64 // omegaDot's
	bar         adjoints
}

// GradientDir writes into dst[b] the derivative of the gradient ∂p/∂X_b
// along the direction dir (dir[b] for the bases that vary; the others
// are ignored): the Hessian of p applied to dir, at the matrices of the
// last Value, after Gradient there.
func (e *Eval) GradientDir(dst, dir [][]float64) {
	p, d, dd := e.p, e.d, e.d*e.d
	if e.dot == nil {
		e.dot = &tangent{mats: matrices(2*p.bases, dd), nodes: matrices(len(p.nodes), dd),
			tr: make([]float64, len(p.words)), omega: make([]float64, len(p.words)), bar: newAdjoints(p, d),
			suffix: make([]float64, p.maxTermLen()+1)}
	}
	t := e.dot
	for b, v := range p.varies {
		if v {
			copy(t.mats[2*b], dir[b])
			transpose(t.mats[2*b+1], dir[b], d)
		}
	}
	e.forwardDot()
	e.omegaDot()
	e.reverseDot()
	for b, v := range p.varies {
		if v {
			copy(dst[b], t.bar.baseBar[b])
		}
	}
}

// varying reports whether the letter id's base varies (has a tangent).
func (e *Eval) varying(id int) bool { return e.p.varies[id/2] }

// chainDot returns the tangent of a chain, nil for a constant letter.
func (e *Eval) chainDot(l int) []float64 {
	if l >= 0 {
		return e.dot.nodes[l]
	}
	if !e.varying(-2 - l) {
		return nil
	}
	return e.dot.mats[-2-l]
}

// forwardDot sets the tangents of the nodes, Ṅ = Ṗ X_c + P Ẋ_c, and of
// the traces, ⟨Ṗ, S⟩ + ⟨P, Ṡ⟩.
func (e *Eval) forwardDot() {
	p, t, d := e.p, e.dot, e.d
	for i, n := range p.nodes {
		dst := t.nodes[i]
		clear(dst)
		if ld := e.chainDot(n.left); ld != nil {
			gemm.Mul(d, d, d, ld, e.mats[n.letter], e.tmp)
			addScaled(dst, 1, e.tmp)
		}
		if e.varying(n.letter) {
			gemm.Mul(d, d, d, e.chain(n.left), t.mats[n.letter], e.tmp)
			addScaled(dst, 1, e.tmp)
		}
	}
	for i, w := range p.words {
		var s float64
		if w.right == bare(-1) {
			if ld := e.chainDot(w.left); ld != nil {
				s = diagSum(ld, d)
			}
		} else {
			if ld := e.chainDot(w.left); ld != nil {
				s += dotProduct(ld, e.chain(w.right))
			}
			if rd := e.chainDot(w.right); rd != nil {
				s += dotProduct(e.chain(w.left), rd)
			}
		}
		t.tr[i] = s
	}
}

// omegaDot sets the tangents of ω: for each term and word j,
// ω̇_j += c·d/dε Π_{k≠j} (tr_k + ε ṫr_k), the products of the traces
// before and after the word taken as dual numbers.
func (e *Eval) omegaDot() {
	t := e.dot
	clear(t.omega)
	ts := &e.p.terms
	for i := range ts.coef {
		ws := ts.words(i)
		if len(ws) == 1 {
			continue
		}
		c := ts.coef[i] * e.weights[ts.group[i]]
		after, afterDot := e.suffix[:len(ws)+1], t.suffix[:len(ws)+1]
		after[len(ws)], afterDot[len(ws)] = 1, 0
		for j := len(ws) - 1; j >= 0; j-- {
			w := ws[j]
			after[j], afterDot[j] = after[j+1]*e.tr[w], afterDot[j+1]*e.tr[w]+after[j+1]*t.tr[w]
		}
		before, beforeDot := c, 0.0
		for j, w := range ws {
			t.omega[w] += beforeDot*after[j+1] + before*afterDot[j+1]
			before, beforeDot = before*e.tr[w], beforeDot*e.tr[w]+before*t.tr[w]
		}
	}
}

// reverseDot sets the tangents of the adjoints, the product rule applied
// to reverse.
func (e *Eval) reverseDot() {
	p, t, d, a := e.p, e.dot, e.d, &e.dot.bar
	a.clear()
	for i, w := range p.words {
		om, omDot := e.omega[i], t.omega[i]
		if w.right == bare(-1) {
			if b := (-2 - w.left) / 2; p.varies[b] {
				addDiag(a.baseBar[b], omDot, d)
			}
			continue
		}
		// P̄ += ω S and S̄ += ω P: their tangents ω̇ S + ω Ṡ and ω̇ P + ω Ṗ.
		ld, rd := e.chainDot(w.left), e.chainDot(w.right)
		e.addToChain(a, w.left, omDot, e.chain(w.right))
		if rd != nil {
			e.addToChain(a, w.left, om, rd)
		}
		e.addToChain(a, w.right, omDot, e.chain(w.left))
		if ld != nil {
			e.addToChain(a, w.right, om, ld)
		}
	}
	for i := len(p.nodes) - 1; i >= 0; i-- {
		n, bar, barDot := p.nodes[i], e.bar.nodeBar[i], a.nodeBar[i]
		// P̄ += N̄ X_cᵀ: its tangent N̄̇ X_cᵀ + N̄ Ẋ_cᵀ.
		if e.wantsChain(n.left) {
			gemm.Mul(d, d, d, barDot, e.mats[n.letter^1], e.tmp)
			e.addToChain(a, n.left, 1, e.tmp)
			if e.varying(n.letter) {
				gemm.Mul(d, d, d, bar, t.mats[n.letter^1], e.tmp)
				e.addToChain(a, n.left, 1, e.tmp)
			}
		}
		// X̄_c += Pᵀ N̄: its tangent Ṗᵀ N̄ + Pᵀ N̄̇.
		if ld := e.chainDot(n.left); ld != nil {
			e.addLeftTimes(a, n.letter, ld, bar)
		}
		e.addLeftTimes(a, n.letter, e.chain(n.left), barDot)
	}
	a.finish(d)
}
