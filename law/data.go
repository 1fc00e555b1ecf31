package law

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Data is the law of the sequences of in-context linear regression
// (docs/math.md, "Conventions" and "Task laws"): tokens x ~ N(0, Λ) in R^D
// with Λ = Σ_d λ_d e_d e_dᵀ, the context lengths (Lengths), the law of the
// task vector w (Tasks: by default every w ~ N(0, I)) and the label noise,
// y = wᵀx + ε with ε ~ N(0, σ²) (by default σ² = 0).
type Data struct {
	lambda []float64  // eigenvalues λ_1 ≥ … ≥ λ_D > 0
	vecs   *mat.Dense // orthonormal eigenvectors e_d as columns (D×D)
	nu     float64    // E[1/N] ∈ (0, 1]
	a      []float64  // eigenvalues of A = E[Λ̂²]
	trace  float64

	lengths Lengths // the law of the context length (lengths.go)
	nu2     float64 // E[1/N²]; NaN when only ν is known
	tasks   Tasks   // the law of the labels (tasks.go)
	// fixedEigen are the fixed tasks in eigen coordinates, Vᵀw.
	fixedEigen [][]float64
}

// Data is immutable: the accessors return copies.

// Lambda returns the eigenvalues λ_1 ≥ … ≥ λ_D > 0 of Λ.
func (d *Data) Lambda() []float64 { return append([]float64(nil), d.lambda...) }

// Vecs returns the orthonormal eigenvectors e_d as the columns of a D×D
// matrix.
func (d *Data) Vecs() *mat.Dense { return mat.DenseCopyOf(d.vecs) }

// NewData returns the law with eigenvalues lambda, eigenvectors the
// columns of vecs (nil means the identity) and the context lengths l,
// every sequence in-context (w ~ N(0, I)) and noiseless. The eigenpairs
// are sorted by decreasing eigenvalue; equal eigenvalues keep their given
// order. WithTasks gives another law of the task vector, WithNoise label
// noise.
func NewData(lambda []float64, vecs *mat.Dense, l Lengths) (*Data, error) {
	d := len(lambda)
	if d < 1 {
		return nil, errors.New("law: D = len(lambda) = 0, want D ≥ 1")
	}
	for i, x := range lambda {
		if !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("law: lambda[%d] = %g, want a finite eigenvalue > 0", i, x)
		}
	}
	if err := l.validate(); err != nil {
		return nil, err
	}
	if vecs == nil {
		vecs = identity(d)
	}
	if err := checkOrthonormal("eigenvectors", vecs, d); err != nil {
		return nil, err
	}
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return lambda[order[i]] > lambda[order[j]] })
	data := &Data{lambda: make([]float64, d), vecs: mat.NewDense(d, d, nil), lengths: l}
	data.nu, data.nu2 = l.moments()
	for k, i := range order {
		data.lambda[k] = lambda[i]
		for r := 0; r < d; r++ {
			data.vecs.Set(r, k, vecs.At(r, i))
		}
	}
	data.init()
	return data, nil
}

// checkOrthonormal checks that the d×d matrix v has orthonormal columns to
// 1e-10.
func checkOrthonormal(name string, v *mat.Dense, d int) error {
	if r, c := v.Dims(); r != d || c != d {
		return fmt.Errorf("law: %s are %d×%d, want %d×%d", name, r, c, d, d)
	}
	var vtv mat.Dense
	vtv.Mul(v.T(), v)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if x := vtv.At(i, j); !(math.Abs(x-want) <= 1e-10) {
				return fmt.Errorf("law: %s are not orthonormal: (VᵀV)[%d][%d] = %.3g, want %g within 1e-10", name, i, j, x, want)
			}
		}
	}
	return nil
}

