package law

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// The population loss of a stack of L linear-attention layers that
// implement L steps of preconditioned gradient descent on the context
// (docs/math.md, "Depth"). In coordinates whitened by Λ (Ã_ℓ = Λ^½A_ℓΛ^½,
// M̃ = Λ^½M_wΛ^½, Ŵ = Λ^-½Λ̂Λ^-½, a white Wishart matrix),
//
//	L = E tr(P̃ᵀP̃ M̃) + σ² E[tr(G̃ᵀG̃Ŵ)/n] + σ²,
//	P̃ = (I − Ã_{L−1}Ŵ)···(I − Ã_0Ŵ),   G̃ = Σ_ℓ (I − Ã_{L−1}Ŵ)···(I − Ã_{ℓ+1}Ŵ) Ã_ℓ.
//
// Multiplied out, both expectations are sums of E tr(B_1 Ŵ B_2 Ŵ ··· B_k Ŵ)
// with products B_j of the letters Ã_ℓ, Ã_ℓᵀ and M̃, and k ≤ 2L. Wick's
// theorem on the Gaussian entries of Ŵ = GGᵀ/n (G a D×n matrix of
// independent standard normals) sums over the (2k−1)!! pairings of the 2k
// columns of G in the product; each pairing joins the blocks into cycles,
// each cycle a trace of a word, and its column sums contribute n^c with c
// the number of connected column indices:
//
//	E tr(B_1 Ŵ ··· B_k Ŵ) = Σ_pairings n^(c−k) Π_cycles tr(word).
//
// The compiler below does this once per (L, tied) and merges equal terms;
// binding it to a law of context lengths averages the powers of 1/n.

// Letter is a letter of the words whose traces make the stack's loss: the
// task moment M̃ (TaskLetter) or the whitened key–query map Ã_ℓ of a layer,
// or its transpose (LayerLetter).
type Letter uint8

// TaskLetter is M̃ = Λ^½ E[wwᵀ] Λ^½, symmetric.
const TaskLetter Letter = 0

// LayerLetter is Ã_ℓ, or Ã_ℓᵀ when transposed.
func LayerLetter(layer int, transposed bool) Letter {
	c := Letter(1 + 2*layer)
	if transposed {
		c++
	}
	return c
}

// Layer returns the layer of a letter other than TaskLetter and whether
// it is transposed.
func (c Letter) Layer() (layer int, transposed bool) { return int(c-1) / 2, (c-1)%2 == 1 }

// T is the transpose of the letter.
func (c Letter) T() Letter {
	switch {
	case c == TaskLetter:
		return c
	case (c-1)%2 == 0:
		return c + 1
	}
	return c - 1
}

// Word is a cyclic product of letters, standing for its trace
// tr(X_{w_0}···X_{w_{m−1}}).
type Word []Letter

// StackTerm is Coef · Π_j tr(Words[j]), Words indexing StackLoss.Words.
type StackTerm struct {
	Coef  float64
	Words []int
}

// StackLoss is the population loss of a stack of Layers layers (their
// maps tied: one Ã for every layer) as a polynomial in the traces of
// words, for one law of context lengths:
//
//	L = Σ_Signal Coef·Π tr + σ² Σ_Noise Coef·Π tr + σ²,
//
// in the whitened letters (docs/math.md, "Depth"). Each signal term holds
// TaskLetter exactly once: the loss is linear in M̃, so the test losses on
// another law of tasks are the same terms with that law's M̃.
type StackLoss struct {
	Layers int
	Tied   bool
	Words  []Word
	Signal []StackTerm
	Noise  []StackTerm
}

// MaxStackLayers is the deepest stack whose loss StackLoss compiles: its
// longest product has 2·MaxStackLayers Wishart factors, whose
// (4L−1)!! = 2 027 025 pairings at L = 4 take about a second, and the next
// depth would take 17!!·(4·4·4) ≈ 10⁸.
const MaxStackLayers = 4

