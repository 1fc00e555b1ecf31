package traces

import (
	"fmt"

	"gonum.org/v1/gonum/floats"

	"github.com/linattn/linattn/flow/internal/gemm"
)

// Eval holds a program's matrices at one point (of size d×d), the
// products and traces of its words there and, after Gradient, their
// adjoints. It is not safe for concurrent use; each goroutine takes its
// own (Program.NewEval).
type Eval struct {
	p *Program
	d int
	// mats[2b] = X_b and mats[2b+1] = X_bᵀ; nodes the chains' products.
	mats, nodes [][]float64
	tr          []float64 // the words' traces
	omega       []float64 // ∂p/∂tr(word)
	weights     []float64 // the group weights of the last Value
	bar         adjoints  // ∂p/∂node and ∂p/∂X_b
	tmp         []float64
	suffix      []float64 // omegas' products of a term's last traces
	dot         *tangent  // GradientDir's, made on first use
}

// adjoints are the derivatives of p with respect to the nodes (nodeBar)
// and the bases (baseBar, with the part accT gathered transposed and
// added once at the end, so that no addition runs down a matrix's
// columns).
type adjoints struct {
	nodeBar, baseBar, accT [][]float64
}

func newAdjoints(p *Program, d int) adjoints {
	dd := d * d
	return adjoints{nodeBar: matrices(len(p.nodes), dd), baseBar: matrices(p.bases, dd), accT: matrices(p.bases, dd)}
}

func (a *adjoints) clear() {
	for _, set := range [][][]float64{a.nodeBar, a.baseBar, a.accT} {
		for _, x := range set {
			clear(x)
		}
	}
}

// finish adds the transposed parts to the bases' adjoints.
func (a *adjoints) finish(d int) {
	for b, acc := range a.accT {
		bar := a.baseBar[b]
		for i := 0; i < d; i++ {
			row := bar[i*d : (i+1)*d]
			for j := range row {
				row[j] += acc[j*d+i]
			}
		}
	}
}

// NewEval returns an evaluation of p on d×d matrices, every one zero.
func (p *Program) NewEval(d int) *Eval {
	dd := d * d
	return &Eval{p: p, d: d, mats: matrices(2*p.bases, dd), nodes: matrices(len(p.nodes), dd),
		tr: make([]float64, len(p.words)), omega: make([]float64, len(p.words)),
		bar: newAdjoints(p, d), tmp: make([]float64, dd), suffix: make([]float64, p.maxTermLen()+1)}
}

// maxTermLen returns the most words of a term.
func (p *Program) maxTermLen() int {
	n := 0
	for t := 0; t < p.terms.len(); t++ {
		n = max(n, len(p.terms.words(t)))
	}
	return n
}

func matrices(n, size int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, size)
	}
	return out
}

// Set sets X_b to the row-major d×d matrix x (copied).
func (e *Eval) Set(b int, x []float64) {
	d := e.d
	if len(x) != d*d {
		panic(fmt.Sprintf("traces: len(x) = %d, want %d", len(x), d*d))
	}
	copy(e.mats[2*b], x)
	transpose(e.mats[2*b+1], x, d)
}

func transpose(dst, x []float64, d int) {
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			dst[j*d+i] = x[i*d+j]
		}
	}
}

// chain returns the matrix of a chain: a node's product or a letter.
func (e *Eval) chain(l int) []float64 {
	if l >= 0 {
		return e.nodes[l]
	}
	return e.mats[-2-l]
}

// Value computes the products and traces at the matrices set and returns
// p with the group weights (one per group; Program.Groups).
func (e *Eval) Value(weights []float64) float64 {
	p, d := e.p, e.d
	if len(weights) != p.groups {
		panic(fmt.Sprintf("traces: %d weights for %d groups", len(weights), p.groups))
	}
	e.weights = append(e.weights[:0], weights...)
	for i, n := range p.nodes {
		gemm.Mul(d, d, d, e.chain(n.left), e.mats[n.letter], e.nodes[i])
	}
	for i, w := range p.words {
		if w.right == bare(-1) {
			e.tr[i] = diagSum(e.chain(w.left), d)
			continue
		}
		e.tr[i] = dotProduct(e.chain(w.left), e.chain(w.right))
	}
	var sum float64
	ts := &p.terms
	for t := range ts.coef {
		v := ts.coef[t] * weights[ts.group[t]]
		for _, w := range ts.words(t) {
			v *= e.tr[w]
		}
		sum += v
	}
	return sum
}

func diagSum(x []float64, d int) float64 {
	var s float64
	for i := 0; i < d; i++ {
		s += x[i*d+i]
	}
	return s
}

