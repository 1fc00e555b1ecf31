package flow

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Data is the in-context linear regression task: tokens x ~ N(0, Λ) in R^D
// with Λ = Σ_d λ_d e_d e_dᵀ, tasks w ~ N(0, I), and the context length
// entering only through ν = E[1/N] (docs/math.md, "Conventions").
type Data struct {
	lambda []float64  // eigenvalues λ_1 ≥ … ≥ λ_D > 0
	vecs   *mat.Dense // orthonormal eigenvectors e_d as columns (D×D)
	nu     float64    // E[1/N] ∈ (0, 1]
	a      []float64  // eigenvalues of A = E[Λ̂²]
	trace  float64

	lengths Lengths // the law of the context length (law.go)
	nu2     float64 // E[1/N²]; NaN when only ν is known
	tasks   Tasks   // the law of the task vector
}

// Data is immutable: the accessors return copies.

// Lambda returns the eigenvalues λ_1 ≥ … ≥ λ_D > 0 of Λ.
func (d *Data) Lambda() []float64 { return append([]float64(nil), d.lambda...) }

// Vecs returns the orthonormal eigenvectors e_d as the columns of a D×D
// matrix.
func (d *Data) Vecs() *mat.Dense { return mat.DenseCopyOf(d.vecs) }

// Nu returns ν = E[1/N] ∈ (0, 1].
func (d *Data) Nu() float64 { return d.nu }

// NewData returns the task with eigenvalues lambda, eigenvectors the columns
// of vecs (nil means the identity) and ν = nu, every sequence in-context
// (w ~ N(0, I)). The eigenpairs are sorted by decreasing eigenvalue; equal
// eigenvalues keep their given order. WithLengths gives the context lengths
// themselves and WithTasks another law of the task vector.
func NewData(lambda []float64, vecs *mat.Dense, nu float64) (*Data, error) {
	d := len(lambda)
	if d < 1 {
		return nil, errors.New("flow: D = len(lambda) = 0, want D ≥ 1")
	}
	for i, l := range lambda {
		if !(l > 0) || math.IsInf(l, 0) {
			return nil, fmt.Errorf("flow: lambda[%d] = %g, want a finite eigenvalue > 0", i, l)
		}
	}
	if !(nu > 0 && nu <= 1) {
		return nil, fmt.Errorf("flow: nu = E[1/N] = %g, want a value in (0, 1]", nu)
	}
	if vecs == nil {
		vecs = identity(d)
	}
	if r, c := vecs.Dims(); r != d || c != d {
		return nil, fmt.Errorf("flow: eigenvectors are %d×%d, want %d×%d", r, c, d, d)
	}
	var vtv mat.Dense
	vtv.Mul(vecs.T(), vecs)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if v := vtv.At(i, j); !(math.Abs(v-want) <= 1e-10) {
				return nil, fmt.Errorf("flow: eigenvectors are not orthonormal: (VᵀV)[%d][%d] = %.3g, want %g within 1e-10", i, j, v, want)
			}
		}
	}
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return lambda[order[i]] > lambda[order[j]] })
	data := &Data{lambda: make([]float64, d), vecs: mat.NewDense(d, d, nil), nu: nu,
		lengths: Lengths{Nu: nu}, nu2: math.NaN(), tasks: Tasks{ICL: 1}}
	for k, i := range order {
		data.lambda[k] = lambda[i]
		for r := 0; r < d; r++ {
			data.vecs.Set(r, k, vecs.At(r, i))
		}
	}
	data.init()
	return data, nil
}

// NewDataCovariance returns the task with the full covariance matrix cov,
// which must be symmetric to 1e-12 relative and positive definite; it is
// diagonalized with gonum's symmetric eigensolver.
func NewDataCovariance(cov *mat.Dense, nu float64) (*Data, error) {
	r, c := cov.Dims()
	if r != c || r == 0 {
		return nil, fmt.Errorf("flow: covariance is %d×%d, want a square matrix with D ≥ 1", r, c)
	}
	scale := mat.Norm(cov, math.Inf(1))
	sym := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			a, b := cov.At(i, j), cov.At(j, i)
			if math.IsNaN(a) || math.IsInf(a, 0) {
				return nil, fmt.Errorf("flow: covariance[%d][%d] = %g is not finite", i, j, a)
			}
			if math.Abs(a-b) > 1e-12*scale {
				return nil, fmt.Errorf("flow: covariance is not symmetric: [%d][%d] = %g, [%d][%d] = %g", i, j, a, j, i, b)
			}
			sym.SetSym(i, j, 0.5*(a+b))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, errors.New("flow: eigendecomposition of the covariance failed")
	}
	vals := eig.Values(nil)
	for i, v := range vals {
		if !(v > 0) {
			return nil, fmt.Errorf("flow: covariance is not positive definite: eigenvalue %d is %g", i, v)
		}
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	return NewData(vals, &vecs, nu)
}

