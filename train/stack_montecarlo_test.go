package train

import (
	"fmt"
	"math"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// stackCase is a problem of TestStackMonteCarlo: a stack of layers of a
// model (merged, or separate with rank R), tied or not, under a law with
// a fraction c of in-context tasks, K fixed tasks, Ω ≠ I (omega) and
// label noise σ².
type stackCase struct {
	layers  int
	kind    flow.Kind
	h, r    int
	tied    bool
	d, n    int
	icl     float64
	k       int
	omega   bool
	noise   float64
	weights int // random weights tried
}

func (c stackCase) String() string {
	return fmt.Sprintf("L=%d/%v/H=%d/R=%d/tied=%v/D=%d/N=%d/c=%g/K=%d/Ω=%v/σ²=%g", c.layers, c.kind, c.h, c.r, c.tied, c.d, c.n, c.icl, c.k, c.omega, c.noise)
}

// stackCases cover L = 2 and 3, merged and separate with R = 1 and 2,
// tied and untied, D = 3 and 4, N = 5 and 20, Ω ≠ I, σ² > 0, and in- and
// out-of-context tasks.
var stackCases = []stackCase{
	{2, flow.Merged, 2, 0, false, 3, 5, 0.5, 3, true, 0.2, 1},
	{3, flow.Separate, 3, 1, false, 4, 20, 1, 0, true, 0.1, 1},
	{2, flow.Separate, 2, 2, true, 4, 5, 0, 1000, false, 0.3, 1},
	{3, flow.Merged, 1, 0, true, 3, 20, 0.5, 1, true, 0.2, 1},
}

// TestStackMonteCarlo holds the exact population flow of a stack
// (flow's, from law.StackLoss) against sequences sampled and pushed
// through the layers token by token (stackTokens, which knows nothing of
// the moments): at random weights, the training loss and every entry of
// its gradient, and the in-context, in-weight and in-distribution test
// losses, each within 4.5 standard errors of the exact value at 10⁶
// sequences. The data are seeded, so the outcome is fixed.
// TestStackMonteCarloCatchesNoise shows a wrong moment caught.
func TestStackMonteCarlo(t *testing.T) {
	for i, c := range stackCases {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			data := mcData(t, mcCase{d: c.d, n: c.n, icl: c.icl, k: c.k, omega: c.omega}, c.noise, uint64(40+i))
			worst := checkStack(t, c, data, data, 1_000_000, uint64(40+i))
			t.Logf("largest deviation: %.2f standard errors (%s)", worst.z, worst.name)
		})
	}
}

// TestStackMonteCarloCatchesNoise: the exact flow of the same stack with
// the noise term left out (σ² = 0 in the exact law, 0.3 in the sampled
// one) is tens of standard errors off at 10⁵ sequences.
func TestStackMonteCarloCatchesNoise(t *testing.T) {
	c := stackCases[2]
	mc := mcCase{d: c.d, n: c.n, icl: c.icl, k: c.k, omega: c.omega}
	sampled, wrong := mcData(t, mc, c.noise, 41), mcData(t, mc, 0, 41)
	worst := checkStack(nil, c, sampled, wrong, 100_000, 41)
	if worst.z < 20 {
		t.Errorf("the flow without the noise term is only %.1f standard errors off (%s)", worst.z, worst.name)
	}
}