// NewDataCovariance returns the law with the full token covariance matrix
// cov, which must be symmetric to 1e-12 relative and positive definite
// (it is diagonalized with gonum's symmetric eigensolver), and the context
// lengths l.
func NewDataCovariance(cov *mat.Dense, l Lengths) (*Data, error) {
	vals, vecs, err := eigenSym("covariance", cov)
	if err != nil {
		return nil, err
	}
	return NewData(vals, vecs, l)
}

// eigenSym returns the eigenvalues and eigenvectors of the symmetric
// positive definite matrix m, named name in errors.
func eigenSym(name string, cov *mat.Dense) ([]float64, *mat.Dense, error) {
	r, c := cov.Dims()
	if r != c || r == 0 {
		return nil, nil, fmt.Errorf("law: %s is %d×%d, want a square matrix with D ≥ 1", name, r, c)
	}
	scale := mat.Norm(cov, math.Inf(1))
	sym := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			a, b := cov.At(i, j), cov.At(j, i)
			if math.IsNaN(a) || math.IsInf(a, 0) {
				return nil, nil, fmt.Errorf("law: %s[%d][%d] = %g is not finite", name, i, j, a)
			}
			if math.Abs(a-b) > 1e-12*scale {
				return nil, nil, fmt.Errorf("law: %s is not symmetric: [%d][%d] = %g, [%d][%d] = %g", name, i, j, a, j, i, b)
			}
			sym.SetSym(i, j, 0.5*(a+b))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, nil, fmt.Errorf("law: eigendecomposition of the %s failed", name)
	}
	vals := eig.Values(nil)
	for i, v := range vals {
		if !(v > 0) {
			return nil, nil, fmt.Errorf("law: %s is not positive definite: eigenvalue %d is %g", name, i, v)
		}
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	return vals, &vecs, nil
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

// fromEigen returns V diag(w) Vᵀ in the law's eigenbasis V.
func (d *Data) fromEigen(w []float64) *mat.Dense { return eigenForm(d.vecs, w) }

// eigenForm returns V diag(w) Vᵀ.
func eigenForm(vecs *mat.Dense, w []float64) *mat.Dense {
	n := len(w)
	out := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += vecs.At(i, k) * w[k] * vecs.At(j, k)
			}
			out.Set(i, j, s)
		}
	}
	return out
}

// Covariance returns the covariance V diag(eigs) Vᵀ with eigenvalues eigs
// (each finite and > 0) and eigenvectors the columns of vecs (orthonormal
// to 1e-10; nil means the identity, and RandomRotation gives the random
// basis of -eigvecs random:SEED): Ω or Ω_test of Tasks as -task-eigs and
// -task-eigvecs give them, or a token covariance for NewDataCovariance.
func Covariance(eigs []float64, vecs *mat.Dense) (*mat.Dense, error) {
	d := len(eigs)
	if d < 1 {
		return nil, errors.New("law: Covariance: no eigenvalues, want D ≥ 1")
	}
	for i, x := range eigs {
		if !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("law: Covariance: eigs[%d] = %g, want a finite eigenvalue > 0", i, x)
		}
	}
	if vecs == nil {
		vecs = identity(d)
	}
	if err := checkOrthonormal("eigenvectors", vecs, d); err != nil {
		return nil, err
	}
	return eigenForm(vecs, eigs), nil
}

// EYZ returns E[y_q z] = vec(Λ²) ∈ R^{D²} (paper eq. Eyz; vec stacks
// columns).
func (d *Data) EYZ() []float64 { return d.VecFromEigen(square(d.lambda)) }

// VecFromEigen returns vec(V diag(w) Vᵀ) (columns stacked), the matrix
// with eigenvalues w in the law's eigenbasis V, in the order of the
// network on z's weights (paper eq. attnM-mlp).
func (d *Data) VecFromEigen(w []float64) []float64 { return vec(d.fromEigen(w)) }

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

// IsWhite reports whether Λ = cI: every eigenvalue equals the first.
func (d *Data) IsWhite() bool {
	for _, x := range d.lambda {
		if x != d.lambda[0] {
			return false
		}
	}
	return true
}

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