// dotProduct is ⟨x, y⟩ (gonum's assembly kernel).
func dotProduct(x, y []float64) float64 { return floats.Dot(x, y) }

// Trace returns the trace of word i at the last Value.
func (e *Eval) Trace(i int) float64 { return e.tr[i] }

// omegas sets omega[w] = ∂p/∂tr(w) = Σ_terms c·g·Π_{other words} tr,
// each product of the others as the product of the traces before the
// word and of those after it (no division: a trace may be zero).
func (e *Eval) omegas() {
	clear(e.omega)
	ts := &e.p.terms
	for t := range ts.coef {
		ws := ts.words(t)
		c := ts.coef[t] * e.weights[ts.group[t]]
		if len(ws) == 1 {
			e.omega[ws[0]] += c
			continue
		}
		after := e.suffix[:len(ws)+1] // after[j] = Π_{k ≥ j} tr
		after[len(ws)] = 1
		for j := len(ws) - 1; j >= 0; j-- {
			after[j] = after[j+1] * e.tr[ws[j]]
		}
		before := c
		for j, w := range ws {
			e.omega[w] += before * after[j+1]
			before *= e.tr[w]
		}
	}
}

// Gradient writes ∂p/∂X_b at the last Value into dst[b] for every base
// that varies (row-major d×d; the others are left alone).
func (e *Eval) Gradient(dst [][]float64) {
	e.omegas()
	e.reverse()
	for b, v := range e.p.varies {
		if v {
			copy(dst[b], e.bar.baseBar[b])
		}
	}
}

// reverse accumulates the adjoints of the nodes and the varying bases
// from the words' ω, through the nodes in reverse order.
func (e *Eval) reverse() {
	p, d, a := e.p, e.d, &e.bar
	a.clear()
	for i, w := range p.words {
		om := e.omega[i]
		if om == 0 {
			continue
		}
		if w.right == bare(-1) { // ∂ tr X_c/∂X_c = I
			if b := (-2 - w.left) / 2; p.varies[b] {
				addDiag(a.baseBar[b], om, d)
			}
			continue
		}
		// ∂⟨P, S⟩/∂P = S and ∂/∂S = P.
		e.addToChain(a, w.left, om, e.chain(w.right))
		e.addToChain(a, w.right, om, e.chain(w.left))
	}
	for i := len(p.nodes) - 1; i >= 0; i-- {
		n, bar := p.nodes[i], a.nodeBar[i]
		// N = P X_c: P̄ += N̄ X_cᵀ, X̄_c += Pᵀ N̄.
		if e.wantsChain(n.left) {
			gemm.Mul(d, d, d, bar, e.mats[n.letter^1], e.tmp)
			e.addToChain(a, n.left, 1, e.tmp)
		}
		e.addLeftTimes(a, n.letter, e.chain(n.left), bar)
	}
	a.finish(d)
}

// addLeftTimes adds Pᵀ N̄ to the adjoint of the letter id (when its base
// varies): X̄_b += Pᵀ N̄ for X_b, and (Pᵀ N̄)ᵀ = N̄ᵀ P for X_bᵀ, each one
// product.
func (e *Eval) addLeftTimes(a *adjoints, id int, p, nbar []float64) {
	b, d := id/2, e.d
	if !e.p.varies[b] {
		return
	}
	if id%2 == 0 {
		gemm.MulTA(d, d, d, p, nbar, e.tmp)
	} else {
		gemm.MulTA(d, d, d, nbar, p, e.tmp)
	}
	addScaled(a.baseBar[b], 1, e.tmp)
}

// wantsChain reports whether a chain's adjoint is needed: a node's
// always, a bare letter's if its base varies.
func (e *Eval) wantsChain(l int) bool { return l >= 0 || e.p.varies[(-2-l)/2] }

// addToChain adds c·x to the adjoint of the chain l: a node's, or for a
// bare letter its base's (X̄_b += c·x for X_b, c·xᵀ for X_bᵀ).
func (e *Eval) addToChain(a *adjoints, l int, c float64, x []float64) {
	if l >= 0 {
		addScaled(a.nodeBar[l], c, x)
		return
	}
	id := -2 - l
	b := id / 2
	if !e.p.varies[b] {
		return
	}
	if id%2 == 1 {
		addScaled(a.accT[b], c, x)
		return
	}
	addScaled(a.baseBar[b], c, x)
}

// addScaled sets dst += c·x (gonum's assembly kernel).
func addScaled(dst []float64, c float64, x []float64) { floats.AddScaled(dst, c, x) }

func addDiag(dst []float64, c float64, d int) {
	for i := 0; i < d; i++ {
		dst[i*d+i] += c
	}
}
