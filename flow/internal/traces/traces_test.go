package traces

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomProgram is a polynomial of random words (length 1 to 6, shared
// prefixes likely) over three bases, the last constant, with terms of one
// to three traces in two groups.
func randomProgram(t *testing.T, rng *rand.Rand, d int) (*Program, [][]Letter, []Term) {
	const bases = 3
	var words [][]Letter
	for i := 0; i < 40; i++ {
		w := make([]Letter, 1+rng.IntN(6))
		for j := range w {
			w[j] = Letter{Base: rng.IntN(bases), T: rng.IntN(2) == 1}
		}
		words = append(words, w)
	}
	var terms []Term
	for i := 0; i < 60; i++ {
		ws := make([]int, 1+rng.IntN(3))
		for j := range ws {
			ws[j] = rng.IntN(len(words))
		}
		terms = append(terms, Term{Coef: rng.NormFloat64(), Words: ws, Group: rng.IntN(2)})
	}
	p, err := Compile(bases, []bool{true, true, false}, words, terms)
	if err != nil {
		t.Fatal(err)
	}
	return p, words, terms
}

// naiveValue multiplies every word out with gonum.
func naiveValue(xs []*mat.Dense, words [][]Letter, terms []Term, weights []float64) float64 {
	d, _ := xs[0].Dims()
	tr := make([]float64, len(words))
	for i, w := range words {
		prod := mat.NewDense(d, d, nil)
		for k := 0; k < d; k++ {
			prod.Set(k, k, 1)
		}
		for _, c := range w {
			var x mat.Matrix = xs[c.Base]
			if c.T {
				x = xs[c.Base].T()
			}
			var q mat.Dense
			q.Mul(prod, x)
			prod = &q
		}
		tr[i] = mat.Trace(prod)
	}
	var s float64
	for _, t := range terms {
		v := t.Coef * weights[t.Group]
		for _, w := range t.Words {
			v *= tr[w]
		}
		s += v
	}
	return s
}

func randomMatrices(rng *rand.Rand, n, d int) []*mat.Dense {
	xs := make([]*mat.Dense, n)
	for b := range xs {
		xs[b] = mat.NewDense(d, d, nil)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				xs[b].Set(i, j, rng.NormFloat64()/math.Sqrt(float64(d)))
			}
		}
	}
	return xs
}

// TestValueGradientDirection holds the program against the words
// multiplied out (value), central differences of the value (gradient,
// step 1e-5, error O(h²)) and central differences of the gradient (its
// derivative along a direction), at d = 5, on which the products use the
// kernels' blocks and their edges.
func TestValueGradientDirection(t *testing.T) {
	const d, h = 5, 1e-5
	rng := rand.New(rand.NewPCG(1, 1))
	p, words, terms := randomProgram(t, rng, d)
	xs := randomMatrices(rng, 3, d)
	weights := []float64{1.3, -0.7}
	e := p.NewEval(d)
	set := func(xs []*mat.Dense) {
		for b, x := range xs {
			e.Set(b, x.RawMatrix().Data)
		}
	}
	set(xs)
	got := e.Value(weights)
	if want := naiveValue(xs, words, terms, weights); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
		t.Fatalf("value %.15g, want %.15g", got, want)
	}
	grad := [][]float64{make([]float64, d*d), make([]float64, d*d), nil}
	e.Gradient(grad)
	for b := 0; b < 2; b++ {
		for k := 0; k < d*d; k++ {
			raw := xs[b].RawMatrix().Data
			old := raw[k]
			raw[k] = old + h
			up := naiveValue(xs, words, terms, weights)
			raw[k] = old - h
			down := naiveValue(xs, words, terms, weights)
			raw[k] = old
			if fd := (up - down) / (2 * h); math.Abs(grad[b][k]-fd) > 1e-7*math.Max(1, math.Abs(fd)) {
				t.Errorf("∂p/∂X_%d[%d] = %.10g, central difference %.10g", b, k, grad[b][k], fd)
			}
		}
	}
	dir := [][]float64{randomMatrices(rng, 1, d)[0].RawMatrix().Data, randomMatrices(rng, 1, d)[0].RawMatrix().Data, nil}
	hv := [][]float64{make([]float64, d*d), make([]float64, d*d), nil}
	e.GradientDir(hv, dir)
	gradAt := func(s float64) [][]float64 {
		moved := make([]*mat.Dense, 3)
		for b := range moved {
			moved[b] = mat.DenseCopyOf(xs[b])
			if dir[b] != nil {
				moved[b].Add(moved[b], mat.NewDense(d, d, scaled(dir[b], s)))
			}
		}
		set(moved)
		e.Value(weights)
		g := [][]float64{make([]float64, d*d), make([]float64, d*d), nil}
		e.Gradient(g)
		return g
	}
	up, down := gradAt(h), gradAt(-h)
	for b := 0; b < 2; b++ {
		for k := range hv[b] {
			if fd := (up[b][k] - down[b][k]) / (2 * h); math.Abs(hv[b][k]-fd) > 1e-7*math.Max(1, math.Abs(fd)) {
				t.Errorf("the gradient's derivative [%d][%d] = %.10g, central difference %.10g", b, k, hv[b][k], fd)
			}
		}
	}
}

func scaled(x []float64, c float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = c * v
	}
	return out
}

// TestCompileRefuses: an empty word, a letter of no base and a term of no
// word are errors, not panics.
func TestCompileRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		words [][]Letter
		terms []Term
	}{
		"empty word": {words: [][]Letter{{}}},
		"bad base":   {words: [][]Letter{{{Base: 2}}}},
		"bad word":   {words: [][]Letter{{{Base: 0}}}, terms: []Term{{Coef: 1, Words: []int{1}}}},
	} {
		if _, err := Compile(2, nil, c.words, c.terms); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