func (d *Data) init() {
	d.trace = 0
	for _, l := range d.lambda {
		d.trace += l
	}
	d.a = make([]float64, len(d.lambda))
	for i, l := range d.lambda {
		d.a[i] = l * l * (1 + d.nu*(1+d.trace/l))
	}
}

// Dim returns D.
func (d *Data) Dim() int { return len(d.lambda) }

// Trace returns tr(Λ).
func (d *Data) Trace() float64 { return d.trace }

// AEigenvalues returns a_d = λ_d²(1 + ν(1 + tr(Λ)/λ_d)), the eigenvalues of
// A = E[Λ̂²] (paper eq. def-ad with 1/N → ν).
func (d *Data) AEigenvalues() []float64 { return append([]float64(nil), d.a...) }

// MapEigenvalues returns λ_d/a_d, the eigenvalues of the global minimum
// M* = A⁻¹Λ; the fixed point M(S) keeps those of d ∈ S (docs/math.md
// "Fixed points"). A head that learns e_d alone sits at v = (λ_d/a_d)^{1/3}.
func (d *Data) MapEigenvalues() []float64 {
	out := make([]float64, len(d.lambda))
	for i, l := range d.lambda {
		out[i] = l / d.a[i]
	}
	return out
}

// Gains returns λ_d³/a_d, the loss removed by learning e_d:
// L(S) = tr(Λ) − Σ_{d∈S} λ_d³/a_d (paper eq. attnS-loss-MSm).
func (d *Data) Gains() []float64 {
	out := make([]float64, len(d.lambda))
	for i, l := range d.lambda {
		out[i] = l * l * l / d.a[i]
	}
	return out
}

// Covariance returns Λ = V diag(λ) Vᵀ.
func (d *Data) Covariance() *mat.Dense { return d.fromEigen(d.lambda) }

// A returns E[Λ̂²] = Λ² + ν(Λ + tr(Λ)I)Λ (paper eq. ELambdaLambda-varylen).
func (d *Data) A() *mat.Dense { return d.fromEigen(d.a) }

// fromEigen returns V diag(w) Vᵀ.
func (d *Data) fromEigen(w []float64) *mat.Dense {
	n := d.Dim()
	out := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += d.vecs.At(i, k) * w[k] * d.vecs.At(j, k)
			}
			out.Set(i, j, s)
		}
	}
	return out
}

// EYZ returns E[y_q z] = vec(Λ²) ∈ R^{D²} (paper eq. Eyz; vec stacks
// columns).
func (d *Data) EYZ() []float64 {
	l2 := d.fromEigen(square(d.lambda))
	return vec(l2)
}

// EZZ returns E[z zᵀ] = Λ ⊗ A as an explicit D²×D² matrix (paper eq. Ezz).
// It is for inspection and tests; the flow never forms it.
func (d *Data) EZZ() *mat.Dense {
	n := d.Dim()
	lam, a := d.Covariance(), d.A()
	out := mat.NewDense(n*n, n*n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			lij := lam.At(i, j)
			for k := 0; k < n; k++ {
				for l := 0; l < n; l++ {
					out.Set(i*n+k, j*n+l, lij*a.At(k, l))
				}
			}
		}
	}
	return out
}

// LossOfMap returns the population loss of the effective map M (original
// basis): L(M) = tr(Λ) − 2 tr(ΛMΛ) + tr(Mᵀ A M Λ) (docs/math.md, "Population loss and flow").
func (d *Data) LossOfMap(m *mat.Dense) float64 {
	lam, a := d.Covariance(), d.A()
	var lm, lml, am, amt mat.Dense
	lm.Mul(lam, m)
	lml.Mul(&lm, lam)
	am.Mul(a, m)
	amt.Mul(m.T(), &am)
	var q mat.Dense
	q.Mul(&amt, lam)
	return d.trace - 2*mat.Trace(&lml) + mat.Trace(&q)
}

