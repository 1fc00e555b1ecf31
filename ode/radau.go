package ode

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Radau5 is the three-stage Radau IIA collocation method of order 5,
// L-stable and stiffly accurate, as Hairer and Wanner's radau5.f implements
// it (HNW II, IV.8):
//   - the stage equations are solved by simplified Newton iterations,
//     transformed with the eigenvectors of the method's matrix A so that each
//     iteration solves one real and one complex n × n system, with
//     γ̂/h·I − J and (α̂ + iβ̂)/h·I − J factored once per step size by LAPACK
//     (the complex one as the real 2n × 2n system of its real and imaginary
//     parts; γ̂, α̂ ± iβ̂ are the eigenvalues of A⁻¹);
//   - the Jacobian is kept from step to step while the iteration contracts
//     by a factor ≤ 10⁻³, and the step and its factorization too when the
//     controller would grow the step by less than 20 %;
//   - the error estimate is the embedded order-3 formula filtered through
//     (γ̂/h·I − J)⁻¹ (HNW II, eq. 8.19–8.20);
//   - the step is chosen by Gustafsson's predictive controller with a safety
//     factor that falls with the number of Newton iterations;
//   - the continuous extension is the collocation polynomial, which also
//     gives the Newton iteration its starting values on the next step.
//
// Unlike radau5.f, which replaces rtol by 0.1·rtol^(2/3), it uses the
// tolerances as given, as scipy's Radau does: the error estimate is of
// order 3 and the solution of order 5, so at tight tolerances the error is
// well below them. It takes the Jacobian from Problem.Jac or by finite
// differences (n evaluations) and refuses states larger than MaxDenseDim.
var Radau5 Method = radau5{}

type radau5 struct{}

func (radau5) Name() string { return "Radau5" }

// Family returns DenseImplicit.
func (radau5) Family() Family { return DenseImplicit }

// Constants of radau5.f. The nodes c₁, c₂, c₃ = 1; γ̂ and α̂ ± iβ̂ are the
// eigenvalues of A⁻¹ and T its real eigenvector basis,
// T⁻¹A⁻¹T = [[γ̂, 0, 0], [0, α̂, −β̂], [0, β̂, α̂]]; radauErrWeights are the
// weights e_i of the error estimate, err = γ₀(h f(t, y) + Σ e_i Z_i),
// γ₀ = 1/γ̂ (radau5.f's DD1–DD3).
var (
	radauC1         = (4 - math.Sqrt(6)) / 10
	radauC2         = (4 + math.Sqrt(6)) / 10
	radauErrWeights = [3]float64{-(13 + 7*math.Sqrt(6)) / 3, (-13 + 7*math.Sqrt(6)) / 3, -1.0 / 3}

	radauGamma = 30 / (6 + math.Cbrt(81) - math.Cbrt(9))
	radauAlpha = radauAlpha0 / (radauAlpha0*radauAlpha0 + radauBeta0*radauBeta0)
	radauBeta  = radauBeta0 / (radauAlpha0*radauAlpha0 + radauBeta0*radauBeta0)

	radauAlpha0 = (12 - math.Cbrt(81) + math.Cbrt(9)) / 60
	radauBeta0  = (math.Cbrt(81) + math.Cbrt(9)) * math.Sqrt(3) / 60

	radauT = [3][3]float64{
		{9.1232394870892942792e-02, -0.14125529502095420843, -3.0029194105147424492e-02},
		{0.24171793270710701896, 0.20412935229379993199, 0.38294211275726193779},
		{0.96604818261509293619, 1, 0},
	}
	radauTI = [3][3]float64{
		{4.3255798900631553510, 0.33919925181580986954, 0.54177053993587487119},
		{-4.1787185915519047273, -0.32768282076106238708, 0.47662355450055045196},
		{-0.50287263494578687595, 2.5719269498556054292, -0.59603920482822492497},
	}
)

// Parameters of radau5.f's iteration and step control.
const (
	radauMaxNewton = 7     // NIT
	radauMaxFixed  = 50    // iterations allowed with a fixed step
	radauKeepJac   = 0.001 // THET: keep the Jacobian below this contraction rate
	radauKeepStep  = 1.2   // QUOT2: keep h and the LU when h_new/h ∈ [1, 1.2]
	radauDivergent = 0.99  // a contraction rate above this fails the step
	radauErrFloor  = 1e-10 // error estimates are at least this
	radauFirstCut  = 0.1   // a rejected first step is retried 10 times shorter
)

