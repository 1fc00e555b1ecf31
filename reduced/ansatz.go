package reduced

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/linattn/linattn/ode"
)

// Ansatz is the one-dimensional dynamics of the head that learns the
// (m+1)-th eigenvector (paper eq. 1Ddynamics, docs/math.md "Reduced dynamics"):
//
//	τ dv/dt = λ² v² − λ a v⁵,  λ = λ_{m+1}, a = a_{m+1},
//
// with the stable fixed point v* = (λ/a)^{1/3}.
type Ansatz struct {
	Lambda, A, Tau float64
}

// NewAnsatz validates the coefficients.
func NewAnsatz(lambda, a, tau float64) (Ansatz, error) {
	for _, p := range []struct {
		name string
		v    float64
	}{{"lambda", lambda}, {"a", a}, {"tau", tau}} {
		if !(p.v > 0) || math.IsInf(p.v, 0) {
			return Ansatz{}, fmt.Errorf("reduced: %s = %g, want a finite value > 0", p.name, p.v)
		}
	}
	return Ansatz{Lambda: lambda, A: a, Tau: tau}, nil
}

// VStar returns the fixed point v* = (λ/a)^{1/3}.
func (an Ansatz) VStar() float64 { return math.Cbrt(an.Lambda / an.A) }

// Rate returns dv/dt = (λ²v² − λav⁵)/τ.
func (an Ansatz) Rate(v float64) float64 {
	v2 := v * v
	return (an.Lambda*an.Lambda*v2 - an.Lambda*an.A*v2*v2*v) / an.Tau
}

// F is the antiderivative of the paper's eq. wolfram-solution, with its
// integrand corrected from v² to v⁵ (docs/math.md): with s = (a/λ)^{1/3},
//
//	F(u) = (s/6)[ln((s²u² + su + 1)/(s²u² − 2su + 1)) − 2√3 atan((2su + 1)/√3)] − 1/u,
//
// so that λ² t/τ = F(v) − F(v₀) for 0 < v₀ ≤ v < v*. TimeTo evaluates the
// difference without the cancellation of F(v) − F(v₀).
func (an Ansatz) F(u float64) float64 {
	s := math.Cbrt(an.A / an.Lambda)
	x := s * u
	return s/6*(math.Log((x*x+x+1)/(x*x-2*x+1))-2*math.Sqrt(3)*math.Atan((2*x+1)/math.Sqrt(3))) - 1/u
}

// logTerm is ln((x² + x + 1)/(x − 1)²) for 0 ≤ x < 1, accurate for small x.
func logTerm(x float64) float64 { return math.Log1p(x*(1+x)) - 2*math.Log1p(-x) }

// TimeTo returns the time the 1-D dynamics takes from v0 to v, for
// 0 < v0 ≤ v < v*, from the closed form. Each term of F(v) − F(v₀) is
// differenced analytically: −1/v + 1/v₀ = (v − v₀)/(v v₀) and
// atan α − atan β = atan((α − β)/(1 + αβ)) (αβ > 0 here), so the result keeps
// full relative precision even when v is close to v₀.
func (an Ansatz) TimeTo(v0, v float64) (float64, error) {
	vs := an.VStar()
	if !(v0 > 0) || !(v >= v0) || !(v < vs) {
		return 0, fmt.Errorf("reduced: TimeTo(v0 = %g, v = %g) needs 0 < v0 ≤ v < v* = %g", v0, v, vs)
	}
	return an.timeTo(v0, v), nil
}

func (an Ansatz) timeTo(v0, v float64) float64 {
	s := math.Cbrt(an.A / an.Lambda)
	x, x0 := s*v, s*v0
	sq3 := math.Sqrt(3)
	al, be := (2*x+1)/sq3, (2*x0+1)/sq3
	atanDiff := math.Atan((al - be) / (1 + al*be))
	f := s/6*(logTerm(x)-logTerm(x0)-2*sq3*atanDiff) + (v-v0)/(v*v0)
	return an.Tau / (an.Lambda * an.Lambda) * f
}