// StackLoss returns the population loss of a stack of layers ≥ 1 layers
// (tied: one map shared by all) under d's law of context lengths, which
// must be known beyond ν (Lengths.Sampled): the terms hold E[1/n^p] for p
// up to 2·layers.
func (d *Data) StackLoss(layers int, tied bool) (*StackLoss, error) {
	if layers < 1 || layers > MaxStackLayers {
		return nil, fmt.Errorf("law: %d layers, want 1 to %d", layers, MaxStackLayers)
	}
	if !d.lengths.Sampled() {
		return nil, fmt.Errorf("law: a stack's loss needs E[1/n^p] up to p = %d: give the context length N or NTPMax, not only ν", 2*layers+1)
	}
	c := compiledStack(layers, tied)
	out := &StackLoss{Layers: layers, Tied: tied, Words: c.words}
	// E[1/n^p] once per power, not per term: with NTPMax each is a sum
	// over the lengths, and L = 4 has 10⁵ terms.
	var inverse []float64
	for p := 0; p <= 2*layers+1; p++ {
		inverse = append(inverse, d.lengths.InversePower(p))
	}
	bind := func(terms []stackCounts) []StackTerm {
		var st []StackTerm
		for _, t := range terms {
			var coef float64
			for p, k := range t.counts {
				if k != 0 {
					coef += float64(k) * inverse[p]
				}
			}
			if coef != 0 {
				st = append(st, StackTerm{Coef: coef, Words: t.words})
			}
		}
		return st
	}
	out.Signal, out.Noise = bind(c.signal), bind(c.noise)
	return out, nil
}

// compiled is the stack's loss before it is bound to a law of lengths:
// each term's count of pairings by power of 1/n.
type compiled struct {
	words         []Word
	signal, noise []stackCounts
}

type stackCounts struct {
	words  []int
	counts []int64 // counts[p]: the coefficient of E[1/n^p]
}

var compiledStacks sync.Map // stackKey → *compiled

type stackKey struct {
	layers int
	tied   bool
}

// compiledStack returns the compiled loss of the stack, compiling it on
// first use.
func compiledStack(layers int, tied bool) *compiled {
	key := stackKey{layers, tied}
	if c, ok := compiledStacks.Load(key); ok {
		return c.(*compiled)
	}
	c, _ := compiledStacks.LoadOrStore(key, compileStack(layers, tied))
	return c.(*compiled)
}

// A token of a product: a letter, or wishart for a factor Ŵ.
type token = int16

const wishart token = -1

// products maps a product of tokens (encoded) to its coefficient.
type products map[string]int64

func encode(toks []token) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte(byte(t + 1))
	}
	return b.String()
}

func decode(s string) []token {
	toks := make([]token, len(s))
	for i := range s {
		toks[i] = token(s[i]) - 1
	}
	return toks
}

// transposeTokens returns the transpose of a product.
func transposeTokens(toks []token) []token {
	out := make([]token, len(toks))
	for i, t := range toks {
		if t != wishart {
			t = token(Letter(t).T())
		}
		out[len(toks)-1-i] = t
	}
	return out
}

// compileStack expands the loss (see the top of this file) into the
// expectations of cyclic products and sums their Wick pairings.
func compileStack(layers int, tied bool) *compiled {
	letter := func(l int) token {
		if tied {
			l = 0
		}
		return token(LayerLetter(l, false))
	}
	// P̃ = Σ_S (−1)^|S| Π_{ℓ∈S, decreasing} Ã_ℓŴ, and G̃ = Σ_ℓ P̃_{>ℓ}Ã_ℓ.
	p := products{}
	g := products{}
	for mask := 0; mask < 1<<layers; mask++ {
		var toks []token
		sign := int64(1)
		for l := layers - 1; l >= 0; l-- {
			if mask&(1<<l) != 0 {
				toks = append(toks, letter(l), wishart)
				sign = -sign
			}
		}
		p[encode(toks)] += sign
		low := 0 // the lowest layer in the mask, the ℓ of G̃'s term
		for low < layers && mask&(1<<low) == 0 {
			low++
		}
		if low < layers { // (P̃_{>ℓ} with the layers above low) · Ã_low
			above := toks[:len(toks)-2]
			g[encode(append(append([]token{}, above...), letter(low)))] += -sign
		}
	}
	w := &wordTable{index: map[string]int{}, terms: map[string]*stackCounts{}}
	c := &compiled{}
	c.signal = w.expand(pairProducts(p, token(TaskLetter)), 0, 2*layers)
	c.noise = w.expand(pairProducts(g, wishart), 1, 2*layers+1)
	c.words = w.words
	return c
}

// pairProducts returns the products tr(Xᵀ Y last) of every pair of
// products X, Y of prods, closed by last, with the product of their
// coefficients. The pair (Y, X) has the transposed product, whose trace
// and expectation are the same, so each unordered pair is formed once,
// counted twice.
func pairProducts(prods products, last token) products {
	keys := sortedKeys(prods)
	out := products{}
	for i, s1 := range keys {
		for _, s2 := range keys[i:] {
			c := prods[s1] * prods[s2]
			if s1 != s2 {
				c *= 2
			}
			seq := append(transposeTokens(decode(s1)), decode(s2)...)
			out[encode(append(seq, last))] += c
		}
	}
	return out
}

