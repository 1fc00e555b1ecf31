package deflation

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/linattn/linattn/flow/internal/gemm"
	"github.com/linattn/linattn/internal/share"
)

// impl is gonum's BLAS, called directly on the Krylov and Ritz vectors.
var impl gonum.Implementation

// Linearization is what the preconditioner needs of the flow: its
// Jacobian J at a point, symmetric, applied to vectors.
type Linearization interface {
	// At sets the point y of J.
	At(y []float64)
	// Apply sets dst = J x.
	Apply(dst, x []float64)
}

// Precond is the deflation preconditioner of BDF's Newton matrix I − γJ
// (package flow takes it for the full layer too large to factor): I − γJ
// on the span of J's stiffest eigenvectors, the identity elsewhere,
//
//	P = I + γ V diag(θ) Vᵀ,   P⁻¹ = I + V diag(1/(1 + γθ) − 1) Vᵀ,
//
// with (θ_i, v_i) the Ritz pairs of −J from a given number of steps of the
// Lanczos iteration on the analytic Jacobian–vector products (J is
// symmetric: J = −∇²L/(2τ)), those with θ_i > 0 whose residual is below
// a tenth of θ_i. The flow's stiffness sits in a few modes of the learned
// heads (on the D = H = 16 plateau at t = 3·10⁴: 15 eigenvalues of J
// beyond 1 in modulus, 34 beyond 0.1, 90 beyond 10⁻², among 4624), too
// many for BDF's five Krylov vectors, so that unpreconditioned GMRES
// fails and BDF cuts its steps. P is symmetric positive definite for any
// V with orthonormal columns and θ > 0. A setup costs a Jacobian–vector
// product per Lanczos step and O(steps²·n) for the full
// reorthogonalization; only γ changes between the Jacobian's setups.
//
// On the merged model's long final approach the steps make hundreds more
// modes stiff than the Lanczos vectors hold; most are in the key–query
// block, where the curvature has a Kronecker structure (Kron:
// P_S = I + γ S diag(λ_fμ_j/τ) Sᵀ on its vectors S). There P is the
// two-level
//
//	P⁻¹ = V diag(1/(1 + γθ)) Vᵀ + (I − VVᵀ) P_S⁻¹ (I − VVᵀ),
//
// exact on the Ritz vectors and P_S on their complement, symmetric
// positive definite as both parts are (Solve).
//
// References:
//
//	Y. Saad, Numerical Methods for Large Eigenvalue Problems, 2nd ed.,
//	SIAM (2011), 6.6 (the Lanczos algorithm with full reorthogonalization).
//	B. Carpentieri, I. S. Duff, L. Giraud, A class of spectral two-level
//	preconditioners, SIAM J. Sci. Comput. 25 (2003) 749–765.
type Precond struct {
	lin   Linearization
	n, m  int
	lz    *lanczos
	q     [][]float64 // lz's basis, then the kept Ritz vectors
	theta []float64   // their Ritz values
	scale []float64   // 1/(1 + γθ) − 1
	proj  []float64   // Solve's Vᵀr
	have  bool

	// The kept Ritz vectors in single precision, which Solve reads: its
	// two passes over them are most of its cost, and a preconditioner
	// needs no more than single precision (GMRES corrects it). They are
	// stored by blocks of solveBlock columns (vBlock), each block's rows
	// contiguous, so that both passes stream through memory; r32, c32 and
	// acc32 are Solve's.
	v32, r32, c32, acc32 []float32
	// part32 holds the blocks' sums of Vᵀr (blocks × m), workers the
	// goroutines that share Solve's passes (SetWorkers, solveWorkers),
	// each with its solveBlock of acc32.
	part32  []float32
	workers int

	// kron is the structured deflation of the merged model's key–query
	// block (Kron), nil for the separate model; kb holds the Ritz
	// vectors' coordinates on its vectors (k × r·D), c1 is Solve's.
	kron   *Kron
	kb, c1 []float64
}

// MinScale is the least γθ of a Ritz pair that Solve applies (and γλμ/τ
// of Kron's).
const MinScale = 0.05