// LossOfSubset returns L(S) = tr(Λ) − Σ_{d∈S} λ_d³/a_d, the loss at the fixed
// point that has learned the eigenvectors in S (0-based indices into the
// sorted spectrum; paper eq. attnS-loss-MSm).
func (d *Data) LossOfSubset(s []int) float64 {
	l, g := d.trace, d.Gains()
	for _, i := range s {
		l -= g[i]
	}
	return l
}

// PlateauLevels returns L(M_m) for m = 0..D: the loss after learning the m
// leading eigenvectors (paper eq. attnS-loss-varylen). The last entry is the
// global minimum L* = tr(Λ) − Σ_d λ_d³/a_d.
func (d *Data) PlateauLevels() []float64 {
	out := make([]float64, d.Dim()+1)
	out[0] = d.trace
	for m, g := range d.Gains() {
		out[m+1] = out[m] - g
	}
	return out
}

// MinLoss returns the global minimum L*.
func (d *Data) MinLoss() float64 { lv := d.PlateauLevels(); return lv[len(lv)-1] }

// White returns D eigenvalues equal to c (Λ = cI).
func White(dim int, c float64) []float64 {
	out := make([]float64, dim)
	for i := range out {
		out[i] = c
	}
	return out
}

// PowerLaw returns λ_d ∝ d^−alpha, d = 1..dim, normalized to sum to trace
// (the paper's D = 8 and high-dimensional examples use alpha = 1, trace 1).
func PowerLaw(dim int, alpha, trace float64) []float64 {
	out := make([]float64, dim)
	var s float64
	for i := range out {
		out[i] = math.Pow(float64(i+1), -alpha)
		s += out[i]
	}
	for i := range out {
		out[i] *= trace / s
	}
	return out
}

// RandomRotation returns a D×D orthogonal matrix drawn from the Haar measure
// with the given seed: the Q factor of a Gaussian matrix with the signs of
// R's diagonal absorbed (Mezzadri, Notices AMS 54 (2007) 592).
func RandomRotation(dim int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	g := mat.NewDense(dim, dim, nil)
	for i := 0; i < dim; i++ {
		for j := 0; j < dim; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, r mat.Dense
	qr.QTo(&q)
	qr.RTo(&r)
	for j := 0; j < dim; j++ {
		if r.At(j, j) < 0 {
			for i := 0; i < dim; i++ {
				q.Set(i, j, -q.At(i, j))
			}
		}
	}
	return &q
}

// NuFixed returns ν = 1/N for a fixed context length N ≥ 1.
func NuFixed(n int) (float64, error) {
	if n < 1 {
		return 0, fmt.Errorf("flow: context length N = %d, want N ≥ 1", n)
	}
	return 1 / float64(n), nil
}

// NuNextToken returns ν = H_{Nmax}/Nmax, E[1/N] for N uniform on 1..Nmax: the
// next-token loss over all prefixes (paper eq. next-token-loss).
func NuNextToken(nmax int) (float64, error) {
	if nmax < 1 {
		return 0, fmt.Errorf("flow: Nmax = %d, want Nmax ≥ 1", nmax)
	}
	var h float64
	for n := nmax; n >= 1; n-- {
		h += 1 / float64(n)
	}
	return h / float64(nmax), nil
}

// NuDistribution returns ν = Σ_N p(N)/N for context lengths N = 1, 2, …,
// len(weights) with probabilities proportional to the non-negative weights.
func NuDistribution(weights []float64) (float64, error) {
	var sum, nu float64
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("flow: weights[%d] (for N = %d) = %g, want a finite value ≥ 0", i, i+1, w)
		}
		sum += w
		nu += w / float64(i+1)
	}
	if !(sum > 0) {
		return 0, errors.New("flow: context-length weights sum to 0, want a positive total")
	}
	return nu / sum, nil
}

func identity(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		m.Set(i, i, 1)
	}
	return m
}

func square(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * v
	}
	return out
}

// vec stacks the columns of m.
func vec(m *mat.Dense) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for j := 0; j < c; j++ {
		for i := 0; i < r; i++ {
			out = append(out, m.At(i, j))
		}
	}
	return out
}