// VAt returns v(t) from v(0) = v0 (0 < v0 < v*) by inverting TimeTo with a
// safeguarded Newton iteration on [v0, v*): a Newton step in v, with
// dt/dv = 1/Rate(v), replaced by bisection whenever it leaves the bracket or
// fails to halve it (Numerical Recipes, rtsafe). t must be ≥ 0.
func (an Ansatz) VAt(v0, t float64) (float64, error) {
	vs := an.VStar()
	if !(v0 > 0 && v0 < vs) {
		return 0, fmt.Errorf("reduced: v0 = %g, want 0 < v0 < v* = %g", v0, vs)
	}
	if !(t >= 0) || math.IsInf(t, 0) {
		return 0, fmt.Errorf("reduced: t = %g, want a finite time ≥ 0", t)
	}
	if t == 0 {
		return v0, nil
	}
	lo, hi := v0, vs
	v := v0
	// Start from the small-v approximation t ≈ τ/λ²(1/v0 − 1/v).
	if g := 1/v0 - t*an.Lambda*an.Lambda/an.Tau; g > 1/vs {
		v = 1 / g
	} else {
		v = 0.5 * (lo + hi)
	}
	dxOld := hi - lo
	for iter := 0; iter < 200; iter++ {
		f := an.timeTo(v0, v) - t
		if f < 0 {
			lo = v
		} else {
			hi = v
		}
		if f == 0 {
			return v, nil
		}
		step := -f * an.Rate(v)
		next := v + step
		if !(next > lo && next < hi) || math.Abs(step) > 0.5*dxOld {
			next = 0.5 * (lo + hi)
			step = next - v
		}
		dxOld = math.Abs(step)
		// Converged to a few units of roundoff (v > 0 here).
		if next == v || hi-lo <= 4*epsilon*hi || math.Abs(step) <= 2*epsilon*next {
			return next, nil
		}
		v = next
	}
	return v, errors.New("reduced: VAt did not converge")
}

// Solve integrates the 1-D ODE numerically from v(0) = v0 with the ode
// package (DOP853, rtol 1e-13) and returns v at the given increasing times
// ≥ 0.
func (an Ansatz) Solve(ctx context.Context, v0 float64, times []float64) ([]float64, error) {
	if !(v0 > 0) || math.IsInf(v0, 0) {
		return nil, fmt.Errorf("reduced: v0 = %g, want a finite value > 0", v0)
	}
	if len(times) == 0 {
		return nil, nil
	}
	tEnd := times[len(times)-1]
	if !(times[0] >= 0) {
		return nil, fmt.Errorf("reduced: times[0] = %g, want ≥ 0", times[0])
	}
	if tEnd == 0 {
		out := make([]float64, len(times))
		for i := range out {
			out[i] = v0
		}
		return out, nil
	}
	f := func(_ float64, y, dy []float64) { dy[0] = an.Rate(y[0]) }
	res, err := ode.Solve(ctx, ode.Problem{Func: f, T0: 0, T1: tEnd, Y0: []float64{v0}},
		ode.Settings{Method: ode.DOP853, RTol: 1e-13, ATol: 1e-300, TEval: times})
	if err != nil {
		return nil, err
	}
	return res.YEval, nil
}

// HalfWay returns the value of v at which the loss of the ansatz,
// L(M_m) − 2λ²v³ + λa v⁶, is half-way between L(M_m) and L(M_{m+1}):
// with u = a v³/λ, 2u − u² = 1/2, so v = v*(1 − 1/√2)^{1/3}.
func (an Ansatz) HalfWay() float64 { return an.VStar() * math.Cbrt(1-1/math.Sqrt2) }

// LossDrop returns L(M_m) − L at value v: 2λ²v³ − λa v⁶ (docs/math.md, the loss
// with M = M_m + v³ e_{m+1}e_{m+1}ᵀ).
func (an Ansatz) LossDrop(v float64) float64 {
	v3 := v * v * v
	return 2*an.Lambda*an.Lambda*v3 - an.Lambda*an.A*v3*v3
}

// PlateauLength returns the exact time from v0 to v*/2 (the end of the
// plateau) and the paper's estimate τ/(λ²v0) (eqs. attnS-t1, attnS-tm).
func (an Ansatz) PlateauLength(v0 float64) (exact, estimate float64, err error) {
	exact, err = an.TimeTo(v0, an.VStar()/2)
	return exact, an.Tau / (an.Lambda * an.Lambda * v0), err
}

// epsilon is the relative spacing of float64, 2⁻⁵².
const epsilon = 0x1p-52
