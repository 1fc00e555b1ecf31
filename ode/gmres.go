package ode

import (
	"math"

	"github.com/linattn/linattn/internal/share"
	"gonum.org/v1/gonum/blas/gonum"
)

// impl is gonum's BLAS, called directly on the basis's slab.
var impl gonum.Implementation

// gmres solves M x = b approximately by the generalized minimal residual
// method with right preconditioning, in the norm weighted by the error
// weights as SUNDIALS' SPGMR does for CVODE: with W = diag(w) and P the
// preconditioner it minimizes ‖W(b − M x)‖₂ over x = P⁻¹ V y, V the basis
// of the Krylov space of M P⁻¹ from b, orthonormal in ⟨x, y⟩ = Σ w_i² x_i y_i
// (Arnoldi with classical Gram–Schmidt; the Hessenberg least-squares
// problem by Givens rotations), from x₀ = 0, without restarts. The basis
// vectors are kept unnormalized with their norms (v_k = ṽ_k/c_k, ṽ₀ = b):
// M P⁻¹ is linear, and BDF's difference quotient scale-invariant, so the
// normalizing passes over memory are saved.
//
// References:
//
//	Y. Saad, M. H. Schultz, GMRES: a generalized minimal residual algorithm
//	for solving nonsymmetric linear systems, SIAM J. Sci. Stat. Comput. 7
//	(1986) 856–869.
//	P. N. Brown, A. C. Hindmarsh, Reduced storage matrix methods in stiff
//	ODE systems, Appl. Math. Comput. 31 (1989) 40–91.
type gmres struct {
	maxl int
	v    [][]float64 // the unnormalized Krylov basis ṽ_k, maxl+1 vectors (ṽ₀ is b)
	rest []float64   // ṽ_1..ṽ_maxl, contiguous (row-major maxl × n) for Dgemv
	wx   []float64   // W²x in project
	c    []float64   // the basis's norms
	own0 []float64   // the storage of ṽ₀ when it is not b
	h, a []float64   // project's inner products and coefficients
	zs   [][]float64 // P⁻¹ṽ_k, kept for the solution (as flexible GMRES keeps them)
	hess [][]float64 // the Hessenberg matrix, column k in hess[k] (k+2 entries)
	cs   []float64   // Givens rotations
	sn   []float64
	g    []float64 // the rotated right-hand side of the least-squares problem
	y    []float64
	// workers is the processors project's passes may share
	// (Settings.Workers), which the stepper sets before each solve.
	workers int
}

// gmresKrylov is BDF's Krylov space (CVODE's default maxl = 5), unless
// the preconditioner asks for another (KrylovSpacer); gmresMaxKrylov is
// the largest newGMRES takes. gmresReorth is the fall of the norm in
// Gram–Schmidt below which the projections are repeated: with a good
// preconditioner M P⁻¹ v is close to v and its norm falls by orders of
// magnitude in every iteration, a cancellation that costs the new vector
// about eps·(before/after) of orthogonality; Kahan and Parlett's 0.7
// would keep it at eps, but BDF asks GMRES for a few digits (0.05 of the
// Newton tolerance), and a loss below 10⁻¹² per vector is harmless to
// them even over thirty vectors, so the repetition (two more passes over
// memory) is kept for falls beyond 10⁴.
const (
	gmresKrylov    = 5
	gmresMaxKrylov = 30
	gmresReorth    = 1e-4
)

func newGMRES(n, maxl int) *gmres {
	if maxl < 1 || maxl > gmresMaxKrylov {
		panic("ode: gmres: maxl out of range")
	}
	g := &gmres{maxl: maxl, c: make([]float64, maxl+1), cs: make([]float64, maxl), sn: make([]float64, maxl),
		g: make([]float64, maxl+1), y: make([]float64, maxl), h: make([]float64, maxl+1), a: make([]float64, maxl+1)}
	slab := make([]float64, (2*maxl+2)*n)
	for k := 0; k <= maxl; k++ {
		g.v = append(g.v, slab[k*n:(k+1)*n:(k+1)*n])
	}
	g.rest = slab[n : (maxl+1)*n : (maxl+1)*n]
	for k := maxl + 1; k <= 2*maxl; k++ {
		g.zs = append(g.zs, slab[k*n:(k+1)*n:(k+1)*n])
	}
	g.wx = slab[(2*maxl+1)*n:]
	g.own0 = g.v[0]
	for k := 0; k < maxl; k++ {
		g.hess = append(g.hess, make([]float64, k+2))
	}
	return g
}

// gmresOutcome says how a solve ended.
type gmresOutcome int

const (
	gmresConverged gmresOutcome = iota // ‖S(b − Mx)‖₂ ≤ delta
	gmresReduced                       // not converged, but the residual fell
	gmresFailed                        // the residual did not fall
)