// radauNoEstimate is the error norm of an attempt that failed before its
// error estimate (the Newton iteration or the factorization); the step is
// shrunk by the stepper's factor instead (newton()).
const radauNoEstimate = math.MaxFloat64

func (radau5) newStepper(in *Integrator) stepper {
	n := in.n
	st := &radauStepper{in: in, jac: newDenseJacobian(in)}
	vec := func() []float64 { return make([]float64, n) }
	for k := range st.z {
		st.z[k], st.w[k] = vec(), vec()
	}
	st.scal, st.u, st.est, st.rhs2 = vec(), vec(), vec(), make([]float64, 2*n)
	st.poly = [][]float64{vec(), vec(), vec()}
	return st
}

type radauStepper struct {
	in  *Integrator
	p   *Problem
	jac denseJacobian

	e1, e2   blas64.General // γ̂/h·I − J and the real form of (α̂+iβ̂)/h·I − J, factored
	ip1, ip2 []int
	hLU      float64 // the h of the factorizations; 0 when none

	jacAtStart bool // jac was evaluated at the current step's start (CALJAC)
	needJac    bool // evaluate it before the next attempt
	keepLU     bool // the last step contracted fast: limit may keep its h

	z, w  [3][]float64 // stage increments Z_i = Y_i − y, and W = T⁻¹Z
	poly  [][]float64  // the last accepted step's collocation polynomial, Hairer form
	hOld  float64      // and its step
	first bool         // no accepted step: Newton starts from Z = 0
	retry bool         // the last attempt was rejected

	// The Newton iteration (HNW II, IV.8, eq. 8.12–8.15): its stopping
	// tolerance in units of the error weights (radau5.f's FNEWT), the
	// factor η = θ/(1−θ) of the stopping test η‖ΔZ‖ ≤ tol, carried from
	// step to step (FACCON), its contraction rate θ, and its iterations in
	// the last attempt.
	newtonTol, eta, theta float64
	iterations            int
	rejectScale           float64 // the stepper's factor for a rejected attempt, else 0

	scal, u, est, rhs2 []float64
}

func (st *radauStepper) begin(p *Problem) error {
	n := st.in.n
	if err := checkDenseDim(Radau5.Name(), n); err != nil {
		return err
	}
	if st.e1.Data == nil {
		st.e1 = blas64.General{Rows: n, Cols: n, Stride: max(n, 1), Data: make([]float64, n*n)}
		st.e2 = blas64.General{Rows: 2 * n, Cols: 2 * n, Stride: max(2*n, 1), Data: make([]float64, 4*n*n)}
		st.ip1, st.ip2 = make([]int, n), make([]int, 2*n)
	}
	st.p, st.eta = p, 1
	// radau5.f: FNEWT = max(10 ε/rtol, min(0.03, √rtol)).
	st.newtonTol = math.Max(10*eps/st.in.rtol, math.Min(0.03, math.Sqrt(st.in.rtol)))
	st.forget()
	return nil
}

// forget starts afresh from the current state: a new Jacobian and
// factorization, Newton from zero (Auto switches to Radau5 after the
// explicit method moved the state).
func (st *radauStepper) forget() {
	st.needJac, st.jacAtStart, st.keepLU, st.hLU = true, false, false, 0
	st.first, st.retry = true, false
	st.jac.forget()
}

func (st *radauStepper) radius() float64               { return st.jac.radius() }
func (st *radauStepper) order() int                    { return 5 }
func (st *radauStepper) hermiteDense() (float64, bool) { return 0, false }
func (st *radauStepper) active() int                   { return 0 }
func (st *radauStepper) names() []string               { return []string{Radau5.Name()} }

func (st *radauStepper) controller() controllerDefaults {
	// radau5.f: SAFE = 0.9, FACL = 5, FACR = 1/8, error estimate of order 3.
	return controllerDefaults{errorOrder: 3, predictive: true, safety: 0.9, minScale: 0.2, maxScale: 8}
}

// newton reports the last attempt's Newton iteration: the controller's
// safety factor falls as min(1, (2·NIT+1)/(iterations+2·NIT)) (radau5.f),
// and a failed iteration, or a rejected first step, sets the step's own
// factor.
func (st *radauStepper) newton() (safetyScale, rejectScale float64) {
	return math.Min(1, float64(2*radauMaxNewton+1)/float64(st.iterations+2*radauMaxNewton)), st.rejectScale
}

