package ode

import "math"

// gmres solves M x = b approximately by the generalized minimal residual
// method with right preconditioning and diagonal scaling, as SUNDIALS'
// SPGMR does for CVODE: with S = diag(w) (the error weights) and P the
// preconditioner it minimizes ‖S(b − M x)‖₂ over x = P⁻¹S⁻¹ V y, V the
// Krylov basis of S M P⁻¹ S⁻¹ from S b (Arnoldi with modified Gram–Schmidt,
// the Hessenberg least-squares problem by Givens rotations), from x₀ = 0,
// without restarts.
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
	v    [][]float64 // the Krylov basis, maxl+1 vectors
	hess [][]float64 // the Hessenberg matrix, column k in hess[k] (k+2 entries)
	cs   []float64   // Givens rotations
	sn   []float64
	g    []float64 // the rotated right-hand side of the least-squares problem
	y    []float64
	u, z []float64 // scratch
}

// gmresMaxKrylov is the largest Krylov space (CVODE's default maxl = 5).
const gmresMaxKrylov = 5

func newGMRES(n, maxl int) *gmres {
	g := &gmres{maxl: maxl, cs: make([]float64, maxl), sn: make([]float64, maxl),
		g: make([]float64, maxl+1), y: make([]float64, maxl), u: make([]float64, n), z: make([]float64, n)}
	slab := make([]float64, (maxl+1)*n)
	for k := 0; k <= maxl; k++ {
		g.v = append(g.v, slab[k*n:(k+1)*n:(k+1)*n])
	}
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
// ‖S(b − M x)‖₂ ≤ delta if maxl iterations reach it. apply(dst, v) writes
// M v, psolve(z, r) writes P⁻¹ r (nil: P = I). It returns the iterations
// (each one apply and one psolve) and how the solve ended.
func (g *gmres) solve(x, b, w []float64, delta float64, apply, psolve func(dst, v []float64)) (int, gmresOutcome) {
	v0 := g.v[0]
	for i := range v0 {
		v0[i] = w[i] * b[i]
	}
	beta := norm2(v0)
	if beta <= delta {
		clear(x)
		return 0, gmresConverged
	}
	scale(1/beta, v0)
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
	g.combine(x, k, w, psolve)
	switch {
	case res <= delta:
		return k, gmresConverged
	case res < beta:
		return k, gmresReduced
	}
	return k, gmresFailed
}

// arnoldi extends the basis by v_{k+1} ∝ S M P⁻¹ S⁻¹ v_k orthogonalized
// against v_0..v_k (modified Gram–Schmidt), filling column k of the
// Hessenberg matrix; it reports a breakdown (the new vector vanished: the
// Krylov space is invariant and the solution exact).
func (g *gmres) arnoldi(k int, w []float64, apply, psolve func(dst, v []float64)) bool {
	vk, next := g.v[k], g.v[k+1]
	for i := range vk {
		g.u[i] = vk[i] / w[i]
	}
	src := g.u
	if psolve != nil {
		psolve(g.z, g.u)
		src = g.z
	}
	apply(next, src)
	for i := range next {
		next[i] *= w[i]
	}
	col := g.hess[k]
	for j := 0; j <= k; j++ {
		d := dot(next, g.v[j])
		col[j] = d
		axpy(-d, g.v[j], next)
	}
	nrm := norm2(next)
	col[k+1] = nrm
	if nrm == 0 {
		return true
	}
	scale(1/nrm, next)
	return false
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
// x = P⁻¹ S⁻¹ Σ_j y_j v_j.
func (g *gmres) combine(x []float64, k int, w []float64, psolve func(dst, v []float64)) {
	for i := k - 1; i >= 0; i-- {
		s := g.g[i]
		for j := i + 1; j < k; j++ {
			s -= g.hess[j][i] * g.y[j]
		}
		g.y[i] = s / g.hess[i][i]
	}
	clear(g.u)
	for j := 0; j < k; j++ {
		axpy(g.y[j], g.v[j], g.u)
	}
	for i := range g.u {
		g.u[i] /= w[i]
	}
	if psolve != nil {
		psolve(x, g.u)
		return
	}
	copy(x, g.u)
}

func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

func scale(c float64, v []float64) {
	for i := range v {
		v[i] *= c
	}
}
