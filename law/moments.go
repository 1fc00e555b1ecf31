package law

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

var impl gonum.Implementation

// Moments are the second moments of the features z and the label y of
// linear attention, a linear model ŷ = cᵀz in its coefficients c
// (docs/math.md, "The full layer"):
//
//	ZZ = E[z zᵀ] (F×F, row-major, symmetric),  YZ = E[y z],  YY = E[y²],
//
// over a population (Data.Moments) or a sample (package train). The loss
// is the quadratic L(c) = YY − 2 cᵀYZ + cᵀ ZZ c, whose gradient is
// ∂L/∂c = −2(YZ − ZZ c).
type Moments struct {
	F      int
	ZZ, YZ []float64
	YY     float64
	zc     []float64 // scratch: ZZ c
	sparse *csr      // ZZ by rows of nonzeros, when Compress found it sparse
}

// csr holds a matrix by rows of nonzeros (compressed sparse rows).
type csr struct {
	start []int32 // row i's entries are start[i]..start[i+1]−1
	col   []int32
	val   []float64
}

// Compress keeps ZZ also by rows of nonzeros when at most a quarter of its
// entries are nonzero, so that Residual costs the nonzeros rather than F²:
// in the eigenbasis of Λ most products of covariances vanish (the full
// layer at D = 8 keeps 5% of them, at D = 16 0.9%). ZZ must not change
// afterwards.
func (m *Moments) Compress() {
	nnz := 0
	for _, x := range m.ZZ {
		if x != 0 {
			nnz++
		}
	}
	if 4*nnz > len(m.ZZ) {
		m.sparse = nil
		return
	}
	s := &csr{start: make([]int32, m.F+1), col: make([]int32, 0, nnz), val: make([]float64, 0, nnz)}
	for i := 0; i < m.F; i++ {
		for j, x := range m.ZZ[i*m.F : (i+1)*m.F] {
			if x != 0 {
				s.col, s.val = append(s.col, int32(j)), append(s.val, x)
			}
		}
		s.start[i+1] = int32(len(s.col))
	}
	m.sparse = s
}

// MulVec sets dst = ZZ·c (through its nonzeros after Compress).
func (m *Moments) MulVec(dst, c []float64) {
	if s := m.sparse; s != nil {
		for i := range dst {
			var sum float64
			lo, hi := s.start[i], s.start[i+1]
			cols, vals := s.col[lo:hi], s.val[lo:hi]
			for k, j := range cols {
				sum += vals[k] * c[j]
			}
			dst[i] = sum
		}
		return
	}
	f := m.F
	impl.Dgemv(blas.NoTrans, f, f, 1, m.ZZ, f, c, 1, 0, dst, 1)
}

// NewMoments returns zero moments of f features.
func NewMoments(f int) *Moments {
	return &Moments{F: f, ZZ: make([]float64, f*f), YZ: make([]float64, f), zc: make([]float64, f)}
}

// Add adds o's moments to m's.
func (m *Moments) Add(o *Moments) {
	for i, x := range o.ZZ {
		m.ZZ[i] += x
	}
	for i, x := range o.YZ {
		m.YZ[i] += x
	}
	m.YY += o.YY
}

// Reset sets the moments to zero.
func (m *Moments) Reset() {
	clear(m.ZZ)
	clear(m.YZ)
	m.YY = 0
}

func (m *Moments) check(name string, c []float64) {
	if len(c) != m.F {
		panic(fmt.Sprintf("law: len(%s) = %d, want F = %d features", name, len(c), m.F))
	}
}

// Loss returns L(c) = YY − 2 cᵀYZ + cᵀ ZZ c.
func (m *Moments) Loss(c []float64) float64 {
	return m.Residual(nil, c)
}

// Residual writes r = YZ − ZZ c, which is −½ ∂L/∂c, into r (unless nil)
// and returns L(c).
func (m *Moments) Residual(r, c []float64) float64 { return residual(m, m.zc, m.YZ, m.YY, r, c) }

// form is a quadratic L(c) = YY − 2cᵀYZ + cᵀ ZZ c by its product ZZ·c:
// Moments, which holds ZZ, and Operator, which applies it.
type form interface {
	MulVec(dst, c []float64)
	check(name string, c []float64)
}

// residual writes r = yz − ZZ c into r (unless nil) and returns
// L(c) = yy − 2cᵀyz + cᵀ ZZ c, with f's ZZ·c in the scratch zc: the
// Residual of Moments and Operator alike.
func residual(f form, zc, yz []float64, yy float64, r, c []float64) float64 {
	f.check("c", c)
	if r != nil {
		f.check("r", r)
	}
	f.MulVec(zc, c)
	loss := yy
	for i, ci := range c {
		loss += ci * (zc[i] - 2*yz[i])
	}
	for i := range r {
		r[i] = yz[i] - zc[i]
	}
	return loss
}

// Minimum returns the least loss over all coefficients,
// min_c L(c) = YY − YZᵀ ZZ⁺ YZ, and the minimizer of least norm
// c* = ZZ⁺ YZ. ZZ is singular when features coincide on the population (a
// single fixed task and no in-context sequences: the label's variance
// S_DD is then Σ_m w_m S_Dm); ZZ⁺ is then the pseudo-inverse, from the
// eigendecomposition of ZZ with eigenvalues below F·ε·‖ZZ‖ taken as zero.
// Otherwise the Cholesky factorization solves ZZ c* = YZ.
func (m *Moments) Minimum() (loss float64, cstar []float64, err error) {
	var ch mat.Cholesky
	if ch.Factorize(mat.NewSymDense(m.F, append([]float64(nil), m.ZZ...))) {
		x := mat.NewVecDense(m.F, nil)
		if err := ch.SolveVecTo(x, mat.NewVecDense(m.F, append([]float64(nil), m.YZ...))); err == nil {
			cstar = x.RawVector().Data
		}
	}
	if cstar == nil {
		if cstar, err = m.pseudoSolve(); err != nil {
			return 0, nil, err
		}
	}
	loss = m.YY
	for i, yz := range m.YZ {
		loss -= yz * cstar[i]
	}
	return loss, cstar, nil
}

// pseudoSolve returns ZZ⁺ YZ from the eigendecomposition of ZZ.
func (m *Moments) pseudoSolve() ([]float64, error) {
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(m.F, append([]float64(nil), m.ZZ...)), true) {
		return nil, errors.New("law: the eigendecomposition of the feature moments ZZ failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := 0.0
	for _, v := range vals {
		top = max(top, math.Abs(v))
	}
	tol := float64(m.F) * 0x1p-52 * top
	yz := mat.NewVecDense(m.F, append([]float64(nil), m.YZ...))
	out := mat.NewVecDense(m.F, nil)
	for k, v := range vals {
		if v <= tol {
			continue
		}
		col := vecs.ColView(k)
		out.AddScaledVec(out, mat.Dot(col, yz)/v, col)
	}
	return out.RawVector().Data, nil
}
