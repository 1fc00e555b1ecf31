package train

import (
	"flag"
	"fmt"
	"math"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"gonum.org/v1/gonum/mat"
)

// mcFull runs TestPopulationMonteCarlo with 10⁷ sequences on every
// combination of its factors (72 problems, hours on two cores):
// go test ./train -run PopulationMonteCarlo -mc.full -timeout 24h.
var mcFull = flag.Bool("mc.full", false, "TestPopulationMonteCarlo: 10⁷ sequences on every combination of the factors")

// mcCase is a problem of TestPopulationMonteCarlo: a layer under a law
// with a fraction c of in-context tasks, K fixed tasks, a task covariance
// Ω ≠ I (omega: non-diagonal, from random eigenvectors) and label noise σ².
type mcCase struct {
	layer   flow.Layer
	kind    flow.Kind
	r, d, n int
	icl     float64
	k       int
	omega   bool
	noise   float64
}

func (c mcCase) String() string {
	return fmt.Sprintf("%v/%v/R=%d/D=%d/N=%d/c=%g/K=%d/Ω=%v/σ²=%g", c.layer, c.kind, c.r, c.d, c.n, c.icl, c.k, c.omega, c.noise)
}

// mcCases are the problems of the default test (10⁶ sequences each): every
// layer, D = 3 and 4, N = 5 and 31, c = 0 and 0.5, K = 1, 3 and 1000, Ω ≠ I
// and σ² > 0 each appear; -mc.full takes every combination of the layers
// and models (merged, separate R = 1 and 2); D = 3 and 4; N = 5 and 31;
// c = 0, 0.5 and 1; K = 1, 3 and 1000; Ω = I or not; σ² = 0 or 0.2.
var mcCases = []mcCase{
	{flow.FullLayer, flow.Merged, 0, 3, 5, 0.5, 3, true, 0.3},
	{flow.FullLayer, flow.Separate, 2, 4, 5, 0, 1000, false, 0.2},
	{flow.LabelKeyLayer, flow.Separate, 1, 4, 5, 0.5, 1, true, 0.1},
	{flow.ReducedLayer, flow.Merged, 0, 3, 31, 0, 1000, true, 0.2},
}