// limit keeps the factored step when h exceeds it by less than 20 % and
// the last step contracted fast (radau5.f, QUOT1 and QUOT2), unless two of
// it would reach T1, where the driver ends the solve in one or two steps
// (radau5.f tests the end of the interval first); fixed steps are taken as
// they are.
func (st *radauStepper) limit(t, h float64) float64 {
	q := h / st.hLU
	nearEnd := (t+2*st.hLU-st.p.T1)*h >= 0
	if st.keepLU && !st.in.fixedStep && q >= 1 && q <= radauKeepStep && !nearEnd {
		return st.hLU
	}
	return h
}

// attempt takes the step (t, h): the Newton iteration, the error estimate
// and, for a step that will be accepted, in.f1 = f(t+h, y₁).
func (st *radauStepper) attempt(t, h float64) float64 {
	in := st.in
	st.keepLU, st.rejectScale, st.iterations = false, 0, 0
	defer func() { st.retry = true }() // accept clears it
	if st.needJac {
		st.jac.eval(st.p, t)
		st.needJac, st.jacAtStart, st.hLU = false, true, 0
	}
	if h != st.hLU && !st.factor(h) {
		st.fail(0.5)
		return radauNoEstimate
	}
	for i, y := range in.y {
		st.scal[i] = in.atol[i] + in.rtol*math.Abs(y)
	}
	st.startValues(h)
	if ok, shrink := st.iterate(t, h); !ok {
		st.fail(shrink)
		if shrink == 0 {
			return math.NaN() // the driver shrinks the step as after any NaN
		}
		return radauNoEstimate
	}
	for i, y := range in.y {
		in.ynew[i] = y + st.z[2][i]
	}
	err := 0.0 // a fixed step is accepted whatever its error
	if !in.fixedStep {
		err = st.estimate(t, h)
	}
	if err > 1 {
		st.rejected()
		return err
	}
	in.f(t+h, in.ynew, in.f1)
	in.stats.FuncEvals++
	if !allFinite(in.f1) {
		st.fail(0)
		return math.NaN()
	}
	return err
}

// rejected prepares the retry of a step whose error is too large: a fresh
// Jacobian unless the current one is (radau5.f), and a first step ten
// times shorter.
func (st *radauStepper) rejected() {
	if !st.jacAtStart {
		st.needJac = true
	}
	if st.first {
		st.rejectScale = radauFirstCut
	}
}

// fail ends an attempt that failed before its error estimate (radau5.f
// label 78 and the slow-convergence exit): the step shrinks by shrink (0:
// the driver's choice), with a fresh Jacobian unless the current one is.
func (st *radauStepper) fail(shrink float64) {
	st.rejectScale = shrink
	if !st.jacAtStart {
		st.needJac = true
	}
}

// factor forms and factors E₁ = γ̂/h·I − J and E₂ = [[α̂/h·I − J, −β̂/h·I],
// [β̂/h·I, α̂/h·I − J]]; false if either is singular.
func (st *radauStepper) factor(h float64) bool {
	n, j := st.in.n, st.jac.a
	g, a, b := radauGamma/h, radauAlpha/h, radauBeta/h
	e1, e2, n2 := st.e1.Data, st.e2.Data, 2*n
	clear(e2)
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			v := -j[r*n+c]
			e1[r*n+c] = v
			e2[r*n2+c] = v
			e2[(n+r)*n2+n+c] = v
		}
		e1[r*n+r] += g
		e2[r*n2+r] += a
		e2[(n+r)*n2+n+r] += a
		e2[r*n2+n+r] = -b
		e2[(n+r)*n2+r] = b
	}
	st.hLU = 0
	for _, e := range [2]struct {
		lu   blas64.General
		ipiv []int
	}{{st.e1, st.ip1}, {st.e2, st.ip2}} {
		st.in.stats.Decompositions++
		if !lapack64.Getrf(e.lu, e.ipiv) {
			return false
		}
	}
	st.hLU = h
	return true
}

