package ode

import (
	"fmt"
	"math"
)

// ROCK4 is Abdulle's stabilized explicit Runge–Kutta method of order 4
// (A. Abdulle, Fourth order Chebyshev methods with recurrence relation, SIAM
// J. Sci. Comput. 23 (2002) 2041–2054; the code rock4.f). Each step is a
// Chebyshev recurrence of degree m followed by a four-stage finishing
// procedure: m + 4 evaluations (the last is f(t+h, y₁), reused by the next
// step). The stability domain contains the real interval [−0.353·(m+4)², 0],
// so the number of stages grows only with the square root of h·ρ, ρ the
// spectral radius of ∂f/∂y: for problems whose Jacobian has a (nearly) real
// spectrum, such as diffusion or gradient flows, the step is set by accuracy,
// not stability. The degree is taken from ρ (Problem.SpectralRadius, else a
// nonlinear power iteration as in rkc.f and rock4.f, refreshed every 10
// accepted steps) and capped at 152 stages, which caps h at 0.8·(152²·0.353
// − 3)/ρ. The error estimate is the embedded order-3 formula of the
// finishing procedure; the dense output is the cubic Hermite interpolant.
var ROCK4 Method = rock4Method{}

type rock4Method struct{}

func (rock4Method) Name() string { return "ROCK4" }

// Family returns Stabilized.
func (rock4Method) Family() Family { return Stabilized }

func (rock4Method) newStepper(in *Integrator) stepper {
	n := in.n
	st := &rock4Stepper{in: in}
	slab := make([]float64, 13*n)
	for _, v := range []*[]float64{&st.prev, &st.cur, &st.next, &st.tmp, &st.k1, &st.k2, &st.k3, &st.k4, &st.eig, &st.fz} {
		*v, slab = slab[:n:n], slab[n:]
	}
	st.vecs = [][]float64{slab[:n:n], slab[n : 2*n : 2*n], slab[2*n : 3*n : 3*n]}
	return st
}

// ROCK4's stage limits (rock4.f): at most 152 stages, the stability interval
// of m stages is ≈ 0.353·m².
const (
	rock4MaxStages      = 152
	rock4StabilitySlope = 0.353
	rock4RhoRefresh     = 10  // accepted steps between spectral-radius estimates
	rock4RhoSafety      = 1.2 // rkc.f and rock4.f enlarge the estimate by 20 %
)

type rock4Stepper struct {
	in *Integrator
	p  *Problem

	rho     float64 // spectral-radius bound in use
	rhoLeft int     // accepted steps it may still serve; 0 means stale
	rhoErr  error   // why the last bound could not be had (limit returned NaN)

	prev, cur, next, tmp []float64 // Chebyshev recurrence and finishing stages
	k1, k2, k3, k4       []float64
	eig, fz              []float64 // power iteration: eigenvector estimate, f at the probe

	vecs       [][]float64
	denseReady bool
	span       float64 // |T1 − T0| (for the power iteration's tolerance)
}

func (st *rock4Stepper) begin(p *Problem) error {
	st.p, st.rhoLeft, st.span = p, 0, math.Abs(p.T1-p.T0)
	for i := range st.eig {
		st.eig[i] = 0
	}
	return nil
}

func (st *rock4Stepper) order() int                    { return 4 }
func (st *rock4Stepper) active() int                   { return 0 }
func (st *rock4Stepper) names() []string               { return []string{"ROCK4"} }
func (st *rock4Stepper) radius() float64               { return st.rho }
func (st *rock4Stepper) hermiteDense() (float64, bool) { return st.rho, true }

// forget drops the spectral-radius estimate (Auto switches to ROCK4 after
// steps of another method, during which ρ may have changed).
func (st *rock4Stepper) forget() { st.rhoLeft = 0 }

// controller is a PI controller with β₁ = 0.14, β₂ = 0.08 (close to
// Söderlind's H211PI) and rock4.f's clamps h_new/h ∈ [0.1, 2]. rock4.f's own
// predictive controller (safety 0.8) rejects about 9 % of the steps on the
// flow of linattn, where its steps vary smoothly over long plateaus; this
// one rejects 2 % and takes 10 % fewer evaluations at the same accuracy
// (D = 16 power-law run: 405k against 453k, drop times to 8·10⁻⁸ both).
func (st *rock4Stepper) controller() controllerDefaults {
	return controllerDefaults{errorOrder: 3, safety: 0.9, beta1: 0.14, beta2: 0.08, minScale: 0.1, maxScale: 2}
}