func sortedKeys(prods products) []string {
	keys := make([]string, 0, len(prods))
	for k := range prods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// wordTable numbers the distinct canonical words and gathers the terms,
// each a multiset of words, in the order they first appear.
type wordTable struct {
	words []Word
	index map[string]int
	terms map[string]*stackCounts
	order []*stackCounts
}

// id returns the number of the canonical word (a view into scratch
// space: copied when new).
func (w *wordTable) id(word Word) int {
	if i, ok := w.index[string(word)]; ok {
		return i
	}
	w.words = append(w.words, append(Word{}, word...))
	w.index[string(word)] = len(w.words) - 1
	return len(w.words) - 1
}

// expand sums the Wick pairings of every product in prods (each with one
// more factor 1/n^shift: the noise's) and merges equal terms, in a
// deterministic order.
func (w *wordTable) expand(prods products, shift, maxPower int) []stackCounts {
	clear(w.terms)
	w.order = w.order[:0]
	var ids []int
	var key []byte
	for _, k := range sortedKeys(prods) {
		coef := prods[k]
		if coef == 0 {
			continue
		}
		wickTerms(decode(k), func(words []Word, power int) {
			ids = ids[:0]
			for _, word := range words {
				ids = append(ids, w.id(word))
			}
			sort.Ints(ids)
			key = key[:0]
			for _, id := range ids {
				key = append(key, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
			}
			t := w.terms[string(key)]
			if t == nil {
				t = &stackCounts{words: append([]int{}, ids...), counts: make([]int64, maxPower+1)}
				w.terms[string(key)] = t
				w.order = append(w.order, t)
			}
			t.counts[power+shift] += coef
		})
	}
	var out []stackCounts
	for _, t := range w.order {
		for _, k := range t.counts {
			if k != 0 {
				out = append(out, *t)
				break
			}
		}
	}
	return out
}

// wickTerms calls term for every Wick pairing of the cyclic product toks
// (letters and Wishart factors) with the canonical words of its cycles
// (views into scratch space, valid during the call) and the power p of
// its factor 1/n^p. A product without Wishart factor is one trace.
func wickTerms(toks []token, term func(words []Word, power int)) {
	blocks := splitBlocks(toks)
	if blocks == nil {
		word := make(Word, len(toks))
		for i, t := range toks {
			word[i] = Letter(t)
		}
		term([]Word{canonical(word)}, 0)
		return
	}
	k := len(blocks)
	mate := make([]int, 2*k)
	for i := range mate {
		mate[i] = -1
	}
	cy := newCycler(blocks)
	var pair func(first int)
	pair = func(first int) {
		for first < 2*k && mate[first] >= 0 {
			first++
		}
		if first == 2*k {
			words, c := cy.cycles(mate)
			term(words, k-c)
			return
		}
		for j := first + 1; j < 2*k; j++ {
			if mate[j] >= 0 {
				continue
			}
			mate[first], mate[j] = j, first
			pair(first + 1)
			mate[first], mate[j] = -1, -1
		}
	}
	pair(0)
}

// splitBlocks rotates the cyclic product to end with a Wishart factor and
// returns the products B_0, …, B_{k−1} of letters before each of its k
// Wishart factors: tr(B_0 Ŵ B_1 Ŵ ···); nil without a Wishart factor.
func splitBlocks(toks []token) [][]Letter {
	last := -1
	for i, t := range toks {
		if t == wishart {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	rot := append(append([]token{}, toks[last+1:]...), toks[:last+1]...)
	var blocks [][]Letter
	var cur []Letter
	for _, t := range rot {
		if t == wishart {
			blocks = append(blocks, cur)
			cur = nil
			continue
		}
		cur = append(cur, Letter(t))
	}
	return blocks
}

// cycler traces the cycles of the pairings of one product's blocks in
// scratch space of its own.
type cycler struct {
	blocks, transposed [][]Letter
	parent             []int
	seen               []bool
	buf, canon         Word
	words              []Word
}

func newCycler(blocks [][]Letter) *cycler {
	cy := &cycler{blocks: blocks, parent: make([]int, len(blocks)), seen: make([]bool, 2*len(blocks))}
	n := 0
	for _, b := range blocks {
		t := make([]Letter, len(b))
		for i, c := range b {
			t[len(b)-1-i] = c.T()
		}
		cy.transposed = append(cy.transposed, t)
		n += len(b)
	}
	cy.buf, cy.canon = make(Word, 0, n), make(Word, 0, n)
	return cy
}

// cycles returns the canonical words of the cycles of a pairing and the
// number c of connected components of the Wishart factors it joins.
// Half-edge 2j is the column index of B_j (the G on the left of factor j),
// 2j+1 the row index of B_{j+1} (the Gᵀ on its right); B_j joins 2j−1 to
// 2j, and the pairing joins mates. A cycle read from 2j+1 through B_{j+1}
// reads it forward, from 2j through B_j backward (transposed).
func (cy *cycler) cycles(mate []int) ([]Word, int) {
	k, parent := len(cy.blocks), cy.parent
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			x = parent[x]
		}
		return x
	}
	for h, m := range mate {
		if a, b := find(h/2), find(m/2); a != b {
			parent[a] = b
		}
	}
	c := 0
	for i := range parent {
		if find(i) == i {
			c++
		}
	}
	clear(cy.seen)
	cy.buf, cy.canon, cy.words = cy.buf[:0], cy.canon[:0], cy.words[:0]
	for start := range mate {
		if cy.seen[start] {
			continue
		}
		from := len(cy.buf)
		h := start
		for {
			var next int
			if h%2 == 1 { // row index of B_{j+1}: read it forward to its column index
				j := (h/2 + 1) % k
				cy.buf = append(cy.buf, cy.blocks[j]...)
				next = 2 * j
			} else { // column index of B_j: read it transposed to its row index
				j := h / 2
				cy.buf = append(cy.buf, cy.transposed[j]...)
				next = 2*((j-1+k)%k) + 1
			}
			cy.seen[h], cy.seen[next] = true, true
			h = mate[next]
			if h == start {
				break
			}
		}
		at := len(cy.canon)
		cy.canon = appendCanonical(cy.canon, cy.buf[from:])
		cy.words = append(cy.words, cy.canon[at:])
	}
	return cy.words, c
}

// canonical returns the least of the rotations of word and of its
// transpose (the reverse, letters transposed): the representative of the
// words with its trace.
func canonical(word Word) Word { return appendCanonical(nil, word) }

// appendCanonical appends the canonical form of word to dst.
func appendCanonical(dst, word Word) Word {
	m := len(word)
	bestT, bestR := false, 0
	for _, t := range []bool{false, true} {
		for r := 0; r < m; r++ {
			if lessRotation(word, t, r, bestT, bestR) {
				bestT, bestR = t, r
			}
		}
	}
	for i := 0; i < m; i++ {
		dst = append(dst, rotated(word, bestT, bestR, i))
	}
	return dst
}

// rotated returns letter i of the rotation by r of word, or of its
// transpose.
func rotated(word Word, t bool, r, i int) Letter {
	m := len(word)
	if !t {
		return word[(r+i)%m]
	}
	return word[(2*m-1-r-i)%m].T()
}

// lessRotation reports whether the rotation (t, r) of word is less than
// the rotation (bt, br).
func lessRotation(word Word, t bool, r int, bt bool, br int) bool {
	for i := range word {
		x, y := rotated(word, t, r, i), rotated(word, bt, br, i)
		if x != y {
			return x < y
		}
	}
	return false
}

// InversePower returns E[1/n^p] for the context length n (p ≥ 0): N^−p for a
// fixed length, the average over 1..NTPMax for the next-token loss; NaN
// for a law known only through ν (p ≥ 2).
func (l Lengths) InversePower(p int) float64 {
	switch {
	case p == 0:
		return 1
	case l.N > 0:
		return math.Pow(float64(l.N), -float64(p))
	case l.NTPMax > 0:
		var s float64
		for n := l.NTPMax; n >= 1; n-- {
			s += math.Pow(float64(n), -float64(p))
		}
		return s / float64(l.NTPMax)
	case p == 1:
		return l.Nu
	}
	return math.NaN()
}

// ScalarPolynomial returns the loss at the scalar letters Ã_ℓ = ηI for
// every layer and M̃ = mI, in dimension d, as polynomials in η: the
// signal's and the noise's coefficients, L(η) = Σ_j (signal_j + σ²
// noise_j) η^j + σ². A word with a letters Ã and b letters M̃ has trace
// η^a m^b d; the isotropic reduction of docs/math.md ("Depth") is the
// stack's loss so, exact at finite d and n.
func (sl *StackLoss) ScalarPolynomial(d int, m float64) (signal, noise []float64) {
	degree, trace := make([]int, len(sl.Words)), make([]float64, len(sl.Words))
	for i, w := range sl.Words {
		trace[i] = float64(d)
		for _, c := range w {
			if c == TaskLetter {
				trace[i] *= m
			} else {
				degree[i]++
			}
		}
	}
	poly := func(terms []StackTerm) []float64 {
		out := make([]float64, 2*sl.Layers+1)
		for _, t := range terms {
			v, j := t.Coef, 0
			for _, w := range t.Words {
				v *= trace[w]
				j += degree[w]
			}
			out[j] += v
		}
		return out
	}
	return poly(sl.Signal), poly(sl.Noise)
}