// startValues sets Z and W for the Newton iteration: zero on the first
// step, else the last step's collocation polynomial u extrapolated to the
// new stages (radau5.f): Z_k = u(θ_k) − y with θ_k = 1 + c_k h/h_old, and
// y − y_old = F₁, so Z_k = θ_k(F₁ + (1−θ_k)(F₂ + θ_k F₃)) − F₁.
func (st *radauStepper) startValues(h float64) {
	if st.first {
		for k := range st.z {
			clear(st.z[k])
			clear(st.w[k])
		}
		return
	}
	var theta [3]float64
	for k, c := range [3]float64{radauC1, radauC2, 1} {
		theta[k] = 1 + c*h/st.hOld
	}
	f1, f2, f3 := st.poly[0], st.poly[1], st.poly[2]
	for i := range st.u {
		var z [3]float64
		for k, th := range theta {
			z[k] = th*(f1[i]+(1-th)*(f2[i]+th*f3[i])) - f1[i]
			st.z[k][i] = z[k]
		}
		for k := range st.w {
			st.w[k][i] = radauTI[k][0]*z[0] + radauTI[k][1]*z[1] + radauTI[k][2]*z[2]
		}
	}
}

// iterate runs the simplified Newton iteration on the stage equations. It
// returns false with the factor to shrink the step by when the iteration
// diverges, converges too slowly to finish within radauMaxNewton
// iterations (radau5.f's estimate, HNW II, eq. 8.15), or runs out of them;
// false and 0 when it meets NaN or Inf. With a fixed step, which cannot
// shrink, it iterates while it contracts, up to radauMaxFixed times.
func (st *radauStepper) iterate(t, h float64) (ok bool, shrink float64) {
	st.eta = math.Pow(math.Max(st.eta, eps), 0.8)
	st.theta = radauKeepJac
	maxIter := radauMaxNewton
	if st.in.fixedStep {
		maxIter = radauMaxFixed
	}
	var corrPrev, ratePrev float64
	for {
		if st.iterations >= maxIter {
			return false, 0.5
		}
		corr := st.newtonStep(t, h) // ‖ΔZ‖, scaled
		st.iterations++
		if !finite(corr) {
			return false, 0
		}
		if k := st.iterations; k > 1 && k < maxIter {
			rate := corr / corrPrev
			if k == 2 {
				st.theta = rate
			} else {
				st.theta = math.Sqrt(rate * ratePrev)
			}
			ratePrev = rate
			if st.theta >= radauDivergent {
				return false, 0.5
			}
			st.eta = st.theta / (1 - st.theta)
			left := float64(radauMaxNewton - 1 - k)
			// The error left after the iterations still allowed, in units of the tolerance.
			if predicted := st.eta * corr * math.Pow(st.theta, left) / st.newtonTol; predicted >= 1 && !st.in.fixedStep {
				return false, 0.8 * math.Pow(math.Max(1e-4, math.Min(20, predicted)), -1/(4+left))
			}
		}
		corrPrev = math.Max(corr, eps)
		st.update()
		if st.eta*corr <= st.newtonTol {
			return true, 0
		}
	}
}

// newtonStep solves the transformed linear systems of one iteration for
// the correction ΔW, left in st.z, and returns its scaled RMS norm.
func (st *radauStepper) newtonStep(t, h float64) float64 {
	in, n := st.in, st.in.n
	nodes := [3]float64{radauC1, radauC2, 1}
	for k, c := range nodes {
		for i, y := range in.y {
			st.u[i] = y + st.z[k][i]
		}
		in.f(t+c*h, st.u, st.z[k])
	}
	in.stats.FuncEvals += 3
	g, a, b := radauGamma/h, radauAlpha/h, radauBeta/h
	ti := &radauTI
	for i := 0; i < n; i++ {
		f1, f2, f3 := st.z[0][i], st.z[1][i], st.z[2][i]
		w1, w2, w3 := st.w[0][i], st.w[1][i], st.w[2][i]
		st.z[0][i] = ti[0][0]*f1 + ti[0][1]*f2 + ti[0][2]*f3 - g*w1
		st.rhs2[i] = ti[1][0]*f1 + ti[1][1]*f2 + ti[1][2]*f3 - a*w2 + b*w3
		st.rhs2[n+i] = ti[2][0]*f1 + ti[2][1]*f2 + ti[2][2]*f3 - a*w3 - b*w2
	}
	st.solve(st.e1, st.ip1, st.z[0])
	st.solve(st.e2, st.ip2, st.rhs2)
	copy(st.z[1], st.rhs2[:n])
	copy(st.z[2], st.rhs2[n:])
	return st.norm(st.z[:]...)
}

