// Package traces evaluates a polynomial in the traces of products of
// D×D matrices,
//
//	p(X) = Σ_t c_t g_{group(t)} Π_j tr(W_{t,j}),   W a word: a product of the X_b and their transposes,
//
// with its gradient with respect to the matrices X_b and the derivative
// of that gradient along a direction (a Hessian–vector product). Each
// trace is met in the middle, tr(P S) = ⟨P, Sᵀ⟩ with P and Sᵀ two chains
// of letters about half the word's length, and the chains share their
// prefixes: each distinct prefix is one matrix product. Compile picks,
// greedily, for each word the rotation, transposition and split that add
// the fewest products (the words of a stack of four layers need about
// 2 000 products where their prefixes alone need 38 483). The value costs one
// product per chain prefix, the gradient two more by reverse accumulation
// over the same products, and the derivative of the gradient forward
// accumulation over both (A. Griewank, A. Walther, Evaluating Derivatives,
// 2nd ed., SIAM 2008, ch. 3–5). Package flow evaluates the population
// loss of a stack of attention layers with it (docs/math.md, "Depth").
package traces

import (
	"fmt"
	"sort"
)

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

// Program is a compiled polynomial in traces of words, for matrices of
// any size. It is immutable and safe for concurrent use; an Eval holds the
// values at one point in one dimension.
type Program struct {
	bases  int
	varies []bool // varies[b]: the gradient and directions include X_b
	groups int
	// nodes are the products of the chains' prefixes of length ≥ 2, each
	// the product of a shorter prefix (or a bare letter) and a letter, in
	// an order where a node follows its left factor.
	nodes []node
	// words are the traces ⟨left, right⟩ = tr(left · rightᵀ) of the words
	// split into two chains, or with right = bare(−1) the trace of the
	// single letter left.
	words []pair
	terms terms
}

// terms are the polynomial's terms, flat: term t has the coefficient
// coef[t], the group group[t] and the words ids[start[t]:start[t+1]].
type terms struct {
	coef  []float64
	group []int32
	start []int32
	ids   []int32
}

func (ts terms) len() int { return len(ts.coef) }

// words returns the words of term t.
func (ts terms) words(t int) []int32 { return ts.ids[ts.start[t]:ts.start[t+1]] }

// node is left · letter, left a node index ≥ 0 or bare(c) for the letter
// c alone; letters are numbered 2·Base + T.
type node struct {
	left, letter int
}

// pair is a word's two chains, each a node or a bare letter.
type pair struct {
	left, right int
}

// bare encodes the letter c as a chain of one letter; bare(−1) is none.
func bare(c int) int { return -2 - c }

// Compile returns the program of the polynomial Σ_t c_t g_t Π tr over the
// words in the matrices indexed 0..bases−1 (at most 127). The gradient
// and the directions concern the bases with varies true (nil: all).
func Compile(bases int, varies []bool, words [][]Letter, terms []Term) (*Program, error) {
	p, err := compileWords(bases, varies, words)
	if err != nil {
		return nil, err
	}
	return p.WithTerms(terms)
}

// WithTerms returns the program of the same words (and products) with
// other terms: splitting the words, the costly part of Compile, is done
// once for every polynomial in them.
func (p *Program) WithTerms(terms []Term) (*Program, error) {
	q := *p
	q.groups = 0
	for i, t := range terms {
		for _, w := range t.Words {
			if w < 0 || w >= len(p.words) {
				return nil, fmt.Errorf("traces: term %d has word %d, want 0 ≤ word < %d", i, w, len(p.words))
			}
		}
		if t.Group < 0 {
			return nil, fmt.Errorf("traces: term %d has group %d, want ≥ 0", i, t.Group)
		}
		q.groups = max(q.groups, t.Group+1)
	}
	q.terms = flatten(terms)
	return &q, nil
}

func flatten(list []Term) terms {
	ts := terms{coef: make([]float64, len(list)), group: make([]int32, len(list)), start: make([]int32, 1, len(list)+1)}
	for i, t := range list {
		ts.coef[i], ts.group[i] = t.Coef, int32(t.Group)
		for _, w := range t.Words {
			ts.ids = append(ts.ids, int32(w))
		}
		ts.start = append(ts.start, int32(len(ts.ids)))
	}
	return ts
}

