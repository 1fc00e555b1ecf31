package flow

import (
	"math"
	"math/rand/v2"

	"github.com/linattn/linattn/flow/internal/gemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// deflatePrecond is the preconditioner of BDF's Newton matrix I − γJ for
// the full layer too large to factor (n > ode.MaxDenseDim): I − γJ on the
// span of J's stiffest eigenvectors, the identity elsewhere,
//
//	P = I + γ V diag(θ) Vᵀ,   P⁻¹ = I + V diag(1/(1 + γθ) − 1) Vᵀ,
//
// with (θ_i, v_i) the Ritz pairs of −J from DeflateSteps steps of the
// Lanczos iteration on the analytic Jacobian–vector products (J is
// symmetric: J = −∇²L/(2τ)), those with θ_i > 0 whose residual is below
// a tenth of θ_i. The flow's stiffness sits in a few modes of the learned
// heads (on the D = H = 16 plateau at t = 3·10⁴: 15 eigenvalues of J
// beyond 1 in modulus, 34 beyond 0.1, 90 beyond 10⁻², among 4624), too
// many for BDF's five Krylov vectors, so that unpreconditioned GMRES
// fails and BDF cuts its steps. P is symmetric positive definite for any
// V with orthonormal columns and θ > 0. A setup costs DeflateSteps
// Jacobian–vector products and O(DeflateSteps²·n) for the full
// reorthogonalization; only γ changes between the Jacobian's setups.
//
// References:
//
//	Y. Saad, Numerical Methods for Large Eigenvalue Problems, 2nd ed.,
//	SIAM (2011), 6.6 (the Lanczos algorithm with full reorthogonalization).
//	B. Carpentieri, I. S. Duff, L. Giraud, A class of spectral two-level
//	preconditioners, SIAM J. Sci. Comput. 25 (2003) 749–765.
type deflatePrecond struct {
	lin     *Linearization
	n, m    int
	slab    []float64   // q's storage, (m+1)×n row-major
	q       [][]float64 // the Lanczos basis, then the kept Ritz vectors
	theta   []float64   // their Ritz values
	scale   []float64   // 1/(1 + γθ) − 1
	w, proj []float64
	have    bool

	// The kept Ritz vectors in single precision (row-major k × n), which
	// Solve reads: its two passes over them are most of its cost, and a
	// preconditioner needs no more than single precision (GMRES corrects
	// it); r32, c32 and acc32 are Solve's.
	v32, r32, c32, acc32 []float32
}

// deflateMinDim is the state length from which the merged full layer's
// BDF takes the deflation preconditioner and GMRES rather than factoring
// I − γJ: its solves cost two products with the kept Ritz vectors and a
// few Jacobian–vector products, against two triangular solves with the
// whole factor, and a fresh setup 90 JVPs against n of them and a
// Cholesky factorization. Measured until converged (BenchmarkFullConverge,
// CPU, dense against deflation): D = 4 (n = 100) 0.079 against 0.174 s,
// D = 6 (n = 294) 0.60 against 0.39 s, D = 8 (n = 648) 2.76 against
// 0.65 s, to the same loss; BenchmarkFullRun's D = 8, 4.06 against
// 0.96 s. The separate model's full layer keeps the factorization below
// ode.MaxDenseDim: on BenchmarkFullRun's D = 8, R = 1 (its loss settles
// only at t ≈ 5·10⁸) the factorization took 4.8 s and the deflation had
// not finished after ten minutes.
const deflateMinDim = 256

// DeflateSteps is the number of Lanczos steps of a setup; the
// preconditioner holds DeflateSteps + 1 vectors of the state's length.
const DeflateSteps = 90

// deflateMin is the least γθ of a Ritz pair that Solve applies.
const deflateMin = 0.05

// deflateKrylov is the Krylov space BDF's GMRES takes with the deflation
// preconditioner (ode.KrylovSpacer). The deflated modes are the stiffest
// few dozen; on the long final approach the step sizes make hundreds of
// modes stiff (γθ > 1), and with CVODE's five Krylov vectors the Newton
// iterations fail, which BDF answers with shorter steps and fresh setups.
// Measured on the merged full layer at D = H = 16 until converged
// (BenchmarkFullConverge, when this was chosen): 5 vectors 6622 steps and
// 250 fresh setups, 12 4676 and 91, 20 4410 and 75, 30 4434 and 74, the
// time least from 12 to 30.
const deflateKrylov = 20

// KrylovSpace implements ode.KrylovSpacer.
func (p *deflatePrecond) KrylovSpace() int { return deflateKrylov }

func newDeflatePrecond(s *System) *deflatePrecond {
	n := s.n
	m := min(DeflateSteps, n)
	p := &deflatePrecond{lin: s.NewLinearization(), n: n, m: m, w: make([]float64, n), proj: make([]float64, m+1),
		v32: make([]float32, m*n), r32: make([]float32, n), c32: make([]float32, m), acc32: make([]float32, n)}
	slab := make([]float64, (m+1)*n)
	p.slab = slab
	for j := 0; j <= m; j++ {
		p.q = append(p.q, slab[j*n:(j+1)*n:(j+1)*n])
	}
	return p
}

func (p *deflatePrecond) Setup(_ float64, y []float64, gamma float64, jacOK bool) (bool, error) {
	fresh := !jacOK || !p.have
	if fresh {
		p.lin.At(y)
		p.lanczos()
		p.have = true
	}
	// On the Ritz vectors with γθ < deflateMin, P is the identity to 5%:
	// Solve leaves them out (θ is decreasing).
	p.scale = p.scale[:0]
	for _, th := range p.theta {
		if gamma*th < deflateMin {
			break
		}
		p.scale = append(p.scale, 1/(1+gamma*th)-1)
	}
	return fresh, nil
}

// Solve writes z = P⁻¹r = r + V diag(scale) Vᵀr, the products with V in
// single precision, Vᵀr's sums in blocks of solveBlock columns added in
// double, so that z is P⁻¹r to about 10⁻⁷ of r.
func (p *deflatePrecond) Solve(z, r []float64) {
	copy(z, r)
	k, n := len(p.scale), p.n
	if k == 0 {
		return
	}
	r32, c, acc, sums := p.r32, p.c32[:k], p.acc32, p.proj[:k]
	for i, x := range r {
		r32[i] = float32(x)
	}
	clear(sums)
	for j0 := 0; j0 < n; j0 += solveBlock {
		nb := min(solveBlock, n-j0)
		impl.Sgemv(blas.NoTrans, k, nb, 1, p.v32[j0:], n, r32[j0:j0+nb], 1, 0, c, 1)
		for i, x := range c {
			sums[i] += float64(x)
		}
	}
	for i, sc := range p.scale {
		c[i] = float32(sc * sums[i])
	}
	impl.Sgemv(blas.Trans, k, n, 1, p.v32, n, c, 1, 0, acc, 1) // acc = V c
	for i, a := range acc {
		z[i] += float64(a)
	}
}

// solveBlock is the number of columns of V whose inner products Solve
// sums in single precision (gonum's SIMD Sgemv; Dsdot, which accumulates
// in double, took twice as long as the whole of the rest of Solve at
// D = 32) before it adds them in double: a relative error of about
// √solveBlock·6·10⁻⁸.
const solveBlock = 1024

// lanczos runs m steps of the Lanczos iteration on −J from a fixed
// start, each new vector reorthogonalized against the whole basis after
// the three-term recurrence (so that one pass of Gram–Schmidt mostly
// suffices), and keeps the converged Ritz pairs with θ > 0 in q[:k],
// theta.
func (p *deflatePrecond) lanczos() {
	q, w := p.q, p.w
	rng := rand.New(rand.NewPCG(1, 2)) // a fixed start: the same bits every run
	for k := range q[0] {
		q[0][k] = rng.NormFloat64()
	}
	impl.Dscal(p.n, 1/impl.Dnrm2(p.n, q[0], 1), q[0], 1)
	alpha, beta := make([]float64, 0, p.m), make([]float64, 0, p.m)
	m := 0
	for j := 0; j < p.m; j++ {
		p.lin.Apply(w, q[j])
		impl.Dscal(p.n, -1, w, 1)
		alpha = append(alpha, impl.Ddot(p.n, w, 1, q[j], 1))
		impl.Daxpy(p.n, -alpha[j], q[j], 1, w, 1) // the three-term recurrence, then the reorthogonalization
		if j > 0 {
			impl.Daxpy(p.n, -beta[j-1], q[j-1], 1, w, 1)
		}
		b := p.orthogonalize(w, j+1)
		m = j + 1
		if !(b > 1e-12*math.Abs(alpha[0])) || j+1 == p.m {
			beta = append(beta, b)
			break
		}
		beta = append(beta, b)
		copy(q[j+1], w)
		impl.Dscal(p.n, 1/b, q[j+1], 1)
	}
	p.ritz(alpha, beta, m)
}

// orthogonalize makes w orthogonal to the basis q[:k] by classical
// Gram–Schmidt, a second time where the first lost more than 1 − 1/√2 of
// w's norm (the DGKS criterion: twice is enough), and returns ‖w‖.
//
// References:
//
//	J. W. Daniel, W. B. Gragg, L. Kaufman, G. W. Stewart, Reorthogonalization
//	and stable algorithms for updating the Gram–Schmidt QR factorization,
//	Math. Comp. 30 (1976) 772–795.
func (p *deflatePrecond) orthogonalize(w []float64, k int) float64 {
	n, c := p.n, p.proj[:k]
	before := impl.Dnrm2(n, w, 1)
	for pass := 0; pass < 2; pass++ {
		impl.Dgemv(blas.NoTrans, k, n, 1, p.slab, n, w, 1, 0, c, 1)
		impl.Dgemv(blas.Trans, k, n, -1, p.slab, n, c, 1, 1, w, 1)
		after := impl.Dnrm2(n, w, 1)
		if after > before/math.Sqrt2 {
			return after
		}
		before = after
	}
	return before
}

// ritz keeps the converged Ritz pairs with θ > 0 of the m Lanczos steps
// with coefficients alpha, beta: the eigenpairs of the tridiagonal
// T = Qᵀ(−J)Q, their vectors Q s_i written over the basis.
func (p *deflatePrecond) ritz(alpha, beta []float64, m int) {
	n, q := p.n, p.q
	t := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		t.SetSym(i, i, alpha[i])
		if i+1 < m {
			t.SetSym(i, i+1, beta[i])
		}
	}
	var eig mat.EigenSym
	p.theta = p.theta[:0]
	if !eig.Factorize(t, true) {
		return
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	// Keep the pairs whose residual β_m |s_mi| is below θ_i/10, largest
	// first, and build their Ritz vectors Q s_i in place of the basis, a
	// row of Q at a time.
	var keep []int
	for i := m - 1; i >= 0; i-- {
		if th := vals[i]; th > 0 && beta[m-1]*math.Abs(vecs.At(m-1, i)) <= 0.1*th {
			keep = append(keep, i)
			p.theta = append(p.theta, th)
		}
	}
	// sk[r·m + j] = s_{j,keep[r]}; the Ritz vectors Sᵀ Q a block of
	// columns at a time, in place of the basis.
	kk := len(keep)
	if kk == 0 {
		return
	}
	sk := make([]float64, kk*m)
	for r, i := range keep {
		for j := 0; j < m; j++ {
			sk[r*m+j] = vecs.At(j, i)
		}
	}
	const cols = 256
	tmp, out := make([]float64, m*cols), make([]float64, kk*cols)
	for k0 := 0; k0 < n; k0 += cols {
		nc := min(cols, n-k0)
		for j := 0; j < m; j++ {
			copy(tmp[j*nc:(j+1)*nc], q[j][k0:k0+nc])
		}
		gemm.Mul(kk, nc, m, sk, tmp, out)
		for r := 0; r < kk; r++ {
			copy(q[r][k0:k0+nc], out[r*nc:(r+1)*nc])
			for j, x := range out[r*nc : (r+1)*nc] {
				p.v32[r*n+k0+j] = float32(x)
			}
		}
	}
}
