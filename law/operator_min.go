package law

import (
	"errors"
	"fmt"
	"math"
)

// CGSettings control Operator.Minimum's conjugate gradients; zero fields
// take the defaults.
type CGSettings struct {
	// RTol ends the iteration when ‖YZ − ZZ c‖ ≤ RTol·‖YZ‖ (default 1e-12).
	RTol float64
	// MaxIter bounds the iterations (default 20 000).
	MaxIter int
}

// CGStats says how Minimum's conjugate gradients ended.
type CGStats struct {
	Iter     int
	Residual float64 // ‖YZ − ZZ c‖/‖YZ‖ at the end
}

// Minimum returns the least loss over all coefficients,
// min_c L(c) = YY − YZᵀ ZZ⁺ YZ, and its minimizer, by conjugate gradients
// on ZZ c = YZ from c = 0, preconditioned by ZZ's diagonal (Jacobi), each
// iteration one MulVec. Started at zero, the iterates stay in the range
// of ZZ, so that for a singular ZZ (a single fixed task and no in-context
// sequences, Moments.Minimum) they tend to the least-norm minimizer. The
// loss is evaluated at the final iterate, L(c) ≥ min L, and exceeds it by
// ‖c − c*‖²_ZZ, which the iteration minimizes over its Krylov space.
//
// References:
//
//	Y. Saad, Iterative Methods for Sparse Linear Systems, 2nd ed., SIAM
//	(2003), Algorithm 9.1 (preconditioned conjugate gradients).
func (o *Operator) Minimum() (loss float64, cstar []float64, err error) {
	loss, cstar, _, err = o.MinimumCG(CGSettings{})
	return loss, cstar, err
}

// MinimumCG is Minimum with the given settings, and reports the
// iterations.
func (o *Operator) MinimumCG(cs CGSettings) (loss float64, cstar []float64, st CGStats, err error) {
	rtol, maxIter := cs.RTol, cs.MaxIter
	if rtol == 0 {
		rtol = 1e-12
	}
	if maxIter == 0 {
		maxIter = 20000
	}
	if !(rtol > 0 && rtol < 1) || maxIter < 0 {
		return 0, nil, st, fmt.Errorf("law: CGSettings RTol = %g, MaxIter = %d: want 0 < RTol < 1 and MaxIter ≥ 0", rtol, maxIter)
	}
	n := o.nf
	x, r, z, p, q := make([]float64, n), append([]float64(nil), o.yz...), make([]float64, n), make([]float64, n), make([]float64, n)
	bnorm := norm(r)
	if bnorm == 0 {
		return o.yy, x, st, nil
	}
	precond := func() {
		for i, ri := range r {
			if dg := o.diag[i]; dg > 0 {
				z[i] = ri / dg
			} else {
				z[i] = ri
			}
		}
	}
	precond()
	copy(p, z)
	rz := dot(r, z)
	for st.Iter = 0; st.Iter < maxIter; st.Iter++ {
		if st.Residual = norm(r) / bnorm; st.Residual <= rtol {
			break
		}
		o.MulVec(q, p)
		pq := dot(p, q)
		if !(pq > 0) {
			break // p in ZZ's null space: the residual left is outside its range
		}
		a := rz / pq
		for i := range x {
			x[i] += a * p[i]
			r[i] -= a * q[i]
		}
		precond()
		rzNew := dot(r, z)
		beta := rzNew / rz
		rz = rzNew
		for i := range p {
			p[i] = z[i] + beta*p[i]
		}
	}
	st.Residual = norm(r) / bnorm
	loss = o.Loss(x)
	if math.IsNaN(loss) {
		return 0, nil, st, errors.New("law: the least loss by conjugate gradients is NaN")
	}
	return loss, x, st, nil
}

func dot(x, y []float64) float64 {
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

func norm(x []float64) float64 { return math.Sqrt(dot(x, x)) }
