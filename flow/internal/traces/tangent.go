package traces

import "github.com/linattn/linattn/flow/internal/gemm"

// tangent holds the derivatives along a direction of everything an Eval
// computes: the letters, nodes, traces and ω, and the adjoints.
type tangent struct {
	mats, nodes      [][]float64
	tr, omega        []float64
	nodeBar, baseBar [][]float64
}

// GradientDir writes into dst[b] the derivative of the gradient ∂p/∂X_b
// along the direction dir (dir[b] for the bases that vary; the others
// are ignored): the Hessian of p applied to dir, at the matrices of the
// last Value, after Gradient there.
func (e *Eval) GradientDir(dst, dir [][]float64) {
	p, d, dd := e.p, e.p.d, e.p.d*e.p.d
	if e.dot == nil {
		e.dot = &tangent{mats: matrices(2*p.bases, dd), nodes: matrices(len(p.nodes), dd),
			tr: make([]float64, len(p.words)), omega: make([]float64, len(p.words)),
			nodeBar: matrices(len(p.nodes), dd), baseBar: matrices(p.bases, dd)}
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
			copy(dst[b], t.baseBar[b])
		}
	}
}

// varying reports whether the letter id's base varies (has a tangent).
func (e *Eval) varying(id int) bool { return e.p.varies[id/2] }

// leftDot returns the tangent of a left factor, nil for a constant letter.
func (e *Eval) leftDot(l int) []float64 {
	if l >= 0 {
		return e.dot.nodes[l]
	}
	if !e.varying(-2 - l) {
		return nil
	}
	return e.dot.mats[-2-l]
}

// forwardDot sets the tangents of the nodes, Ṅ = Ṗ X_c + P Ẋ_c, and of
// the traces.
func (e *Eval) forwardDot() {
	p, t, d := e.p, e.dot, e.p.d
	for i, n := range p.nodes {
		dst := t.nodes[i]
		clear(dst)
		if ld := e.leftDot(n.left); ld != nil {
			gemm.Mul(d, d, d, ld, e.mats[n.letter], e.tmp)
			addScaled(dst, 1, e.tmp, false, d)
		}
		if e.varying(n.letter) {
			gemm.Mul(d, d, d, e.left(n.left), t.mats[n.letter], e.tmp)
			addScaled(dst, 1, e.tmp, false, d)
		}
	}
	for i, w := range p.words {
		var s float64
		switch {
		case w.left == bare(-1):
			if e.varying(w.letter) {
				s = diagSum(t.mats[w.letter], d)
			}
		default:
			if ld := e.leftDot(w.left); ld != nil {
				s += dotProduct(ld, e.mats[w.letter^1])
			}
			if e.varying(w.letter) {
				s += dotProduct(e.left(w.left), t.mats[w.letter^1])
			}
		}
		t.tr[i] = s
	}
}

// omegaDot sets the tangents of ω: for each term and each pair of its
// words j ≠ u, ω̇_j += c·ṫr_u·Π_{others} tr.
func (e *Eval) omegaDot() {
	t := e.dot
	clear(t.omega)
	for _, term := range e.p.terms {
		c := term.Coef * e.weights[term.Group]
		for j, w := range term.Words {
			for u, wu := range term.Words {
				if u == j {
					continue
				}
				v := c * t.tr[wu]
				for k, wk := range term.Words {
					if k != j && k != u {
						v *= e.tr[wk]
					}
				}
				t.omega[w] += v
			}
		}
	}
}

// reverseDot sets the tangents of the adjoints, the product rule applied
// to reverse.
func (e *Eval) reverseDot() {
	p, t, d := e.p, e.dot, e.p.d
	for _, x := range t.nodeBar {
		clear(x)
	}
	for _, x := range t.baseBar {
		clear(x)
	}
	for i, w := range p.words {
		om, omDot := e.omega[i], t.omega[i]
		if w.left == bare(-1) {
			if b := w.letter / 2; p.varies[b] {
				addDiag(t.baseBar[b], omDot, d)
			}
			continue
		}
		// P̄ += ω X_cᵀ: its tangent ω̇ X_cᵀ + ω Ẋ_cᵀ.
		e.addToLeftDot(w.left, omDot, e.mats[w.letter^1])
		if e.varying(w.letter) {
			e.addToLeftDot(w.left, om, t.mats[w.letter^1])
		}
		// X̄_c += ω Pᵀ: its tangent ω̇ Pᵀ + ω Ṗᵀ.
		e.addToLetterDot(w.letter, omDot, e.left(w.left), true)
		if ld := e.leftDot(w.left); ld != nil {
			e.addToLetterDot(w.letter, om, ld, true)
		}
	}
	for i := len(p.nodes) - 1; i >= 0; i-- {
		n, bar, barDot := p.nodes[i], e.nodeBar[i], t.nodeBar[i]
		// P̄ += N̄ X_cᵀ: its tangent N̄̇ X_cᵀ + N̄ Ẋ_cᵀ.
		if e.wantsLeft(n.left) {
			gemm.Mul(d, d, d, barDot, e.mats[n.letter^1], e.tmp)
			e.addToLeftDot(n.left, 1, e.tmp)
			if e.varying(n.letter) {
				gemm.Mul(d, d, d, bar, t.mats[n.letter^1], e.tmp)
				e.addToLeftDot(n.left, 1, e.tmp)
			}
		}
		// X̄_c += Pᵀ N̄: its tangent Ṗᵀ N̄ + Pᵀ N̄̇.
		if e.varying(n.letter) {
			if ld := e.leftDot(n.left); ld != nil {
				gemm.MulTA(d, d, d, ld, bar, e.tmp)
				e.addToLetterDot(n.letter, 1, e.tmp, false)
			}
			gemm.MulTA(d, d, d, e.left(n.left), barDot, e.tmp)
			e.addToLetterDot(n.letter, 1, e.tmp, false)
		}
	}
}

// addToLeftDot is addToLeft for the tangents.
func (e *Eval) addToLeftDot(l int, c float64, x []float64) {
	if l >= 0 {
		addScaled(e.dot.nodeBar[l], c, x, false, e.p.d)
		return
	}
	e.addToLetterDot(-2-l, c, x, false)
}

// addToLetterDot is addToLetter for the tangents.
func (e *Eval) addToLetterDot(id int, c float64, x []float64, transposed bool) {
	b := id / 2
	if !e.p.varies[b] {
		return
	}
	addScaled(e.dot.baseBar[b], c, x, transposed != (id%2 == 1), e.p.d)
}
