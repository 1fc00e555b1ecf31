package ode

import "math"

// solveCorrector solves the corrector equation of the step ending at t,
//
//	F(Δ) = z₁(0)/l₁ + Δ − γ f(t, z₀(0) + Δ) = 0,
//
// for st.acor by CVODE's inexact Newton iteration: at most three
// iterations, each solving (I − γJ) δ = −F by GMRES to 0.05 of the Newton
// tolerance, stopped when the correction, scaled by the estimated
// contraction rate R, is below tq4 = 0.1/tq2 (a tenth of the error test's
// tolerance), and declared divergent when a correction grows by more than
// 2. The preconditioner is set up as CVODE's lsetup: on the first step,
// after a failure, every 20 steps and when γ has changed by more than 30 %
// since the last setup, with a fresh Jacobian every 51 steps and after
// failures that suggest a stale one. A failure with a stale preconditioner
// is retried once with a fresh one. On success in.ynew holds z₀(0) + Δ.
//
// A dense LU of n ≥ bdfStaleLUDim, whose factorization costs hundreds of
// solves, is set up only on the first step, after a convergence failure,
// with each fresh Jacobian and when γ has changed by more than a factor
// bdfDenseGamma; in between, where γ has moved by more than 30 % (after an
// error-test failure, say), GMRES solves with it as the preconditioner
// (linearSolve).
func (st *bdfStepper) solveCorrector(t float64) bool {
	hs := &st.hs
	setup := st.prec != nil && (st.lastFail != bdfNoFailure || st.nst == 0 ||
		st.nst >= st.nstSetup+bdfSetupSteps || math.Abs(hs.gamma/st.gammaSet-1) > bdfSetupGamma)
	if st.staleLU() {
		r := hs.gamma / st.gammaSet
		setup = st.lastFail == bdfConvFailure || st.nst == 0 || st.nst >= st.nstJac+bdfJacSteps ||
			r > bdfDenseGamma || r < 1/bdfDenseGamma
	}
	if st.prec == nil {
		st.crate = 1
	}
	blameJ := false // the retry after a failure with stale data
	current := false
	st.nonFinite = false
	for {
		st.yIter, st.deltaZero = hs.p0, true
		bnorm, ok := st.residual(t)
		if !ok {
			return false
		}
		if setup {
			fresh, ok := st.setupPrecond(t, blameJ)
			if !ok {
				return false
			}
			current = fresh
		}
		ok, recoverable := st.iterate(t, bnorm)
		if ok {
			return true
		}
		if !recoverable || current || st.prec == nil {
			return false
		}
		setup, blameJ = true, true
	}
}

// staleLU reports whether the preconditioner is a dense LU large enough
// to be kept while γ moves by up to a factor bdfDenseGamma.
func (st *bdfStepper) staleLU() bool {
	return st.lu != nil && st.prec == Preconditioner(st.lu) && st.in.n >= bdfStaleLUDim
}

// setupPrecond sets the preconditioner up at the predicted state z₀(0)
// for the current γ, asking for a fresh Jacobian on the first step, every
// 51 steps, after a Newton failure of the last attempt, and on the retry
// of a failed iteration when γ has changed by less than 20 % (cvLsSetup).
func (st *bdfStepper) setupPrecond(t float64, blameJ bool) (fresh, ok bool) {
	in, hs := st.in, &st.hs
	dgamma := math.Abs(hs.gamma/st.gammaSet - 1)
	jacBad := st.nst == 0 || st.nst >= st.nstJac+bdfJacSteps || st.lastFail == bdfConvFailure ||
		(blameJ && dgamma < bdfJacGamma)
	jacBefore := in.stats.JacEvals
	fresh, err := st.prec.Setup(t, st.yIter, hs.gamma, !jacBad)
	if st.keepSetups {
		st.noteSetup(t, st.yIter, hs.gamma, fresh)
	}
	st.gammaSet, st.crate, st.nstSetup = hs.gamma, 1, st.nst
	in.stats.Decompositions++
	if fresh {
		st.nstJac = st.nst
		if in.stats.JacEvals == jacBefore { // a problem's preconditioner: count its Jacobian data
			in.stats.JacEvals++
		}
	}
	return fresh, err == nil
}

// residual evaluates st.fy = f(t, y) at the iterate y = st.yIter
// (z₀(0) itself before the first update, where Δ = 0) and sets
// st.dx = −F(Δ) = γ f − z₁(0)/l₁ − Δ, the right-hand side of the Newton
// step; it returns ‖st.dx‖ (weighted RMS) and false if f is not finite.
func (st *bdfStepper) residual(t float64) (float64, bool) {
	in, hs := st.in, &st.hs
	in.f(t, st.yIter, st.fy)
	in.stats.FuncEvals++
	g, r := hs.gamma, hs.rl1
	n := len(st.acor)
	z1, fy, dx, w := hs.p1[:n], st.fy[:n], st.dx[:n], st.ewt[:n]
	var s float64
	if st.deltaZero {
		for i, f := range fy {
			x := g*f - r*z1[i]
			dx[i] = x
			x *= w[i]
			s += x * x
		}
	} else {
		for i, d := range st.acor[:n] {
			x := g*fy[i] - r*z1[i] - d
			dx[i] = x
			x *= w[i]
			s += x * x
		}
	}
	nrm := math.Sqrt(s / float64(n))
	ok := finite(nrm)
	st.nonFinite = st.nonFinite || !ok
	return nrm, ok
}

