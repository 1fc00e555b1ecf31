package ode

import "math"

// BDF is the variable-order (1 to 5), variable-step backward
// differentiation method in fixed-leading-coefficient Nordsieck form, with
// CVODE's error test, step and order selection and inexact Newton
// iteration (bdf_coef.go). Each step solves y − γf(t, y) = a for the new
// state by Newton's method, whose linear systems with I − γJ are solved by
// GMRES, matrix-free (J·v by a difference quotient of f) and preconditioned
// by Problem.Precond: the Newton–Krylov scheme of Brown and Hindmarsh that
// makes stiff problems with millions of unknowns tractable when the stiff
// part of J has a cheap approximation. Without Precond it factors I − γJ
// densely (LU; J from Problem.Jac or finite differences) when the state
// has at most MaxDenseDim components and iterates with that factorization
// (modified Newton), as LSODE's and CVODE's direct solvers do, and runs
// GMRES unpreconditioned beyond.
//
// Its steps are set by accuracy alone on problems whose Jacobian has a
// real negative spectrum (BDF1–5 are stable on the whole negative real
// axis), and a step costs few evaluations of f: usually one or two Newton
// iterations of one or two GMRES iterations each. The dense output is the
// Nordsieck interpolation polynomial, continuous at the steps' ends
// (events); a Solution keeps the state of the solve at the steps' ends,
// thinned within Settings.DenseLimit, and takes the steps between the
// kept states again (bdfTrack).
//
// References:
//
//	A. C. Hindmarsh et al., SUNDIALS: Suite of nonlinear and
//	differential/algebraic equation solvers, ACM TOMS 31 (2005) 363–396;
//	the CVODE guide, "Mathematical Considerations" (the constants below).
//	P. N. Brown, G. D. Byrne, A. C. Hindmarsh, VODE: a variable-coefficient
//	ODE solver, SIAM J. Sci. Stat. Comput. 10 (1989) 1038–1051.
//	P. N. Brown, A. C. Hindmarsh, Reduced storage matrix methods in stiff
//	ODE systems, Appl. Math. Comput. 31 (1989) 40–91.
//	K. R. Jackson, R. Sacks-Davis, ACM TOMS 6 (1980) 295–318.
var BDF Method = bdfMethod{}

type bdfMethod struct{}

func (bdfMethod) Name() string { return "BDF" }

// Family returns Multistep.
func (bdfMethod) Family() Family { return Multistep }

func (bdfMethod) newStepper(in *Integrator) stepper { return newBDFStepper(in, bdfMaxOrder) }

// The control constants of CVODE (its guide, "Mathematical
// Considerations", and cvode_impl.h).
const (
	bdfEtaFirst     = 1e4  // largest step ratio after the first step (ETA_MAX_FS)
	bdfEtaMax       = 10   // largest step ratio after other steps (ETA_MAX_ES, ETA_MAX_GS)
	bdfEtaKeep      = 1.5  // a ratio below this keeps the step (ETA_MAX_FX)
	bdfEtaMinErr    = 0.1  // smallest ratio after an error test failure (ETA_MIN_EF)
	bdfEtaMaxErr    = 0.2  // largest ratio after two of them (ETA_MAX_EF)
	bdfEtaConvFail  = 0.25 // ratio after a Newton failure (ETA_CF)
	bdfBias1        = 6    // safety factors of the step ratios at orders q−1, q, q+1
	bdfBias2        = 6
	bdfBias3        = 10
	bdfAddon        = 1e-6 // ADDON: keeps the ratios finite
	bdfErrFailOrder = 3    // error test failures before the order is lowered (MXNEF1)
	bdfLongWait     = 10   // steps at order 1 after a restart (LONG_WAIT)
	bdfMaxIters     = 3    // Newton iterations (NLS_MAXCOR)
	bdfRateDown     = 0.3  // CRDOWN
	bdfDiverge      = 2    // RDIV
	bdfLinTol       = 0.05 // GMRES tolerance as a fraction of the Newton one (EPLIN)
	bdfSetupSteps   = 20   // steps between preconditioner setups (MSBP)
	bdfSetupGamma   = 0.3  // |γ/γ_setup − 1| that asks for a setup (DGMAX_LSETUP)
	bdfJacSteps     = 51   // steps between Jacobian evaluations (MSBJ)
	bdfJacGamma     = 0.2  // after a failure, |γ/γ_setup − 1| below this blames J (DGMAX)
	bdfDenseGamma   = 4    // γ/γ_setup beyond this factor, or below its inverse, refactors a large dense LU (staleLU)
	bdfStaleLUDim   = 256  // n from which the dense LU is kept while γ moves (staleLU)
	bdfNoEstimate   = math.MaxFloat64
)

