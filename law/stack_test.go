package law

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// stackValue evaluates a StackLoss at the whitened maps a[ℓ] and task
// moment m, with noise σ², by multiplying each word out: the reference
// the tests hold the compiled terms against.
func stackValue(sl *StackLoss, a []*mat.Dense, m *mat.Dense, noise float64) float64 {
	d, _ := m.Dims()
	tr := make([]float64, len(sl.Words))
	for i, w := range sl.Words {
		p := eye(d)
		for _, c := range w {
			var x mat.Matrix = m
			if c != TaskLetter {
				l, t := c.Layer()
				x = a[l]
				if t {
					x = a[l].T()
				}
			}
			var q mat.Dense
			q.Mul(p, x)
			p = &q
		}
		tr[i] = mat.Trace(p)
	}
	sum := func(terms []StackTerm) float64 {
		var s float64
		for _, t := range terms {
			v := t.Coef
			for _, w := range t.Words {
				v *= tr[w]
			}
			s += v
		}
		return s
	}
	return sum(sl.Signal) + noise*sum(sl.Noise) + noise
}

func eye(d int) *mat.Dense {
	e := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		e.Set(i, i, 1)
	}
	return e
}

// TestStackLossScalar: at D = 1 the white Wishart factor is s = χ²_n/n,
// with E[s^k] = Π_{i<k} (n + 2i)/n (the moments of the chi-square law),
// so the loss E[Π_ℓ(1 − a_ℓs)² m] + σ²E[g(s)² s]/n + σ², with
// g = Σ_ℓ Π_{j>ℓ}(1 − a_j s) a_ℓ, is a polynomial in s averaged exactly.
// The compiled terms must give it to rounding, for every depth, tied or
// not, and for a fixed length and the next-token loss.
func TestStackLossScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, lengths := range []Lengths{{N: 3}, {N: 17}, {NTPMax: 5}} {
		data, err := NewData([]float64{1}, nil, lengths)
		if err != nil {
			t.Fatal(err)
		}
		for layers := 1; layers <= MaxStackLayers; layers++ {
			for _, tied := range []bool{false, true} {
				sl, err := data.StackLoss(layers, tied)
				if err != nil {
					t.Fatal(err)
				}
				as := make([]float64, layers)
				a := make([]*mat.Dense, layers)
				for l := range as {
					as[l] = rng.NormFloat64()
					if tied {
						as[l] = as[0]
					}
					a[l] = mat.NewDense(1, 1, []float64{as[l]})
				}
				m, noise := 0.5+rng.Float64(), 0.3
				got := stackValue(sl, a, mat.NewDense(1, 1, []float64{m}), noise)
				want := scalarStackLoss(as, m, noise, lengths)
				if math.Abs(got-want) > 1e-11*math.Max(1, math.Abs(want)) {
					t.Errorf("%+v, L = %d, tied %v: loss %.15g, want %.15g", lengths, layers, tied, got, want)
				}
			}
		}
	}
}

// scalarStackLoss is the D = 1 loss from the chi-square moments.
func scalarStackLoss(a []float64, m, noise float64, l Lengths) float64 {
	ns := []int{l.N}
	if l.NTPMax > 0 {
		ns = nil
		for n := 1; n <= l.NTPMax; n++ {
			ns = append(ns, n)
		}
	}
	var total float64
	for _, n := range ns {
		moment := func(k int) float64 {
			v := 1.0
			for i := 0; i < k; i++ {
				v *= float64(n+2*i) / float64(n)
			}
			return v
		}
		expect := func(p []float64) float64 {
			var s float64
			for k, c := range p {
				s += c * moment(k)
			}
			return s
		}
		p := []float64{1} // Π (1 − a_ℓ s)
		g := []float64{0} // Σ_ℓ Π_{j>ℓ}(1 − a_j s) a_ℓ, built from the top layer down
		for l := len(a) - 1; l >= 0; l-- {
			g = polyAdd(g, polyScale(p, a[l]))
			p = polyMul(p, []float64{1, -a[l]})
		}
		loss := m * expect(polyMul(p, p))
		loss += noise / float64(n) * expect(polyMul([]float64{0, 1}, polyMul(g, g)))
		total += loss + noise
	}
	return total / float64(len(ns))
}

func polyMul(p, q []float64) []float64 {
	out := make([]float64, len(p)+len(q)-1)
	for i, x := range p {
		for j, y := range q {
			out[i+j] += x * y
		}
	}
	return out
}

func polyAdd(p, q []float64) []float64 {
	out := make([]float64, max(len(p), len(q)))
	for i, x := range p {
		out[i] += x
	}
	for i, x := range q {
		out[i] += x
	}
	return out
}

func polyScale(p []float64, c float64) []float64 {
	out := make([]float64, len(p))
	for i, x := range p {
		out[i] = c * x
	}
	return out
}

