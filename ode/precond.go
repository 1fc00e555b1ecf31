package ode

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Preconditioner approximates the Newton matrix I − γJ, J = ∂f/∂y, of
// BDF's implicit steps, so that GMRES solves with it in a few iterations:
// the preconditioner setup and solve of CVODE (P. N. Brown,
// A. C. Hindmarsh, Reduced storage matrix methods in stiff ODE systems,
// Appl. Math. Comput. 31 (1989) 40–91). It should capture the stiff part
// of J; it need not be exact, and the better it is the fewer GMRES
// iterations (each one evaluation of f) a step takes.
type Preconditioner interface {
	// Setup prepares P ≈ I − γJ at (t, y). With jacOK it may reuse the
	// Jacobian data of its last Setup (BDF asks so when only γ changed);
	// fresh reports whether it evaluated them anew. An error fails the
	// step's Newton iteration, which BDF retries with a shorter step.
	//
	// A dense Solution of a BDF solve sets the preconditioner up again
	// after the solve to take steps again (Settings.DenseLimit): with the
	// arguments of the last Setup that evaluated fresh data (jacOK false),
	// then, if a Setup that reused them followed, with that one's t and γ
	// and the same y. So P must be a function of the arguments of the last
	// fresh Setup and, after a Setup that reused its data, of that one's γ
	// (and t) alone, as CVODE's preconditioners are. Where the replay set
	// the preconditioner up with those fresh data itself, it asks for them
	// with jacOK true instead: between two calls of Solution.At nothing
	// else may set up the Problem's preconditioner, and fresh must say
	// truthfully whether Setup evaluated fresh data, also with an error.
	Setup(t float64, y []float64, gamma float64, jacOK bool) (fresh bool, err error)
	// Solve writes P⁻¹r into z; z and r do not overlap.
	Solve(z, r []float64)
}

// A KrylovSpacer is a Preconditioner that asks BDF's GMRES for a Krylov
// space of KrylovSpace() vectors (clamped to 1…30) instead of CVODE's
// five: one that captures only the stiffest part of J and leaves GMRES
// more to do, where a Newton iteration that fails for want of Krylov
// vectors costs a shorter step and a fresh setup.
type KrylovSpacer interface {
	KrylovSpace() int
}

// KrylovSpace returns the Krylov space BDF's GMRES takes with the
// preconditioner p (nil: none or ode's dense LU): CVODE's five vectors
// unless p asks for another (KrylovSpacer). GMRES holds 2·maxl + 2
// vectors of the state's length.
func KrylovSpace(p Preconditioner) int {
	if ks, ok := p.(KrylovSpacer); ok {
		return min(max(ks.KrylovSpace(), 1), gmresMaxKrylov)
	}
	return gmresKrylov
}

// denseLU is BDF's preconditioner when the problem gives none but the
// state is small enough to factor: P = I − γJ exactly, J from Problem.Jac
// or finite differences, by LU (dgetrf), or by Cholesky (dpotrf) when
// Problem.SymmetricJac and P is positive definite. GMRES then converges in
// one iteration: the modified Newton iteration of LSODE and CVODE's dense
// linear solver.
type denseLU struct {
	in   *Integrator // for f and the statistics (JacEvals, FuncEvals)
	p    *Problem
	jac  denseJacobian
	w    blas64.General
	ipiv []int
	y0   []float64 // y at the Jacobian's evaluation, and f there
	f0   []float64
	have bool // jac holds a Jacobian of the current solve
	chol bool // w holds P's Cholesky factor U (P = UᵀU), not its LU
}

func newDenseLU(in *Integrator, p *Problem) *denseLU {
	n := in.n
	return &denseLU{in: in, p: p, jac: newDenseJacobian(in), ipiv: make([]int, n),
		w:  blas64.General{Rows: n, Cols: n, Stride: max(n, 1), Data: make([]float64, n*n)},
		y0: make([]float64, n), f0: make([]float64, n)}
}

func (d *denseLU) Setup(t float64, y []float64, gamma float64, jacOK bool) (bool, error) {
	n := d.in.n
	fresh := !jacOK || !d.have
	if fresh {
		d.have = true
		copy(d.y0, y)
		if d.p.Jac == nil {
			d.in.f(t, d.y0, d.f0)
			d.in.stats.FuncEvals++
		}
		d.jac.evalAt(d.p, t, d.y0, d.f0)
	}
	d.newtonMatrix(gamma)
	if d.p.SymmetricJac {
		_, d.chol = lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: d.w.Stride, Data: d.w.Data})
		if d.chol {
			return fresh, nil
		}
		d.newtonMatrix(gamma) // not positive definite: Potrf left it partly factored
	}
	if !lapack64.Getrf(d.w, d.ipiv) {
		return fresh, errSingular
	}
	return fresh, nil
}

// newtonMatrix writes I − γJ into w.
func (d *denseLU) newtonMatrix(gamma float64) {
	n := d.in.n
	for i, v := range d.jac.a {
		d.w.Data[i] = -gamma * v
	}
	for r := 0; r < n; r++ {
		d.w.Data[r*n+r]++
	}
}

func (d *denseLU) Solve(z, r []float64) {
	copy(z, r)
	if d.chol {
		cholSolve(d.w, z)
		return
	}
	luSolve(d.w, d.ipiv, z)
}

type singularError struct{}

func (singularError) Error() string { return "ode: I − γJ is singular" }

var errSingular error = singularError{}