// krylovSpace is the Krylov space BDF's GMRES takes with the deflation
// preconditioner (ode.KrylovSpacer). The deflated modes are the stiffest
// few dozen; on the long final approach the step sizes make hundreds of
// modes stiff (γθ > 1), and with CVODE's five Krylov vectors the Newton
// iterations fail, which BDF answers with shorter steps and fresh setups.
// Measured on the merged full layer at D = H = 16 until converged
// (BenchmarkFullConverge, when this was chosen): 5 vectors 6622 steps and
// 250 fresh setups, 12 4676 and 91, 20 4410 and 75, 30 4434 and 74, the
// time least from 12 to 30.
const krylovSpace = 20

// krylovSpaceKron is the Krylov space with the structured deflation
// (the merged model), ode's largest. At D = 64 the final approach's
// first Newton iteration ran GMRES to its 20 vectors on every step, the
// residual falling from 3–17 to above the tolerance, 0.04, and the
// inexact corrections held BDF at order 3 and steps near 4·10⁴.
// Measured from checkpoints (the whole command at H = D, c = 0.5,
// K = 4, power-law Λ; one run each): from D = 64's t = 1.43·10⁸, 240 s
// beside two other runs went to 1.54·10⁸ with 20 vectors and 1.61·10⁸
// with 30, 1.7 times as far in log t; from D = 32's t = 2.56·10⁷ to the
// end, 2 096 steps, 46 fresh setups and 50.7k evaluations with 20,
// 1 339, 22 and 45.2k with 30. Sixty (beyond ode's cap) stalled.
const krylovSpaceKron = 30

// KrylovSpace implements ode.KrylovSpacer.
func (p *Precond) KrylovSpace() int { return KrylovSpace(p.kron != nil) }

// KrylovSpace is the Krylov space BDF's GMRES takes with the deflation,
// with the structured deflation (Kron) or without.
func KrylovSpace(structured bool) int {
	if structured {
		return krylovSpaceKron
	}
	return krylovSpace
}

// New returns the deflation of the Jacobian of lin, of order n, by Ritz
// pairs from up to steps Lanczos steps, with the structured deflation
// kron (nil: none), which it owns, its work shared among up to procs
// processors (SetWorkers).
func New(lin Linearization, n, steps int, kron *Kron, procs int) *Precond {
	m := min(steps, n)
	p := &Precond{lin: lin, n: n, m: m, lz: newLanczos(n, m, procs), proj: make([]float64, m),
		c1:  make([]float64, m),
		v32: make([]float32, m*n), r32: make([]float32, n), c32: make([]float32, m)}
	p.share(solveWorkers(m, n, procs))
	p.q = p.lz.q
	if kron != nil {
		p.kron, p.kb = kron, make([]float64, m*len(kron.c))
	}
	return p
}

// Kron returns the structured deflation (nil: none).
func (p *Precond) Kron() *Kron { return p.kron }

// Ritz returns the Ritz pairs of −J the last setup kept, θ decreasing.
func (p *Precond) Ritz() (theta []float64, vectors [][]float64) {
	return p.theta, p.q[:len(p.theta)]
}

// Applied returns the number of the Ritz pairs Solve applies at the last
// setup's γ: those with γθ ≥ MinScale.
func (p *Precond) Applied() int { return len(p.scale) }

// Bytes returns the memory of a deflation of order n by steps Lanczos
// steps, Kron's aside: the Lanczos basis in double precision, the Ritz
// vectors in single, and Solve's single-precision copy of r.
func Bytes(n, steps int) float64 {
	k, nf := float64(min(steps, n)), float64(n)
	return 8*(k+1)*nf + 4*k*nf + 4*nf
}

// Setup implements ode.Preconditioner: at a fresh setup (not jacOK) the
// Ritz pairs of −J at y, and Kron's eigenpairs there; at every setup the
// pairs applied at γ and their scales.
func (p *Precond) Setup(_ float64, y []float64, gamma float64, jacOK bool) (bool, error) {
	fresh := !jacOK || !p.have
	if fresh {
		p.lin.At(y)
		p.ritzPairs()
		if p.kron != nil {
			p.kron.At(y)
			p.kronCoords()
		}
		p.have = true
	}
	if p.kron != nil {
		p.kron.setGamma(gamma)
	}
	// On the Ritz vectors with γθ < MinScale, P is the identity to 5%:
	// Solve leaves them out (θ is decreasing).
	p.scale = p.scale[:0]
	for _, th := range p.theta {
		if gamma*th < MinScale {
			break
		}
		p.scale = append(p.scale, 1/(1+gamma*th)-1)
	}
	return fresh, nil
}