// checkStack samples n sequences of each set of the law sampled and
// compares their means with the exact flow under the law exact.
func checkStack(t *testing.T, c stackCase, sampled, exact *law.Data, n int, seed uint64) mcWorst {
	m := Model{Model: flow.Model{Kind: c.kind, H: c.h, R: c.r, Layers: c.layers, Tied: c.tied, Tau: 1}, D: c.d}
	s, err := flow.NewSystem(exact, m.Model)
	if err != nil {
		if t != nil {
			t.Fatal(err)
		}
		panic(err)
	}
	var worst mcWorst
	sets := []seqSet{setTrain, setICL, setIWL, setIDG}
	if !sampled.HasFixed() {
		sets = sets[:2]
	}
	thetas := make([][]float64, c.weights)
	for w := range thetas {
		thetas[w] = randomWeights(m.Len(), 0.6, seed+uint64(w))
	}
	for _, set := range sets {
		sums := sampleStack(sampled, m, thetas, set, n, seed)
		k := 0
		next := func(name string, exact float64) {
			mu := sums.sum[k] / float64(n)
			se := math.Sqrt(max(sums.sum2[k]/float64(n)-mu*mu, 0) / float64(n-1))
			worst.check(t, fmt.Sprintf("set %d: %s", set, name), mu, se, exact)
			k++
		}
		for w, theta := range thetas {
			if set != setTrain {
				icl, iwl, idg := s.TestLosses(theta)
				next(fmt.Sprintf("test loss at weights %d", w), map[seqSet]float64{setICL: icl, setIWL: iwl, setIDG: idg}[set])
				continue
			}
			next(fmt.Sprintf("loss at weights %d", w), s.Loss(theta))
			grad := make([]float64, len(theta)) // the flow −∇L/(2τ), in the original basis
			s.DerivEigen(grad, s.ToEigen(nil, theta))
			s.FromEigen(grad, grad)
			for i, g := range grad {
				next(fmt.Sprintf("∂L/∂θ_%d at weights %d", i, w), -2*g)
			}
		}
	}
	return worst
}

// sampleStack sums, for each of thetas, the loss and (training set) its
// gradient over n sequences of set, and their squares: each sequence
// drawn once for all the weights.
func sampleStack(data *law.Data, m Model, thetas [][]float64, set seqSet, n int, seed uint64) mcSums {
	smp := newSampler(data, seed)
	per := 1
	if set == setTrain {
		per += m.Len()
	}
	q := per * len(thetas)
	d, sets := m.D, m.HeadSets()
	as := make([][][]float64, len(thetas)) // A_ℓ = M_ℓᵀ of each layer, for each weights
	for w, theta := range thetas {
		maps := squares(sets, d)
		m.Maps(maps, theta, d)
		as[w] = make([][]float64, m.Depth())
		for l := range as[w] {
			as[w][l] = make([]float64, d*d)
			mp := maps[min(l, sets-1)]
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					as[w][l][i*d+j] = mp[j*d+i]
				}
			}
		}
	}
	nw := workers()
	total := mcSums{make([]float64, q), make([]float64, q)}
	type scratch struct {
		smp    *sampler
		seq    *sequence
		st     *stackTokens
		gm, gl [][]float64
		grad   []float64
		sums   mcSums
	}
	ws := make([]*scratch, nw)
	for k := range ws {
		s := &scratch{smp: smp.clone(), seq: newSequence(smp.shape, d), st: newStackTokens(d, m.Depth(), smp.shape.tokens),
			gm: squares(sets, d), grad: make([]float64, m.Len()), sums: mcSums{make([]float64, q), make([]float64, q)}}
		s.gl = make([][]float64, m.Depth())
		for l := range s.gl {
			s.gl[l] = s.gm[min(l, sets-1)]
		}
		ws[k] = s
	}
	add := func(sums mcSums, k int, x float64) {
		sums.sum[k] += x
		sums.sum2[k] += x * x
	}
	compute := func(k, b int) {
		s := ws[k]
		clear(s.sums.sum)
		clear(s.sums.sum2)
		lo, hi := blockRange(b, n)
		for mu := lo; mu < hi; mu++ {
			s.smp.draw(s.seq, set, mu)
			for w, theta := range thetas {
				if set != setTrain {
					add(s.sums, w, s.st.prefix(as[w], nil, s.seq, smp.shape.last, 1))
					continue
				}
				for _, g := range s.gm {
					clear(g)
				}
				add(s.sums, w*per, s.st.prefix(as[w], s.gl, s.seq, smp.shape.last, 1))
				clear(s.grad)
				m.MapsGradient(s.grad, theta, s.gm, d)
				for i, g := range s.grad {
					add(s.sums, w*per+1+i, g)
				}
			}
		}
	}
	reduce := func(k, _ int) {
		for i := range total.sum {
			total.sum[i] += ws[k].sums.sum[i]
			total.sum2[i] += ws[k].sums.sum2[i]
		}
	}
	forBlocksOrdered(numBlocks(n), nw, compute, reduce)
	return total
}