// Why the last attempt of the current step failed.
const (
	bdfNoFailure = iota
	bdfConvFailure
	bdfErrFailure
)

// bdfStepper is the state of one BDF solve.
type bdfStepper struct {
	in       *Integrator
	p        *Problem
	hs       bdfHistory
	maxOrder int
	prec     Preconditioner // Problem.Precond, a dense LU, or nil
	lu       *denseLU
	gm       *gmres
	applyFn  func(dst, v []float64) // (I − γJ)v at (tNew, in.ynew)
	psolveFn func(z, r []float64)   // prec.Solve, or nil
	tNew     float64
	// startHistory, if not nil, sets the history of the first step h and
	// returns its order (tests of the order start from exact derivatives).
	startHistory func(z [bdfMaxOrder + 1][]float64, h float64) int

	ewt   []float64 // error weights 1/(rtol|y_i| + atol_i) at the step's start
	ewtNx []float64 // and at the end of the last accepted step
	acor  []float64 // the correction Δ of the current attempt
	saved []float64 // Δ kept for an order increase
	fy    []float64 // f at the Newton iterate
	yIter []float64 // the iterate: hs.p0 while Δ = 0 (deltaZero), then in.ynew

	deltaZero bool
	res       []float64 // the Newton residual, then its negative as GMRES's right-hand side
	dx        []float64 // the Newton correction
	x         []float64 // GMRES's solution
	jvY       []float64 // the difference-quotient probe

	started   bool
	ewtFresh  bool
	tStart    float64 // the start of the step being attempted
	nst       int     // accepted steps
	qNext     int     // order of the next step
	qWait     int     // steps before an order change is considered
	etaMax    float64
	hNext     float64 // the next step after an accepted one
	dsm       float64 // the last attempt's error estimate
	acnrm     float64 // ‖Δ‖
	savedTq5  float64
	lastFail  int
	errFails  int // error test failures of the current step
	crate     float64
	gammaSet  float64 // γ at the last preconditioner setup
	nstSetup  int     // steps at the last setup and Jacobian evaluation
	nstJac    int
	convFail  bool    // the last attempt's Newton iteration failed (newton())
	nonFinite bool    // and f was not finite at an iterate
	fixedStep float64 // FixedStep mode: no order changes

	vecs       [][]float64 // Hairer-form dense output of the last step
	denseReady bool

	// keepSetups records the preconditioner setups (setups, and the state
	// of the last fresh one in setupY) for a dense Solution's knots.
	keepSetups bool
	setups     bdfSetups
	setupY     []float64
}

func newBDFStepper(in *Integrator, maxOrder int) *bdfStepper {
	n := in.n
	st := &bdfStepper{in: in, maxOrder: maxOrder, gm: newGMRES(n, gmresKrylov)}
	vec := func() []float64 { return make([]float64, n) }
	for j := range st.hs.z {
		st.hs.z[j] = vec()
	}
	st.hs.p0, st.hs.p1 = vec(), vec()
	st.ewt, st.ewtNx, st.acor, st.saved, st.fy, st.res, st.dx, st.x, st.jvY = vec(), vec(), vec(), vec(), vec(), vec(), vec(), vec(), vec()
	for j := 0; j < bdfMaxOrder; j++ {
		st.vecs = append(st.vecs, vec())
	}
	st.applyFn = func(dst, v []float64) { st.applyNewton(st.tNew, dst, v) }
	return st
}