// iterate runs the Newton iterations from Δ = st.acor, whose residual's
// norm is bnorm. It reports convergence, or whether the failure is
// recoverable (a retry with a fresh preconditioner may converge).
func (st *bdfStepper) iterate(t, bnorm float64) (ok, recoverable bool) {
	hs := &st.hs
	var delp float64
	for m := 0; ; m++ {
		if !st.linearSolve(t, m, bnorm) {
			return false, true
		}
		del, acnrm := st.update()
		if !finite(del) {
			return false, true
		}
		if m > 0 {
			st.crate = math.Max(bdfRateDown*st.crate, del/delp)
		}
		if del*math.Min(1, st.crate) <= hs.tq4 {
			st.acnrm = del
			if m > 0 {
				st.acnrm = acnrm
			}
			return true, false
		}
		if m >= 1 && del > bdfDiverge*delp {
			return false, true
		}
		delp = del
		if m+1 >= bdfMaxIters {
			return false, true
		}
		if bnorm, ok = st.residual(t); !ok {
			return false, true
		}
	}
}

// update applies the Newton correction: Δ += δ and the iterate
// in.ynew = z₀(0) + Δ, returning ‖δ‖ and ‖Δ‖ (weighted RMS).
func (st *bdfStepper) update() (del, acnrm float64) {
	n := len(st.acor)
	acor, dx, y, z0, w := st.acor[:n], st.dx[:n], st.in.ynew[:n], st.hs.p0[:n], st.ewt[:n]
	first := st.deltaZero
	var sd, sa float64
	for i, d := range dx {
		a := d
		if !first {
			a += acor[i]
		}
		acor[i] = a
		y[i] = z0[i] + a
		d *= w[i]
		a *= w[i]
		sd += d * d
		sa += a * a
	}
	st.yIter, st.deltaZero = st.in.ynew, false
	return math.Sqrt(sd / float64(n)), math.Sqrt(sa / float64(n))
}

// linearSolve replaces st.dx = b, of norm bnorm, by the solution of
// (I − γJ) x = b to 0.05·tq4 in the weighted norm (cvLsSolve): a right-hand
// side already that small is the answer itself on the first iteration and
// zero after. GMRES that reduced the residual without reaching the
// tolerance is accepted on every iteration, an inexact Newton step whose
// accuracy the convergence test on the corrections still decides (Dembo,
// Eisenstat and Steihaug); CVODE accepts it on the first iteration only
// and fails the attempt after. On the merged full layer's final approach
// at D = 32, where hundreds of modes are stiff beyond the deflation
// preconditioner's, that failed one step in seven, each failure followed
// by two fresh setups that reduced GMRES's residual no further and by a
// step a quarter as long; accepted, the integration from a checkpoint at
// t = 2.56·10⁷ went 2.6 times as far in a minute, without a failure.
// With the dense LU the solve is direct while γ is within 30 % of the
// factorization's, else (staleLU) GMRES preconditioned by it.
func (st *bdfStepper) linearSolve(t float64, m int, bnorm float64) bool {
	in := st.in
	tol := bdfLinTol * st.hs.tq4
	if bnorm <= tol {
		if m > 0 {
			clear(st.dx)
		}
		return true
	}
	in.stats.LinearSolves++
	if st.lu != nil && st.prec == Preconditioner(st.lu) && (!st.staleLU() || math.Abs(st.hs.gamma/st.gammaSet-1) <= bdfSetupGamma) {
		// The dense LU of I − γ_setup J is solved with directly (modified
		// Newton), the correction scaled by 2/(1 + γ/γ_setup) for the change
		// of γ since the factorization (CVODE's scalesol).
		st.lu.Solve(st.x, st.dx)
		c := 2 / (1 + st.hs.gamma/st.gammaSet)
		for i, x := range st.x {
			st.dx[i] = c * x
		}
		return true
	}
	st.tNew = t
	sqrtN := math.Sqrt(float64(in.n))
	st.gm.workers = st.in.workers
	iters, out := st.gm.solve(st.dx, st.dx, bnorm*sqrtN, st.ewt, tol*sqrtN, st.applyFn, st.psolveFn)
	in.stats.KrylovIters += iters
	return out == gmresConverged || out == gmresReduced
}

// applyNewton writes (I − γJ)v into dst with J·v ≈ (f(t, y + σv) − f(t, y))/σ
// at the Newton iterate y = st.yIter, σ = 1/‖v‖ in the weighted norm, so
// that σv has unit size in units of the tolerance (CVODE's difference
// quotient).
func (st *bdfStepper) applyNewton(t float64, dst, v []float64) {
	in := st.in
	nv := st.wrms(v)
	if nv == 0 {
		clear(dst)
		return
	}
	sigma := 1 / nv
	for i, y := range st.yIter {
		st.jvY[i] = y + sigma*v[i]
	}
	in.f(t, st.jvY, dst)
	in.stats.FuncEvals++
	c := st.hs.gamma / sigma
	for i, f := range dst {
		dst[i] = v[i] - c*(f-st.fy[i])
	}
}

// wrms is the weighted root-mean-square norm with the step's weights.
func (st *bdfStepper) wrms(v []float64) float64 {
	w := st.ewt[:len(v)]
	var s float64
	for i, x := range v {
		x *= w[i]
		s += x * x
	}
	return math.Sqrt(s / float64(len(v)))
}