func allMCCases() []mcCase {
	var out []mcCase
	for _, layer := range flow.Layers() {
		for _, kr := range [][2]int{{int(flow.Merged), 0}, {int(flow.Separate), 1}, {int(flow.Separate), 2}} {
			for _, d := range []int{3, 4} {
				for _, n := range []int{5, 31} {
					for _, icl := range []float64{0, 0.5, 1} {
						for _, k := range []int{1, 3, 1000} {
							for _, omega := range []bool{false, true} {
								for _, noise := range []float64{0, 0.2} {
									out = append(out, mcCase{layer, flow.Kind(kr[0]), kr[1], d, n, icl, k, omega, noise})
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// TestPopulationMonteCarlo checks the exact population moments of the
// full layer (law.Data.Moments, docs/math.md "The full layer") against
// sampled sequences, independently of the moment formulas: every entry of
// E[zzᵀ] and E[y_q z] and E[y_q²] from the features of the sequences, and
// at five random weights (every block nonzero) the training loss and each
// entry of its gradient, from the attention layer evaluated column by
// column (tokenLayer), and the in-context, in-weight and in-distribution
// test losses. Each sample mean must lie within 4.5 standard errors of the
// exact value. The data are seeded, so the outcome is fixed; with wrong
// moments (the ν₂ term of (F1) left out) entries of E[zzᵀ] are 50
// standard errors off, and TestPopulationMonteCarloCatchesNoise shows the
// noise term caught.
func TestPopulationMonteCarlo(t *testing.T) {
	cases, n := mcCases, 1_000_000
	if *mcFull {
		cases, n = allMCCases(), 10_000_000
	}
	for i, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			worst := checkMonteCarlo(t, c, n, uint64(20+i))
			t.Logf("largest deviation: %.2f standard errors (%s)", worst.z, worst.name)
		})
	}
}

// mcWorst is the largest deviation found, in standard errors.
type mcWorst struct {
	z    float64
	name string
}

// check records a deviation and, unless t is nil, fails beyond 4.5
// standard errors.
func (w *mcWorst) check(t *testing.T, name string, mean, se, exact float64) {
	z := math.Abs(mean-exact) / se
	if !(se > 0) {
		z = math.Abs(mean - exact)
	}
	if z > w.z || math.IsNaN(z) {
		w.z, w.name = z, name
	}
	if !(z <= 4.5) && t != nil {
		t.Errorf("%s: Monte Carlo %.8g ± %.2g, exact %.8g: %.1f standard errors", name, mean, se, exact, z)
	}
}

func checkMonteCarlo(t *testing.T, c mcCase, n int, seed uint64) mcWorst {
	data := mcData(t, c, c.noise, seed)
	m := Model{Model: flow.Model{Kind: c.kind, H: 2, R: c.r, Layer: c.layer, Tau: 1}, D: c.d}
	mc := newMCSampler(data, m, n, seed)
	var worst mcWorst
	for _, set := range []law.Sequences{law.Training, law.InContextTest, law.InWeightTest, law.InDistributionTest} {
		mo, err := data.Moments(c.layer.Pairs(data.Dim()), set, false)
		if err != nil {
			t.Fatal(err)
		}
		acc := mc.run(set)
		mc.compare(t, &worst, set, acc, mo)
	}
	return worst
}

// mcData is the law of an mcCase with label noise σ² = noise.
func mcData(t testing.TB, c mcCase, noise float64, seed uint64) *law.Data {
	t.Helper()
	lam := []float64{0.5, 0.3, 0.2, 0.1}[:c.d]
	data, err := law.NewData(lam, law.RandomRotation(c.d, seed), law.Lengths{N: c.n})
	if err != nil {
		t.Fatal(err)
	}
	tasks := law.Tasks{ICL: c.icl, Fixed: law.FixedTasks(c.d, c.k, seed), Noise: noise}
	if c.omega { // Ω = Q diag(0.5 … 2) Qᵀ, Q random: non-diagonal in Λ's eigenbasis too
		q := law.RandomRotation(c.d, seed+7)
		e := make([]float64, c.d)
		for i := range e {
			e[i] = 0.5 + 1.5*float64(i)/float64(c.d-1)
		}
		var qe, omega mat.Dense
		qe.Mul(q, mat.NewDiagDense(c.d, e))
		omega.Mul(&qe, q.T())
		tasks.Cov = &omega
	}
	if data, err = data.WithTasks(tasks); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPopulationMonteCarloCatchesNoise: the check fails on a deliberately
// wrong moment, the label noise left out of the exact moments of a noisy
// law (σ² = 0.3; 10⁵ sequences suffice).
func TestPopulationMonteCarloCatchesNoise(t *testing.T) {
	c := mcCase{flow.FullLayer, flow.Merged, 0, 3, 5, 0.5, 3, true, 0.3}
	mc := newMCSampler(mcData(t, c, c.noise, 30), Model{Model: flow.Model{Kind: c.kind, H: 2, Layer: c.layer, Tau: 1}, D: c.d}, 100_000, 30)
	wrong, err := mcData(t, c, 0, 30).Moments(c.layer.Pairs(c.d), law.Training, false)
	if err != nil {
		t.Fatal(err)
	}
	var worst mcWorst
	mc.compare(nil, &worst, law.Training, mc.run(law.Training), wrong)
	if worst.z < 20 {
		t.Errorf("moments without the noise term are only %.1f standard errors off (%s); the check would not catch them", worst.z, worst.name)
	}
	t.Logf("without the noise term: %.0f standard errors (%s)", worst.z, worst.name)
}

// withLawK is withLaw with K fixed tasks.
func withLawK(t testing.TB, data *law.Data, l law.Lengths, icl float64, k int, seed uint64) *law.Data {
	t.Helper()
	data, err := data.WithLengths(l)
	if err == nil {
		data, err = data.WithTasks(law.Tasks{ICL: icl, Fixed: law.FixedTasks(data.Dim(), k, seed)})
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// mcSampler draws the sequences of TestPopulationMonteCarlo and sums, per
// sequence, the quantities whose means are checked: the features'
// products (training set), and at each weight the loss and its gradient
// from the column-by-column layer.
type mcSampler struct {
	smp     *sampler
	fm      *featureMap
	coef    *flow.Coefficients
	m       Model
	n, f, l int
	weights [][]float64
	blocks  []*flow.Blocks
}

func newMCSampler(data *law.Data, m Model, n int, seed uint64) *mcSampler {
	coef := flow.NewCoefficients(m.D, m.flowModel())
	mc := &mcSampler{smp: newSampler(data, seed), fm: newFeatureMap(coef, m.D), coef: coef, m: m,
		n: n, f: coef.Features(), l: m.Len()}
	for k := 0; k < 5; k++ {
		w := randomWeights(mc.l, 0.5, seed+uint64(k))
		mc.weights = append(mc.weights, w)
		b := coef.NewBlocks()
		coef.Expand(b, w)
		mc.blocks = append(mc.blocks, b)
	}
	return mc
}

// quantities returns the number of summed quantities of set: the upper
// triangle of zzᵀ, y z and y² (training set), then per weight the loss
// and (training set) its gradient.
func (mc *mcSampler) quantities(set law.Sequences) int {
	if set != law.Training {
		return len(mc.weights)
	}
	return mc.f*(mc.f+1)/2 + mc.f + 1 + len(mc.weights)*(1+mc.l)
}

// mcSums are the sums of the quantities and of their squares.
type mcSums struct{ sum, sum2 []float64 }

// run draws the n sequences of set and sums their quantities, block by
// block in a fixed order.
func (mc *mcSampler) run(set law.Sequences) mcSums {
	q := mc.quantities(set)
	seqSet := map[law.Sequences]seqSet{law.Training: setTrain, law.InContextTest: setICL, law.InWeightTest: setIWL, law.InDistributionTest: setIDG}[set]
	nw := workers()
	total := mcSums{make([]float64, q), make([]float64, q)}
	parts := make([]mcSums, nw)
	scratch := make([]*mcScratch, nw)
	for k := range parts {
		parts[k] = mcSums{make([]float64, q), make([]float64, q)}
		scratch[k] = mc.newScratch(q)
	}
	compute := func(k, b int) {
		clear(parts[k].sum)
		clear(parts[k].sum2)
		lo, hi := blockRange(b, mc.n)
		sum, sum2 := parts[k].sum, parts[k].sum2
		for mu := lo; mu < hi; mu++ {
			x := mc.sequence(scratch[k], seqSet, mu)
			sum, sum2 := sum[:len(x)], sum2[:len(x)]
			for i, v := range x {
				sum[i] += v
				sum2[i] += v * v
			}
		}
	}
	reduce := func(k, _ int) {
		for i := range total.sum {
			total.sum[i] += parts[k].sum[i]
			total.sum2[i] += parts[k].sum2[i]
		}
	}
	forBlocksOrdered(numBlocks(mc.n), nw, compute, reduce)
	return total
}

// mcScratch is one goroutine's.
type mcScratch struct {
	smp       *sampler
	seq       *sequence
	layer     *tokenLayer
	acc, u, x []float64
	z         []float64
	g         *flow.Blocks
	grad      []float64
}

func (mc *mcSampler) newScratch(q int) *mcScratch {
	sh := mc.smp.shape
	return &mcScratch{smp: mc.smp.clone(), seq: newSequence(sh, mc.m.D), layer: newTokenLayer(&mc.m, sh.tokens),
		acc: make([]float64, mc.fm.du), u: make([]float64, mc.fm.du), x: make([]float64, q), z: make([]float64, mc.f),
		g: mc.coef.NewBlocks(), grad: make([]float64, mc.l)}
}

// sequence draws sequence mu of set and returns its quantities.
func (mc *mcSampler) sequence(s *mcScratch, set seqSet, mu int) []float64 {
	s.smp.draw(s.seq, set, mu)
	sh := mc.smp.shape
	x := s.x[:0]
	if set == setTrain {
		mc.fm.prefixes(s.seq, sh.first, sh.last, s.acc, s.u, func(u, xq []float64, y float64) {
			z := s.z[:0]
			for _, up := range u {
				for _, xc := range xq {
					z = append(z, up*xc)
				}
			}
			for i, zi := range z {
				for _, zj := range z[i:] {
					x = append(x, zi*zj)
				}
			}
			for _, zi := range z {
				x = append(x, y*zi)
			}
			x = append(x, y*y)
		})
	}
	for _, b := range mc.blocks {
		var g *flow.Blocks
		if set == setTrain {
			g = s.g
			g.Zero()
		}
		x = append(x, s.layer.prefix(b, g, s.seq, sh.last, 1))
		if g != nil {
			mc.coef.Pack(s.grad, g)
			x = append(x, s.grad...)
		}
	}
	return x
}

// compare checks the means of the sums against the exact moments mo.
func (mc *mcSampler) compare(t *testing.T, worst *mcWorst, seqs law.Sequences, acc mcSums, mo *law.Moments) {
	set := map[law.Sequences]string{law.Training: "train", law.InContextTest: "icl", law.InWeightTest: "iwl", law.InDistributionTest: "idg"}[seqs]
	n := float64(mc.n)
	k := 0
	next := func(name string, exact float64) {
		mean := acc.sum[k] / n
		se := math.Sqrt(max(acc.sum2[k]/n-mean*mean, 0) / (n - 1))
		worst.check(t, set+": "+name, mean, se, exact)
		k++
	}
	if set == "train" {
		for i := 0; i < mc.f; i++ {
			for j := i; j < mc.f; j++ {
				next(fmt.Sprintf("E[z_%d z_%d]", i, j), mo.ZZ[i*mc.f+j])
			}
		}
		for i := 0; i < mc.f; i++ {
			next(fmt.Sprintf("E[y z_%d]", i), mo.YZ[i])
		}
		next("E[y²]", mo.YY)
	}
	r, dc, grad := make([]float64, mc.f), make([]float64, mc.f), make([]float64, mc.l)
	for w, theta := range mc.weights {
		mc.coef.At(theta)
		next(fmt.Sprintf("loss at weights %d", w), mo.Residual(r, mc.coef.Values()))
		if set != "train" {
			continue
		}
		for i, ri := range r {
			dc[i] = -2 * ri
		}
		mc.coef.Pullback(grad, dc)
		for i, g := range grad {
			next(fmt.Sprintf("∂L/∂θ_%d at weights %d", i, w), g)
		}
	}
}
