package law

import (
	"fmt"
	"math"
)

// Operator is the quadratic form of the population loss in the
// coefficients c of the features z = u ⊗ x_q, L(c) = YY − 2cᵀYZ + cᵀZZc,
// as Moments is, but applied without forming ZZ (docs/math.md, "The full
// layer without its moment matrices"): ZZ·c contracts the coefficients
// with Λ, the task moments and the noise along the Wick pairings of
// (F1), in eigen coordinates, where Λ is diagonal. Memory and the cost of
// a product are O(D³) = O(F), against Moments' F² = O(D⁶) to hold ZZ.
//
// An Operator is not safe for concurrent use: it keeps scratch space.
type Operator struct {
	d, d1, nf int
	pairs     [][2]int
	lam       []float64 // λ (Λ is diagonal in eigen coordinates)
	nu, nu2   float64   // ν = E[1/n], ν₂ = E[1/n²] (0 for the reduced features)

	// The statistics of Σ̃ = [[Λ, u], [uᵀ, s]], u = Λw, s = wᵀΛw + σ², over
	// the task law (for independent context labels u = 0 and s the label
	// variance): e1 = E[u], es = E[s], es2 = E[s²], l2 = E[uuᵀ] (D×D),
	// l3 = E[s u].
	e1, l2, l3 []float64
	es, es2    float64

	yz   []float64
	yy   float64
	diag []float64 // the diagonal of ZZ, for Minimum's preconditioner

	y, g              []float64   // the coefficients Y and ZZ·c as G, both (D+1)²D (symmetric.go)
	alpha, kappa, rho []float64   // per query index (D)
	tb                [][]float64 // wishart's scratch (D), one per worker
	zc                []float64
	workers           int // goroutines that share MulVec (SetWorkers)
}

// Operator returns the population moments of the features z = u ⊗ x_q
// over the population set (Moments' arguments, in the eigenbasis of Λ) as
// an Operator. It accepts what Moments accepts.
func (d *Data) Operator(pairs [][2]int, set Sequences) (*Operator, error) {
	if err := d.checkFeatures(pairs, set); err != nil {
		return nil, err
	}
	n := d.Dim()
	lam := d.basisLambda(true)
	return newOperator(lam, n, d.nu, d.nu2, d.taskMoments(set, lam, true), pairs), nil
}

// newOperator builds the Operator from Λ (diagonal, D×D row-major) and
// the task moments. Its statistics come from the entries of E[Σ̃] and
// E[Σ̃ ⊗ Σ̃] of the dense path (taskStats: sigma, pair, sigmaW), taken at
// the O(D²) index patterns the contractions need, so that the two paths
// share every formula of the task law.
func newOperator(lam []float64, d int, nu, nu2 float64, m *TaskMoments, pairs [][2]int) *Operator {
	d1 := d + 1
	if math.IsNaN(nu2) {
		nu2 = 0 // only the reduced layer's features, whose q6 terms vanish
	}
	ts := &taskStats{d: d, d1: d1, lam: lam}
	lmu := mulVec(lam, m.Mean, d)
	lm := mulMat(lam, m.Second, d)
	lml := mulMat(lm, lam, d)
	lt := mulVec(lam, m.Third, d)
	o := &Operator{d: d, d1: d1, nf: len(pairs) * d, pairs: append([][2]int(nil), pairs...),
		lam: make([]float64, d), nu: nu, nu2: nu2,
		e1: make([]float64, d), l2: make([]float64, d*d), l3: make([]float64, d),
		y: make([]float64, d1*d1*d), g: make([]float64, d1*d1*d),
		alpha: make([]float64, d), kappa: make([]float64, d), rho: make([]float64, d)}
	o.SetWorkers(0)
	o.zc = make([]float64, o.nf)
	for i := 0; i < d; i++ {
		o.lam[i] = lam[i*d+i]
		o.e1[i] = ts.sigma(m, lmu, i, d)
		o.l3[i] = ts.pair(m, lmu, lml, lt, i, d, d, d)
		for k := 0; k < d; k++ {
			o.l2[i*d+k] = ts.pair(m, lmu, lml, lt, i, d, k, d)
		}
	}
	o.es = ts.sigma(m, lmu, d, d)
	o.es2 = ts.pair(m, lmu, lml, lt, d, d, d, d)
	o.yy = m.Quad + m.Noise
	o.yz, o.diag = make([]float64, o.nf), make([]float64, o.nf)
	w := &wick{taskStats: ts, nu: nu, nu2: nu2}
	for p, ab := range pairs {
		a, b := ab[0], ab[1]
		for f := 0; f < d; f++ {
			// (F2): λ_f E[Σ̃_ab w_f] + ν(Γ_bf (Λw̄)_a + Γ_af (Λw̄)_b + Γ_ab (Λw̄)_f).
			v := o.lam[f] * ts.sigmaW(m, lm, a, b, f)
			v += nu * (w.gamma(b, f)*at(lmu, a) + w.gamma(a, f)*at(lmu, b) + w.gamma(a, b)*lmu[f])
			o.yz[p*d+f] = v
			o.diag[p*d+f] = o.diagEntry(w, m, lmu, lml, lt, a, b, f)
		}
	}
	return o
}

// at returns v[i], or 0 for the label index i = len(v).
func at(v []float64, i int) float64 {
	if i == len(v) {
		return 0
	}
	return v[i]
}

// diagEntry is E[S_ab² x_qf²], the diagonal of (F1), entry by entry as
// the dense path forms it.
func (o *Operator) diagEntry(w *wick, m *TaskMoments, lmu, lml, lt []float64, a, b, f int) float64 {
	ts := w.taskStats
	pr := func(i, j, k, l int) float64 { return ts.pair(m, lmu, lml, lt, i, j, k, l) }
	v := (pr(a, b, a, b) + o.nu*(pr(a, a, b, b)+pr(a, b, b, a))) * o.lam[f]
	v += 2 * o.nu * ts.sigma(m, lmu, a, b) * w.q4(a, b, f, f)
	if o.nu2 != 0 && a < o.d && b < o.d {
		v += o.nu2 * w.q6(&[6]int{a, b, a, b, f, f})
	}
	return v
}

// Features returns the number F of features.
func (o *Operator) Features() int { return o.nf }

// YZ returns E[y z] (a view; do not change it).
func (o *Operator) YZ() []float64 { return o.yz }

// YY returns E[y²].
func (o *Operator) YY() float64 { return o.yy }

// Diagonal returns the diagonal of ZZ, E[z_k²] (a view; do not change it).
func (o *Operator) Diagonal() []float64 { return o.diag }

func (o *Operator) check(name string, c []float64) {
	if len(c) != o.nf {
		panic(fmt.Sprintf("law: Operator: len(%s) = %d, want F = %d features", name, len(c), o.nf))
	}
}

// Loss returns L(c) = YY − 2 cᵀYZ + cᵀ ZZ c.
func (o *Operator) Loss(c []float64) float64 { return o.Residual(nil, c) }

// Residual writes r = YZ − ZZ c, which is −½ ∂L/∂c, into r (unless nil)
// and returns L(c).
func (o *Operator) Residual(r, c []float64) float64 { return residual(o, o.zc, o.yz, o.yy, r, c) }