// TestStackLossLayerOne: one layer's loss is the reduced layer's under a
// task law (docs/math.md, "The reduced layer under a task law"), in
// whitened letters: tr M̃ − 2 tr(ÃM̃) + (1 + 1/N) tr(ÃᵀÃM̃)
// + (tr M̃ + σ²) tr(ÃᵀÃ)/N + σ².
func TestStackLossLayerOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d, n = 4, 7
	data, err := NewData([]float64{4, 3, 2, 1}, nil, Lengths{N: n})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := data.StackLoss(1, false)
	if err != nil {
		t.Fatal(err)
	}
	a, m := randomDense(rng, d), randomDense(rng, d)
	m.Mul(m, m.T()) // a task second moment: symmetric, positive
	const noise = 0.2
	var ata, atam, am mat.Dense
	ata.Mul(a.T(), a)
	atam.Mul(&ata, m)
	am.Mul(a, m)
	want := mat.Trace(m) - 2*mat.Trace(&am) + (1+1.0/n)*mat.Trace(&atam) + (mat.Trace(m)+noise)*mat.Trace(&ata)/n + noise
	if got := stackValue(sl, []*mat.Dense{a}, m, noise); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("loss %.15g, want %.15g", got, want)
	}
}

func randomDense(rng *rand.Rand, d int) *mat.Dense {
	x := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64()/math.Sqrt(float64(d)))
		}
	}
	return x
}

// TestStackLossMonteCarlo holds the compiled loss against the average over
// sampled white Wishart matrices Ŵ = GGᵀ/n of the loss written as
// products: tr(P̃ᵀP̃M̃) + σ² tr(G̃ᵀG̃Ŵ)/n + σ², with P̃ and G̃ formed
// layer by layer (the recursion of gradient descent, no Wick pairing),
// within 4.5 standard errors, at D = 3, n = 4, two and three layers, tied
// and untied. Leaving out the pairings of order 1/n² moves the compiled
// loss by tens of standard errors (checked below), so the test sees a
// wrong term.
func TestStackLossMonteCarlo(t *testing.T) {
	const d, n, draws = 3, 4, 200_000
	const noise = 0.3
	data, err := NewData([]float64{1, 1, 1}, nil, Lengths{N: n})
	if err != nil {
		t.Fatal(err)
	}
	for _, layers := range []int{2, 3} {
		for _, tied := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(uint64(layers), 9))
			a := make([]*mat.Dense, layers)
			for l := range a {
				a[l] = randomDense(rng, d)
				a[l].Scale(0.6, a[l])
				if tied {
					a[l] = a[0]
				}
			}
			m := randomDense(rng, d)
			m.Mul(m, m.T())
			sl, err := data.StackLoss(layers, tied)
			if err != nil {
				t.Fatal(err)
			}
			exact := stackValue(sl, a, m, noise)
			mean, se := sampledStackLoss(rng, a, m, noise, n, draws)
			if z := (exact - mean) / se; math.Abs(z) > 4.5 {
				t.Errorf("L = %d, tied %v: compiled %.6f, sampled %.6f ± %.6f (%.1f SE)", layers, tied, exact, mean, se, z)
			}
			dropped := dropHighPowers(data, layers, tied)
			if z := (stackValue(dropped, a, m, noise) - mean) / se; math.Abs(z) < 10 {
				t.Errorf("L = %d, tied %v: the loss without its 1/n² pairings is only %.1f SE off", layers, tied, z)
			}
		}
	}
}

// dropHighPowers is the stack's loss with every pairing of order 1/n² or
// smaller left out: a deliberately wrong moment.
func dropHighPowers(data *Data, layers int, tied bool) *StackLoss {
	c := compiledStack(layers, tied)
	n := float64(data.lengths.N)
	bind := func(terms []stackCounts) []StackTerm {
		var out []StackTerm
		for _, t := range terms {
			coef := float64(t.counts[0])
			if len(t.counts) > 1 {
				coef += float64(t.counts[1]) / n
			}
			out = append(out, StackTerm{Coef: coef, Words: t.words})
		}
		return out
	}
	return &StackLoss{Layers: layers, Tied: tied, Words: c.words, Signal: bind(c.signal), Noise: bind(c.noise)}
}

// sampledStackLoss is the mean and standard error over draws Wishart
// matrices of the loss multiplied out layer by layer.
func sampledStackLoss(rng *rand.Rand, a []*mat.Dense, m *mat.Dense, noise float64, n, draws int) (mean, se float64) {
	d, _ := m.Dims()
	g := mat.NewDense(d, n, nil)
	var w, p, gg, step, tmp mat.Dense
	var sum, sum2 float64
	for i := 0; i < draws; i++ {
		for r := 0; r < d; r++ {
			for c := 0; c < n; c++ {
				g.Set(r, c, rng.NormFloat64())
			}
		}
		w.Mul(g, g.T())
		w.Scale(1/float64(n), &w)
		p.CloneFrom(eye(d))
		gg.Reset()
		gg.ReuseAs(d, d)
		for l := range a { // P ← (I − A_ℓŴ)P, G ← (I − A_ℓŴ)G + A_ℓ
			step.Mul(a[l], &w)
			tmp.Mul(&step, &p)
			p.Sub(&p, &tmp)
			tmp.Mul(&step, &gg)
			gg.Sub(&gg, &tmp)
			gg.Add(&gg, a[l])
		}
		var ptp, signal, gtg, nz mat.Dense
		ptp.Mul(p.T(), &p)
		signal.Mul(&ptp, m)
		gtg.Mul(gg.T(), &gg)
		nz.Mul(&gtg, &w)
		x := mat.Trace(&signal) + noise*mat.Trace(&nz)/float64(n) + noise
		sum += x
		sum2 += x * x
	}
	mean = sum / float64(draws)
	return mean, math.Sqrt((sum2/float64(draws) - mean*mean) / float64(draws))
}