// Solve writes z = P⁻¹r = r + V diag(scale) Vᵀr, or with the structured
// deflation S (the merged model) the two-level
//
//	P⁻¹ = V diag(1/(1 + γθ)) Vᵀ + (I − VVᵀ) P_S⁻¹ (I − VVᵀ),
//	P_S⁻¹ = I + S diag(s) Sᵀ,   s_jf = 1/(1 + γλ_fμ_j/τ) − 1,
//
// which with c₀ = Vᵀr, B = VᵀS and E = s ∘ (Sᵀr − Bᵀc₀) is
// z = r + S E + V(scale ∘ c₀ − B E): two passes over V and two over S.
// The products with V are in single precision, Vᵀr's sums in blocks of
// solveBlock columns added in double, so that z is P⁻¹r to about 10⁻⁷ of r.
func (p *Precond) Solve(z, r []float64) {
	copy(z, r)
	k := len(p.scale)
	var c0 []float64 // in p.proj, which nothing else in Solve writes
	if k > 0 {
		c0 = p.coords(k, r)
	}
	coef := p.c1[:k]
	for i, sc := range p.scale {
		coef[i] = sc * c0[i]
	}
	if kr := p.kron; kr != nil && kr.active > 0 {
		nc, ld := kr.active*kr.d, len(kr.c)
		e := kr.c[:nc]
		kr.coords(e, r, kr.active)
		if k > 0 {
			impl.Dgemv(blas.Trans, k, nc, -1, p.kb, ld, c0, 1, 1, e, 1) // Sᵀr − Bᵀc₀
		}
		for i, s := range kr.scale[:nc] {
			e[i] *= s
		}
		kr.addSpan(z, e)
		if k > 0 {
			impl.Dgemv(blas.NoTrans, k, nc, -1, p.kb, ld, e, 1, 1, coef, 1) // − B E
		}
	}
	if k > 0 {
		p.addSpan(z, coef)
	}
}

// coords returns V_kᵀx for the first k Ritz vectors (in p.proj), their
// products in single precision, the sums of blocks of solveBlock columns
// in double, added in the order of the blocks (whichever goroutine
// computed them: solveShare).
func (p *Precond) coords(k int, x []float64) []float64 {
	r32, part, sums := p.r32, p.part32, p.proj[:k]
	p.solveShare(func(_, b0, b1 int) {
		for b := b0; b < b1; b++ {
			j0 := b * solveBlock
			vb, nb := p.vBlock(j0)
			for i, v := range x[j0 : j0+nb] {
				r32[j0+i] = float32(v)
			}
			impl.Sgemv(blas.NoTrans, k, nb, 1, vb, nb, r32[j0:j0+nb], 1, 0, part[b*k:(b+1)*k], 1)
		}
	})
	clear(sums)
	for b := range solveBlocks(p.n) {
		for i, v := range part[b*k : (b+1)*k] {
			sums[i] += float64(v)
		}
	}
	return sums
}

// addSpan adds V_k c to z (in single precision), k = len(c).
func (p *Precond) addSpan(z, c []float64) {
	k := len(c)
	c32 := p.c32[:k]
	for i, v := range c {
		c32[i] = float32(v)
	}
	p.solveShare(func(w, b0, b1 int) {
		acc := p.acc32[w*solveBlock : (w+1)*solveBlock]
		for b := b0; b < b1; b++ {
			j0 := b * solveBlock
			vb, nb := p.vBlock(j0)
			impl.Sgemv(blas.Trans, k, nb, 1, vb, nb, c32, 1, 0, acc[:nb], 1)
			for i, a := range acc[:nb] {
				z[j0+i] += float64(a)
			}
		}
	})
}

// solveBlocks is the number of blocks of solveBlock columns of V, of n
// columns.
func solveBlocks(n int) int { return (n + solveBlock - 1) / solveBlock }

// solveShare runs pass(w, b0, b1) on the blocks of V, in p.workers
// contiguous ranges of them (share.Ranges; the w-th with scratch of its
// own); the passes write disjoint parts of their outputs, so the results
// are those of one goroutine, bit for bit (TestSolveShared).
func (p *Precond) solveShare(pass func(w, b0, b1 int)) {
	w := p.workers
	if w == 1 {
		pass(0, 0, solveBlocks(p.n))
		return
	}
	share.Ranges(solveBlocks(p.n), w, 1, pass)
}

// Workers returns the number of goroutines that share Solve's passes.
func (p *Precond) Workers() int { return p.workers }