func (st *bdfStepper) begin(p *Problem) error {
	st.p = p
	switch {
	case p.Precond != nil:
		st.prec = p.Precond
	case st.in.n <= MaxDenseDim:
		if st.lu == nil {
			st.lu = newDenseLU(st.in, p)
		}
		st.lu.p, st.lu.have = p, false
		st.prec = st.lu
	default:
		st.prec = nil
	}
	if maxl := KrylovSpace(st.prec); maxl != st.gm.maxl {
		st.gm = newGMRES(st.in.n, maxl)
	}
	st.psolveFn = nil
	if st.prec != nil {
		st.psolveFn = st.prec.Solve
	}
	st.started, st.ewtFresh, st.nst, st.lastFail, st.errFails = false, false, 0, bdfNoFailure, 0
	st.hs.q, st.qNext, st.qWait, st.etaMax = 1, 1, 2, bdfEtaFirst
	st.hs.tau = [bdfMaxOrder + 2]float64{}
	st.savedTq5, st.crate, st.gammaSet = 0, 1, 0
	st.nstSetup, st.nstJac = 0, 0
	st.setups = bdfSetups{}
	return nil
}

func (st *bdfStepper) limit(_, h float64) float64 { return h }

// order is the order of the first steps, for the initial step size.
func (st *bdfStepper) order() int                    { return 2 }
func (st *bdfStepper) hermiteDense() (float64, bool) { return 0, false }
func (st *bdfStepper) active() int                   { return 0 }
func (st *bdfStepper) names() []string               { return []string{BDF.Name()} }

// controller is not used: BDF chooses its steps itself (nextStep). The
// values only pass the driver's validation.
func (st *bdfStepper) controller() controllerDefaults {
	return controllerDefaults{errorOrder: 1, safety: 0.9, beta1: 0.5, minScale: bdfEtaMinErr, maxScale: bdfEtaMax}
}

// newton reports a failed Newton iteration: the step shrinks by ETA_CF.
func (st *bdfStepper) newton() (safetyScale, rejectScale float64) {
	if st.convFail {
		return 1, bdfEtaConvFail
	}
	return 1, 0
}

// attempt takes the step (t, h): a pending order change and the rescaling
// of the history to h, the prediction, the Newton iteration for the
// correction, and the error estimate.
func (st *bdfStepper) attempt(t, h float64) float64 {
	in, hs := st.in, &st.hs
	st.denseReady, st.convFail, st.tStart = false, false, t
	st.fixedStep = 0
	if in.fixedStep {
		st.fixedStep = h
	}
	if !st.started {
		st.start(h)
	} else {
		st.adjust(h)
	}
	if !st.ewtFresh { // the first step; later ones take correct's
		for i, y := range in.y {
			st.ewt[i] = 1 / (in.rtol*math.Abs(y) + in.atol[i])
		}
		st.ewtFresh = true
	}
	hs.predict()
	hs.setCoefficients(h, st.qWait == 1)
	if !st.solveCorrector(t + h) {
		st.lastFail, st.etaMax = bdfConvFailure, 1
		if st.nonFinite {
			return math.NaN() // the driver shrinks the step as after any NaN
		}
		st.convFail = true
		return bdfNoEstimate
	}
	st.dsm = st.acnrm * hs.tq2
	if st.dsm > 1 {
		st.lastFail = bdfErrFailure
	}
	return st.dsm
}

// start sets the history of order 1 for the first step h: z₀ = y₀,
// z₁ = h f(t₀, y₀).
func (st *bdfStepper) start(h float64) {
	hs := &st.hs
	hs.q, hs.hScale, st.started, hs.predicted = 1, h, true, false
	for j := range hs.z {
		clear(hs.z[j])
	}
	if st.startHistory != nil {
		hs.q = st.startHistory(hs.z, h)
		st.qNext, st.qWait = hs.q, hs.q+1
		return
	}
	copy(hs.z[0], st.in.y)
	for i, f := range st.in.f0 {
		hs.z[1][i] = h * f
	}
}

// adjust applies the order the last step chose and rescales the history
// to the step h.
func (st *bdfStepper) adjust(h float64) {
	hs := &st.hs
	switch {
	case st.qNext == hs.q+1:
		hs.raiseOrder(st.saved)
		st.qWait = hs.q + 1
	case st.qNext == hs.q-1:
		hs.lowerOrder()
		st.qWait = hs.q + 1
	}
	st.qNext = hs.q
	if h != hs.hScale {
		hs.rescale(h / hs.hScale)
		hs.hScale = h // exactly: rescale's product may differ in the last bit
	}
}