// solve writes into x the approximate solution of M x = b with
// ‖W(b − M x)‖₂ ≤ delta if maxl iterations reach it; beta is ‖W b‖₂, and
// x may be b itself. apply(dst, v) writes M v, psolve(z, r) writes P⁻¹ r
// (nil: P = I). It returns the iterations (each one apply and one psolve)
// and how the solve ended.
func (g *gmres) solve(x, b []float64, beta float64, w []float64, delta float64, apply, psolve func(dst, v []float64)) (int, gmresOutcome) {
	if beta <= delta {
		clear(x)
		return 0, gmresConverged
	}
	g.v[0], g.c[0] = b, beta
	defer func() { g.v[0] = g.own0 }()
	clear(g.g)
	g.g[0] = beta
	res, k := beta, 0
	for k < g.maxl {
		breakdown := g.arnoldi(k, w, apply, psolve)
		res = g.rotate(k)
		k++
		if res <= delta || breakdown {
			break
		}
	}
	g.combine(x, k, psolve)
	switch {
	case res <= delta:
		return k, gmresConverged
	case res < beta:
		return k, gmresReduced
	}
	return k, gmresFailed
}

// arnoldi extends the basis by ṽ_{k+1} = M P⁻¹ ṽ_k orthogonalized against
// ṽ_0..ṽ_k by classical Gram–Schmidt, repeated once when the norm fell
// below gmresReorth of its value before (the cancellation that costs
// classical Gram–Schmidt its orthogonality, as in Kahan and Parlett's
// "twice is enough"), and fills column k of the Hessenberg matrix of the
// normalized basis. It reports a breakdown (the new vector vanished: the
// Krylov space is invariant and the solution exact).
func (g *gmres) arnoldi(k int, w []float64, apply, psolve func(dst, v []float64)) bool {
	src, next := g.v[k], g.v[k+1]
	if psolve != nil {
		psolve(g.zs[k], src)
		src = g.zs[k]
	}
	apply(next, src)
	col := g.hess[k]
	clear(col)
	before, nrm := g.project(k, next, w, col)
	if nrm < gmresReorth*before {
		_, nrm = g.project(k, next, w, col)
	}
	ck := g.c[k]
	for j := 0; j <= k; j++ {
		col[j] /= ck * g.c[j]
	}
	col[k+1] = nrm / ck
	g.c[k+1] = nrm
	return nrm == 0
}

// project subtracts from x its components along ṽ_0..ṽ_k, adds
// ⟨x, ṽ_j⟩ to col[j], and returns the norms of x before and after: one
// pass for W²x and the norm before, the inner products and the
// subtractions with ṽ_1..ṽ_k as two matrix–vector products over the
// contiguous basis (gonum's Dgemv, shared among up to g.workers
// processors: share.GemvWorkers), and one pass for the norm after.
func (g *gmres) project(k int, x, w, col []float64) (before, after float64) {
	n := len(x)
	x, w, wx := x[:n], w[:n], g.wx[:n]
	var s0 float64
	for i, xi := range x {
		t := w[i] * xi
		s0 += t * t
		wx[i] = w[i] * t
	}
	h, a := g.h, g.a
	h[0] = impl.Ddot(n, wx, 1, g.v[0], 1)
	workers := share.GemvWorkers(k, n, g.workers)
	share.MulVec(k, n, g.rest, wx, h[1:k+1], workers)
	for j := 0; j <= k; j++ {
		a[j] = -h[j] / (g.c[j] * g.c[j])
		col[j] += h[j]
	}
	impl.Daxpy(n, a[0], g.v[0], 1, x, 1)
	share.AddMulTVec(k, n, 1, g.rest, a[1:k+1], x, workers)
	return math.Sqrt(s0), wnorm(x, w)
}

// rotate applies the previous Givens rotations to column k, makes the one
// that zeros its subdiagonal entry, and returns the residual norm |g_{k+1}|.
func (g *gmres) rotate(k int) float64 {
	col := g.hess[k]
	for j := 0; j < k; j++ {
		a, b := col[j], col[j+1]
		col[j] = g.cs[j]*a - g.sn[j]*b
		col[j+1] = g.sn[j]*a + g.cs[j]*b
	}
	a, b := col[k], col[k+1]
	r := math.Hypot(a, b)
	c, s := 1.0, 0.0
	if r != 0 {
		c, s = a/r, -b/r
	}
	g.cs[k], g.sn[k] = c, s
	col[k], col[k+1] = r, 0
	gk := g.g[k]
	g.g[k], g.g[k+1] = c*gk, s*gk
	return math.Abs(g.g[k+1])
}

// combine solves the k × k triangular system R y = g and sets
// x = P⁻¹ Σ_j y_j v_j = Σ_j (y_j/c_j) P⁻¹ṽ_j from the kept P⁻¹ṽ_j (no
// further solve with P). x may be ṽ₀ = b when there is no preconditioner:
// each component of the first pass reads ṽ₀ before it writes x.
func (g *gmres) combine(x []float64, k int, psolve func(dst, v []float64)) {
	for i := k - 1; i >= 0; i-- {
		s := g.g[i]
		for j := i + 1; j < k; j++ {
			s -= g.hess[j][i] * g.y[j]
		}
		g.y[i] = s / g.hess[i][i]
	}
	basis := g.zs
	if psolve == nil {
		basis = g.v
	}
	z0, y0 := basis[0][:len(x)], g.y[0]/g.c[0]
	for i := range x {
		x[i] = y0 * z0[i]
	}
	for j := 1; j < k; j++ {
		axpy(g.y[j]/g.c[j], basis[j], x)
	}
}

// wnorm is ‖W v‖₂.
func wnorm(v, w []float64) float64 {
	w = w[:len(v)]
	var s float64
	for i, x := range v {
		x *= w[i]
		s += x * x
	}
	return math.Sqrt(s)
}

var lastRes, lastBeta, lastDelta float64