// compileWords splits the words and builds their products.
func compileWords(bases int, varies []bool, words [][]Letter) (*Program, error) {
	if bases < 1 || bases > 127 {
		return nil, fmt.Errorf("traces: %d bases, want 1 to 127", bases)
	}
	if varies == nil {
		varies = make([]bool, bases)
		for b := range varies {
			varies[b] = true
		}
	}
	if len(varies) != bases {
		return nil, fmt.Errorf("traces: %d flags for %d bases", len(varies), bases)
	}
	p := &Program{bases: bases, varies: varies, words: make([]pair, len(words))}
	ids := make([][]byte, len(words))
	for i, w := range words {
		if len(w) == 0 {
			return nil, fmt.Errorf("traces: word %d is empty", i)
		}
		ids[i] = make([]byte, len(w))
		for j, c := range w {
			if c.Base < 0 || c.Base >= bases {
				return nil, fmt.Errorf("traces: word %d letter %d has base %d, want 0 ≤ base < %d", i, j, c.Base, bases)
			}
			ids[i][j] = byte(letterID(c))
		}
	}
	p.split(ids)
	return p, nil
}

func letterID(c Letter) int {
	if c.T {
		return 2*c.Base + 1
	}
	return 2 * c.Base
}

// split chooses each word's two chains, the longest words first, and
// builds the nodes they need.
func (p *Program) split(ids [][]byte) {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(ids[order[a]]) > len(ids[order[b]]) })
	index := map[string]int{}
	for _, i := range order {
		w := ids[i]
		if len(w) == 1 {
			p.words[i] = pair{left: bare(int(w[0])), right: bare(-1)}
			continue
		}
		left, right := bestSplit(index, w)
		p.words[i] = pair{left: p.chain(index, left), right: p.chain(index, right)}
	}
}

// bestSplit returns the chains P and Sᵀ of the rotation, transposition
// and split P·S of the word w (letter ids) that need the fewest products
// not yet in index and, among those, split it most evenly (whose short
// chains the other words share most: on a stack of three layers 127
// products, where the first among equals needs 336), the first in a fixed
// order among equals.
func bestSplit(index map[string]int, w []byte) (left, right []byte) {
	m := len(w)
	t := transposed(w)
	rot := make([]byte, m)
	best, bestSkew := -1, 0
	for _, x := range [][]byte{w, t} {
		for r := 0; r < m; r++ {
			copy(rot, x[r:])
			copy(rot[m-r:], x[:r])
			for k := 1; k < m; k++ {
				l, s := rot[:k], transposed(rot[k:])
				cost, skew := missing(index, l, s), abs(2*k-m)
				if best < 0 || cost < best || cost == best && skew < bestSkew {
					best, bestSkew, left, right = cost, skew, append([]byte{}, l...), s
				}
			}
		}
	}
	return left, right
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// transposed returns the letters of the transpose of the product w:
// reversed, each transposed.
func transposed(w []byte) []byte {
	out := make([]byte, len(w))
	for i, c := range w {
		out[len(w)-1-i] = c ^ 1
	}
	return out
}

// missing counts the prefixes of length ≥ 2 of the chains a and b that
// index lacks, each once.
func missing(index map[string]int, a, b []byte) int {
	n := 0
	for i := 2; i <= len(a); i++ {
		if _, ok := index[string(a[:i])]; !ok {
			n++
		}
	}
	for i := 2; i <= len(b); i++ {
		if _, ok := index[string(b[:i])]; !ok && (i > len(a) || string(b[:i]) != string(a[:i])) {
			n++
		}
	}
	return n
}

// chain returns the code of the chain of the letters ids: a bare letter,
// or the node of their product, adding the nodes it needs.
func (p *Program) chain(index map[string]int, ids []byte) int {
	if len(ids) == 1 {
		return bare(int(ids[0]))
	}
	if i, ok := index[string(ids)]; ok {
		return i
	}
	left := p.chain(index, ids[:len(ids)-1])
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