// SetWorkers sets the processors the preconditioner's work may share:
// procs, or for 0 those Go may use (share.Procs). Solve's passes, the
// Lanczos iterations' Gram–Schmidt and Kron's products take all of them
// where they gain (solveWorkers, share.GemvWorkers, gemm.Workers), else
// one goroutine; the results are the same bit for bit.
func (p *Precond) SetWorkers(procs int) {
	p.share(solveWorkers(p.m, p.n, procs))
	p.lz.procs = procs
	if p.kron != nil {
		p.kron.setWorkers(procs)
	}
}

// share sets the number of goroutines that share Solve's passes, with
// the passes' scratch: a block of acc32 per goroutine, the blocks' sums
// part32.
func (p *Precond) share(workers int) {
	p.workers, p.acc32 = workers, make([]float32, workers*solveBlock)
	p.part32 = make([]float32, solveBlocks(p.n)*p.m)
}

// solveWorkers is the number of goroutines that share Solve's passes over
// the m × n Ritz vectors on procs processors: all of them
// (share.Workers), at most one per block, where V holds at least
// solveShareMin values, else one.
// With both cores of this machine free (BenchmarkDeflateSolve, median of
// six) a solve at D = 64 (n = 270 400, m = 60) took 3.66 ms on two
// against 5.08 on one; at D = 32 (2.09·10⁶ values, just below) 0.27 ms
// on two against 0.26 on one: the passes are bound by memory, and
// there the two-level part and the cache leave nothing to share.
func solveWorkers(m, n, procs int) int {
	return min(share.Workers(m*n, solveShareMin, procs), solveBlocks(n))
}

const solveShareMin = 1 << 21

// vBlock returns the block of the single-precision Ritz vectors' columns
// j0 … j0+nb−1 (j0 a multiple of solveBlock): m rows of nb, row-major.
// Read row by row across the whole length, the rows lie n floats apart
// and each inner product restarts the hardware's prefetch: at D = 64
// (n = 270 400) Vᵀr took 2.4 times as long as V c in a profile of the
// final approach; by blocks 1.2 times, and a solve takes 9.8 ms against
// 11.9 (BenchmarkDeflateSolve, median of three, both cores busy). The sums
// are the same, bit for bit.
func (p *Precond) vBlock(j0 int) (v []float32, nb int) {
	nb = min(solveBlock, p.n-j0)
	return p.v32[j0*p.m : j0*p.m+p.m*nb], nb
}

// kronCoords sets B = VᵀS, the kept Ritz vectors' coordinates on the
// structured deflation's vectors (in double).
func (p *Precond) kronCoords() {
	kr := p.kron
	nc := len(kr.c)
	for i := range p.theta {
		kr.coords(p.kb[i*nc:(i+1)*nc], p.q[i], kr.r)
	}
}

// solveBlock is the number of columns of V whose inner products Solve
// sums in single precision (gonum's SIMD Sgemv; Dsdot, which accumulates
// in double, took twice as long as the whole of the rest of Solve at
// D = 32) before it adds them in double: a relative error of about
// √solveBlock·6·10⁻⁸.
const solveBlock = 1024

// ritzPairs runs m steps of the Lanczos iteration on −J (the analytic
// Jacobian–vector products) and keeps the converged Ritz pairs with θ > 0
// in q[:k], theta.
func (p *Precond) ritzPairs() {
	negJ := func(dst, x []float64) {
		p.lin.Apply(dst, x)
		impl.Dscal(p.n, -1, dst, 1)
	}
	p.ritz(p.lz.run(negJ, [2]uint64{1, 2}))
}

// ritz keeps the converged Ritz pairs with θ > 0 of the m Lanczos steps
// with coefficients alpha, beta: the eigenpairs of the tridiagonal
// T = Qᵀ(−J)Q, their vectors Q s_i written over the basis.
func (p *Precond) ritz(alpha, beta []float64, m int) {
	n, q := p.n, p.q
	p.theta = p.theta[:0]
	vals, vecs, ok := tridiagonalEigen(alpha, beta, m)
	if !ok {
		return
	}
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
		}
	}
	for j0 := 0; j0 < n; j0 += solveBlock {
		vb, nb := p.vBlock(j0)
		for r := 0; r < kk; r++ {
			for j, x := range q[r][j0 : j0+nb] {
				vb[r*nb+j] = float32(x)
			}
		}
	}
}