func (st *rock4Stepper) accept(_, _ float64) {
	st.rhoLeft--
	st.denseReady = false
}

// limit refreshes ρ when it is stale and shortens h to the largest step 152
// stages can take. It returns NaN when ρ is not finite (limitFailure says
// why): no number of stages is then known to be stable.
func (st *rock4Stepper) limit(t, h float64) float64 {
	if st.rhoLeft <= 0 {
		if st.rho, st.rhoErr = st.spectralRadius(t); st.rhoErr != nil {
			return math.NaN()
		}
		st.rhoLeft = rock4RhoRefresh
	}
	// Compared in floating point: h·ρ may be +Inf.
	if math.Sqrt((3+math.Abs(h)*st.rho)/rock4StabilitySlope)+1 >= rock4MaxStages+1 {
		hmax := 0.8 * (rock4MaxStages*rock4MaxStages*rock4StabilitySlope - 3) / st.rho
		return math.Copysign(hmax, h)
	}
	return h
}

// rock4Stages is the number of stages rock4.f chooses for h·ρ = z.
func rock4Stages(z float64) int {
	return int(math.Sqrt((3+z)/rock4StabilitySlope)) + 1
}

// degree returns the index into the coefficient tables of the smallest
// tabulated Chebyshev degree for the step h, and the offset of its
// recurrence coefficients.
func (st *rock4Stepper) degree(h float64) (idx, offset int) {
	m := max(rock4Stages(math.Abs(h)*st.rho), 5) - 4
	for i, d := range rock4Degrees {
		if d >= m {
			return i, offset
		}
		offset += 2*d - 1
	}
	panic(fmt.Sprintf("ode: ROCK4: degree %d beyond the table (limit not applied)", m))
}

// attempt takes one ROCK4 step: the Chebyshev recurrence (rock4.f, RTSTEP)
// y_j = h μ_j f(y_{j−1}) − κ_j y_{j−2} + (1 + κ_j) y_{j−1}, then the
// finishing four-stage method and its embedded error estimate.
func (st *rock4Stepper) attempt(t, h float64) float64 {
	in := st.in
	st.denseReady = false
	idx, off := st.degree(h)
	deg := rock4Degrees[idx]
	rec := rock4Recurrence[off : off+2*deg-1]
	y := in.y
	a := h * rec[0]
	for i := range y {
		st.prev[i] = y[i]
		st.cur[i] = y[i] + a*in.f0[i]
	}
	tCur, tPrev := t+a, t
	for j := 2; j <= deg; j++ {
		mu, kap := h*rec[2*j-3], -rec[2*j-2]
		nu := 1 - kap
		in.f(tCur, st.cur, st.k1)
		next, cur, prev := st.next, st.cur, st.prev
		k1 := st.k1[:len(next)]
		cur, prev = cur[:len(next)], prev[:len(next)] // no bounds checks below
		for i := range next {
			next[i] = mu*k1[i] + nu*cur[i] + kap*prev[i]
		}
		tCur, tPrev = mu+nu*tCur+kap*tPrev, tCur
		st.prev, st.cur, st.next = cur, next, prev
	}
	in.stats.FuncEvals += deg - 1
	return st.finish(t, tCur, h, idx)
}