// accept completes the step (t, h): the history takes the correction, the
// next step and order are chosen, and f₁ = z₁/h, which is f(t+h, y₁) as far
// as the Newton iteration has converged (the corrector equation makes
// z₁ = h·f at the final iterate), stands for the evaluation a one-step
// method would make.
func (st *bdfStepper) accept(_, h float64) {
	in, hs := st.in, &st.hs
	hs.correct(st.acor, h, in.rtol, in.atol, st.ewtNx)
	st.nst++
	st.qWait--
	if st.qWait == 1 && hs.q != st.maxOrder {
		copy(st.saved, st.acor)
		st.savedTq5 = hs.tq5
	}
	st.prepareNext(h)
	st.etaMax = bdfEtaMax
	st.lastFail, st.errFails = bdfNoFailure, 0
	st.ewt, st.ewtNx = st.ewtNx, st.ewt
	for i, z := range hs.z[1] {
		in.f1[i] = z / h
	}
}

// dense returns the Hairer-form vectors (see Tableau) of the Nordsieck
// polynomial of the last step (nordsieckVecs).
func (st *bdfStepper) dense(_, _ float64) [][]float64 {
	if !st.denseReady {
		nordsieckVecs(st.vecs, st.in.y, &st.hs.z, st.hs.q)
		st.denseReady = true
	}
	return st.vecs[:st.hs.q]
}

// nordsieckVecs writes into vecs[:q] the Hairer-form vectors of the
// Nordsieck polynomial p(θ) = Σ_j z_j (θ−1)^j of order q of a step that
// started at y0, θ = (t − t₀)/h, corrected by (1 − θ)(y₀ − p(0)) so that
// it starts at y₀ exactly (p(0) differs from it by the local error). The
// solve's dense output and a Solution's BDF steps (bdfTrack) share it, so
// that their values agree bit for bit.
func nordsieckVecs(vecs [][]float64, y0 []float64, z *[bdfMaxOrder + 1][]float64, q int) {
	var c [bdfMaxOrder + 1]float64
	for i, y := range y0 {
		for k := 0; k <= q; k++ { // c_k = Σ_{j≥k} C(j, k)(−1)^{j−k} z_j
			s := 0.0
			for j := k; j <= q; j++ {
				if (j-k)%2 == 0 {
					s += bdfBinomial[j][k] * z[j][i]
				} else {
					s -= bdfBinomial[j][k] * z[j][i]
				}
			}
			c[k] = s
		}
		c[1] -= y - c[0] // the linear correction; c₀ becomes y₀ and drops out
		splitHairer(c[1:q+1], vecs, i)
	}
}

// bdfBinomial[j][k] is C(j, k).
var bdfBinomial = [bdfMaxOrder + 1][bdfMaxOrder + 1]float64{
	{1},
	{1, 1},
	{1, 2, 1},
	{1, 3, 3, 1},
	{1, 4, 6, 4, 1},
	{1, 5, 10, 10, 5, 1},
}

// splitHairer writes the Hairer-form coefficients F₁…F_m (component i of
// vecs) of the polynomial g(θ) = Σ_k g_k θ^k of degree m−1:
// g = F₁ + (1−θ)(F₂ + θ(F₃ + (1−θ)(F₄ + …))), by alternately taking the
// value at θ = 1 and dividing by 1 − θ, and the value at 0 and dividing
// by θ. g is overwritten.
func splitHairer(g []float64, vecs [][]float64, i int) {
	for m, atOne := 0, true; len(g) > 0; m, atOne = m+1, !atOne {
		if atOne {
			v := 0.0
			for _, x := range g {
				v += x
			}
			vecs[m][i] = v
			// (g(θ) − g(1))/(1 − θ) = −Σ_k θ^k Σ_{j>k} g_j, built in
			// g[1:] and moved down.
			acc := 0.0
			for k := len(g) - 1; k >= 1; k-- {
				acc += g[k]
				g[k] = -acc
			}
		} else {
			vecs[m][i] = g[0] // (g(θ) − g(0))/θ
		}
		copy(g, g[1:])
		g = g[:len(g)-1]
	}
}