// update adds the correction to W and sets Z = T W.
func (st *radauStepper) update() {
	t := &radauT
	for i := range st.u {
		w1 := st.w[0][i] + st.z[0][i]
		w2 := st.w[1][i] + st.z[1][i]
		w3 := st.w[2][i] + st.z[2][i]
		st.w[0][i], st.w[1][i], st.w[2][i] = w1, w2, w3
		st.z[0][i] = t[0][0]*w1 + t[0][1]*w2 + t[0][2]*w3
		st.z[1][i] = t[1][0]*w1 + t[1][1]*w2 + t[1][2]*w3
		st.z[2][i] = t[2][0]*w1 + w2
	}
}

func (st *radauStepper) solve(lu blas64.General, ipiv []int, r []float64) {
	st.in.stats.LinearSolves++
	luSolve(lu, ipiv, r)
}

// estimate returns the scaled error of the step (radau5.f's ESTRAD;
// HNW II, eq. 8.19–8.20): e = (γ̂/h·I − J)⁻¹(f(t, y) + Σ e_i Z_i/h). On
// the first step and after a rejection, a large estimate is refined once
// with f(t, y + e) in place of f(t, y), which damps the stiff components.
func (st *radauStepper) estimate(t, h float64) float64 {
	in := st.in
	d1, d2, d3 := radauErrWeights[0]/h, radauErrWeights[1]/h, radauErrWeights[2]/h
	f2 := st.rhs2[:in.n] // free after the iteration
	for i := range f2 {
		f2[i] = d1*st.z[0][i] + d2*st.z[1][i] + d3*st.z[2][i]
		st.est[i] = f2[i] + in.f0[i]
	}
	st.solve(st.e1, st.ip1, st.est)
	err := math.Max(st.norm(st.est), radauErrFloor)
	if err < 1 || !(st.first || st.retry) {
		return err
	}
	for i, y := range in.y {
		st.u[i] = y + st.est[i]
	}
	in.f(t, st.u, st.est)
	in.stats.FuncEvals++
	for i, v := range f2 {
		st.est[i] += v
	}
	st.solve(st.e1, st.ip1, st.est)
	return math.Max(st.norm(st.est), radauErrFloor)
}

// norm is the RMS norm of the vectors vs together, each component divided
// by its weight atol_i + rtol·|y_i| (radau5.f's SCAL); NaN stays NaN.
func (st *radauStepper) norm(vs ...[]float64) float64 {
	var sum float64
	for _, v := range vs {
		for i, s := range st.scal {
			e := v[i] / s
			sum += e * e
		}
	}
	return math.Sqrt(sum / float64(len(vs)*len(st.scal)))
}

// accept keeps the step's collocation polynomial, for the dense output and
// the next starting values, and decides whether the Jacobian is kept.
func (st *radauStepper) accept(_, h float64) {
	st.collocationPolynomial()
	st.hOld, st.first, st.retry = h, false, false
	st.needJac, st.jacAtStart = st.theta > radauKeepJac, false
	st.keepLU = !st.needJac
}

// collocationPolynomial sets st.poly to the Hairer form of the step's
// collocation polynomial, u(t + θh) = y + θ(F₁ + (1−θ)(F₂ + θF₃)), the
// cubic with u(t + c_i h) = y + Z_i: F₁ = Z₃ and, with
// r_i = (Z_i − c_i Z₃)/(c_i(1 − c_i)), F₃ = (r₂ − r₁)/(c₂ − c₁),
// F₂ = r₁ − c₁F₃.
func (st *radauStepper) collocationPolynomial() {
	c1, c2 := radauC1, radauC2
	for i := range st.u {
		z1, z2, z3 := st.z[0][i], st.z[1][i], st.z[2][i]
		r1 := (z1 - c1*z3) / (c1 * (1 - c1))
		r2 := (z2 - c2*z3) / (c2 * (1 - c2))
		f3 := (r2 - r1) / (c2 - c1)
		st.poly[0][i], st.poly[1][i], st.poly[2][i] = z3, r1-c1*f3, f3
	}
}

// dense returns the collocation polynomial of the last accepted step.
func (st *radauStepper) dense(_, _ float64) [][]float64 { return st.poly }