// finish applies the finishing procedure of degree index idx from the
// recurrence's last stage st.cur at time tc, for the step (t, h).
func (st *rock4Stepper) finish(t, tc, h float64, idx int) float64 {
	in := st.in
	fa, fb, fe := &rock4FinishA[idx], &rock4FinishB[idx], &rock4FinishBHat[idx]
	u := st.cur
	in.f(tc, u, st.k1)
	for i := range u {
		st.tmp[i] = u[i] + h*fa[0]*st.k1[i]
	}
	in.f(tc+h*fa[0], st.tmp, st.k2)
	for i := range u {
		st.tmp[i] = u[i] + h*(fa[1]*st.k1[i]+fa[2]*st.k2[i])
	}
	in.f(tc+h*(fa[1]+fa[2]), st.tmp, st.k3)
	for i := range u {
		st.tmp[i] = u[i] + h*(fa[3]*st.k1[i]+fa[4]*st.k2[i]+fa[5]*st.k3[i])
	}
	in.f(tc+h*(fa[3]+fa[4]+fa[5]), st.tmp, st.k4)
	for i := range u {
		in.ynew[i] = u[i] + h*(fb[0]*st.k1[i]+fb[1]*st.k2[i]+fb[2]*st.k3[i]+fb[3]*st.k4[i])
	}
	in.f(t+h, in.ynew, in.f1)
	in.stats.FuncEvals += 5
	if !allFinite(in.f1) {
		return math.NaN()
	}
	var sum float64
	for i := range u {
		e := h * ((fe[0]-fb[0])*st.k1[i] + (fe[1]-fb[1])*st.k2[i] + (fe[2]-fb[2])*st.k3[i] + (fe[3]-fb[3])*st.k4[i] + fe[4]*in.f1[i])
		e /= in.scale(i)
		sum += e * e
	}
	return math.Sqrt(sum / float64(in.n))
}

func (st *rock4Stepper) dense(_, h float64) [][]float64 {
	if !st.denseReady {
		hermite(st.vecs, st.in.y, st.in.ynew, st.in.f0, st.in.f1, h)
		st.denseReady = true
	}
	return st.vecs
}

func (st *rock4Stepper) limitFailure() error { return st.rhoErr }

// spectralRadius returns ρ at (t, in.y): the problem's bound if it has one,
// else the nonlinear power iteration of rkc.f (RKCRHO) and rock4.f: the
// difference quotients ‖f(y + δz) − f(y)‖/δ along the iterated direction z,
// started from the last eigenvector estimate (or f(y)), until two successive
// values agree to 1 %, then enlarged by 20 %. A bound that is not a finite
// number ≥ 0 is an error, as in OrdinaryDiffEq.jl's maxeig!, which reports
// the failure: taken as 0, it would give the fewest stages, unstable for
// any stiff problem.
func (st *rock4Stepper) spectralRadius(t float64) (float64, error) {
	in := st.in
	if st.p.SpectralRadius != nil {
		rho := st.p.SpectralRadius(t, in.y)
		if !(rho >= 0) || math.IsInf(rho, 0) {
			return 0, fmt.Errorf("ROCK4: Problem.SpectralRadius(%g, y) = %g, want a finite bound ≥ 0", t, rho)
		}
		return rho, nil
	}
	y := in.y
	sqrtEps := math.Sqrt(eps)
	ynrm, znrm := norm2(y), norm2(st.eig)
	if znrm == 0 {
		copy(st.eig, in.f0)
		znrm = norm2(st.eig)
	}
	if !finite(ynrm) || !finite(znrm) {
		return 0, fmt.Errorf("ROCK4: the spectral-radius estimate at t = %g needs ‖y‖ = %g and ‖f(y)‖ = %g, which overflow (give Problem.SpectralRadius)", t, ynrm, znrm)
	}
	dy := ynrm * sqrtEps
	if dy == 0 {
		dy = sqrtEps
	}
	z := st.tmp
	for i := range z {
		switch {
		case znrm != 0:
			z[i] = y[i] + st.eig[i]*dy/znrm
		default:
			z[i] = y[i] + dy/math.Sqrt(float64(in.n))
		}
	}
	var rho float64
	const maxIter = 50
	for it := 0; it < maxIter; it++ {
		in.f(t, z, st.fz)
		in.stats.FuncEvals++
		for i := range st.fz {
			st.fz[i] -= in.f0[i]
		}
		d := norm2(st.fz)
		prev := rho
		rho = d / dy
		if !finite(rho) {
			break // failed: reported below
		}
		if it >= 1 && math.Abs(rho-prev) <= 0.01*math.Max(rho, 1/st.span) {
			break
		}
		if d == 0 {
			break
		}
		for i := range z {
			z[i] = y[i] + st.fz[i]*dy/d
		}
	}
	for i := range z {
		st.eig[i] = z[i] - y[i]
	}
	if rho = rock4RhoSafety * rho; !finite(rho) {
		return 0, fmt.Errorf("ROCK4: the spectral-radius estimate at t = %g is %g: f overflows or is not finite near y (give Problem.SpectralRadius)", t, rho)
	}
	return rho, nil
}

const eps = 0x1p-52

func norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
