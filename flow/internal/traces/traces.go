// Package traces evaluates a polynomial in the traces of products of
// D×D matrices,
//
//	p(X) = Σ_t c_t g_{group(t)} Π_j tr(W_{t,j}),   W a word: a product of the X_b and their transposes,
//
// with its gradient with respect to the matrices X_b and the derivative
// of that gradient along a direction (a Hessian–vector product). The words
// share their prefixes: each distinct prefix is one matrix product, so the
// value costs one product per prefix, the gradient two more by reverse
// accumulation over the same products, and the derivative of the gradient
// forward accumulation over both (A. Griewank, A. Walther, Evaluating
// Derivatives, 2nd ed., SIAM 2008, ch. 3–5). Package flow evaluates the
// population loss of a stack of attention layers with it (docs/math.md,
// "Depth").
package traces

import "fmt"

// Letter is a letter of a word: the matrix X_Base, or its transpose.
type Letter struct {
	Base int
	T    bool
}

// Term is Coef · Π_j tr(Words[j]) (indices into the program's words),
// scaled at evaluation by the weight of its Group.
type Term struct {
	Coef  float64
	Words []int
	Group int
}

// Program is a compiled polynomial in traces of words. It is immutable;
// an Eval holds the values at one point.
type Program struct {
	d      int
	bases  int
	varies []bool // varies[b]: the gradient and directions include X_b
	groups int
	// nodes are the products of the prefixes of length ≥ 2, each the
	// product of a shorter prefix (or a bare letter) and a letter, in an
	// order where a node follows its left factor.
	nodes []node
	// words are the traces tr(left · letter) of the words (or, with
	// left = bare(−1), the trace of a single letter).
	words []node
	terms []Term
}

// node is left · letter, left a node index ≥ 0 or bare(c) for the letter
// c alone; letters are numbered 2·Base + T.
type node struct {
	left, letter int
}

// bare encodes the letter c as a left factor; bare(−1) is none.
func bare(c int) int { return -2 - c }

// Compile returns the program of the polynomial Σ_t c_t g_t Π tr over the
// words, in matrices of size d×d indexed 0..bases−1. The gradient and the
// directions concern the bases with varies true (nil: all).
func Compile(d, bases int, varies []bool, words [][]Letter, terms []Term) (*Program, error) {
	if varies == nil {
		varies = make([]bool, bases)
		for b := range varies {
			varies[b] = true
		}
	}
	if len(varies) != bases {
		return nil, fmt.Errorf("traces: %d flags for %d bases", len(varies), bases)
	}
	p := &Program{d: d, bases: bases, varies: varies}
	index := map[string]int{}
	for i, w := range words {
		if len(w) == 0 {
			return nil, fmt.Errorf("traces: word %d is empty", i)
		}
		ids := make([]byte, len(w))
		for j, c := range w {
			if c.Base < 0 || c.Base >= bases {
				return nil, fmt.Errorf("traces: word %d letter %d has base %d, want 0 ≤ base < %d", i, j, c.Base, bases)
			}
			ids[j] = byte(letterID(c))
		}
		left := bare(-1)
		if len(w) > 1 {
			left = p.prefix(index, ids[:len(ids)-1])
		}
		p.words = append(p.words, node{left: left, letter: int(ids[len(ids)-1])})
	}
	for i, t := range terms {
		for _, w := range t.Words {
			if w < 0 || w >= len(words) {
				return nil, fmt.Errorf("traces: term %d has word %d, want 0 ≤ word < %d", i, w, len(words))
			}
		}
		if t.Group < 0 {
			return nil, fmt.Errorf("traces: term %d has group %d, want ≥ 0", i, t.Group)
		}
		p.groups = max(p.groups, t.Group+1)
	}
	p.terms = terms
	return p, nil
}

func letterID(c Letter) int {
	if c.T {
		return 2*c.Base + 1
	}
	return 2 * c.Base
}

// prefix returns the left factor that holds the product of the letters
// ids, adding the nodes it needs.
func (p *Program) prefix(index map[string]int, ids []byte) int {
	if len(ids) == 1 {
		return bare(int(ids[0]))
	}
	if i, ok := index[string(ids)]; ok {
		return i
	}
	left := p.prefix(index, ids[:len(ids)-1])
	p.nodes = append(p.nodes, node{left: left, letter: int(ids[len(ids)-1])})
	index[string(ids)] = len(p.nodes) - 1
	return len(p.nodes) - 1
}

// Products returns the number of D×D matrix products of one evaluation of
// the value: one per node.
func (p *Program) Products() int { return len(p.nodes) }

// Words returns the number of distinct words.
func (p *Program) Words() int { return len(p.words) }

// Groups returns the number of term groups, the length of the weights.
func (p *Program) Groups() int { return p.groups }
