package ode_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/ode/odetest"
)

func solve(t testing.TB, p ode.Problem, s ode.Settings) *ode.Result {
	t.Helper()
	res, err := ode.Solve(context.Background(), p, s)
	if err != nil {
		t.Fatalf("%s: %v", s.Method.Name(), err)
	}
	return res
}

// relErr is max_i |y_i − want_i| / (|want_i| + floor_i).
func relErr(y, want, floor []float64) float64 {
	var e float64
	for i := range y {
		f := 0.0
		if floor != nil {
			f = floor[i]
		}
		e = math.Max(e, math.Abs(y[i]-want[i])/(math.Abs(want[i])+f))
	}
	return e
}

// TestStiffReferenceSolutions solves the stiff classics of the Test Set for
// IVP Solvers with Rodas5P and Radau5, with the analytic Jacobian and with
// finite differences, and compares with the published reference solutions
// (odetest cites them). Robertson's second component is 10⁻¹³, so its
// error is measured relative to the absolute tolerance it is solved with.
// The tolerance bounds the local error; the global error it allows is a
// property of the problem, so the bound 200·rtol is ours: the largest
// observed is 67·rtol (Rodas5P on HIRES), the margin absorbs changes of
// the step sequence.
func TestStiffReferenceSolutions(t *testing.T) {
	for _, m := range []ode.Method{ode.Rodas5P, ode.Radau5} {
		for _, p := range []odetest.Problem{odetest.Robertson(), odetest.VanDerPol(), odetest.HIRES()} {
			for _, analytic := range []bool{true, false} {
				prob := p.Problem
				if !analytic {
					prob.Jac = nil
				}
				const rtol = 1e-8
				s := ode.Settings{Method: m, RTol: rtol, ATol: rtol, ATolVec: p.ATol, MaxSteps: 100000}
				res := solve(t, prob, s)
				if e := relErr(res.Y, p.Want, p.ATol); e > 200*rtol {
					t.Errorf("%s, %s (analytic Jacobian %v): relative error %.3g at rtol %g; y = %v, want %v", m.Name(), p.Name, analytic, e, rtol, res.Y, p.Want)
				}
				checkLinearAlgebra(t, m, p.Name, res.Stats)
				t.Logf("%s, %s analytic=%v: %d steps, %d rejected, %d evaluations, %d Jacobians, %d LU", m.Name(), p.Name, analytic,
					res.Stats.Steps, res.Stats.Rejected, res.Stats.FuncEvals, res.Stats.JacEvals, res.Stats.Decompositions)
			}
		}
	}
}

// checkLinearAlgebra checks the counts of Jacobians, factorizations and
// solves against each method's scheme: Rodas5P takes a Jacobian and an LU
// per step and 8 solves per attempt; Radau5 solves with both of its
// matrices per Newton iteration and with one for the error estimate, and
// keeps its Jacobian and factorizations across steps.
func checkLinearAlgebra(t *testing.T, m ode.Method, name string, st ode.Stats) {
	t.Helper()
	attempts := st.Steps + st.Rejected
	var ok bool
	switch m {
	case ode.Rodas5P:
		ok = st.JacEvals > 0 && st.Decompositions >= st.Steps && st.LinearSolves == 8*attempts
	case ode.Radau5:
		ok = st.JacEvals > 0 && st.JacEvals < st.Steps && st.Decompositions < 2*attempts && st.LinearSolves >= 3*attempts
	}
	if !ok {
		t.Errorf("%s, %s: linear-algebra counts %+v do not fit the method", m.Name(), name, st)
	}
}

// TestROCK4Parabolic: on the heat equation (exact semi-discrete solution,
// spectral radius 4(n+1)² ≈ 1.6·10⁵) ROCK4 is accurate with a step set by
// accuracy alone, with the spectral radius given or estimated by power
// iteration; on the Brusselator with diffusion it agrees with DOP853 at a
// tight tolerance.
func TestROCK4Parabolic(t *testing.T) {
	heat := odetest.Heat(200, 0.05)
	for _, given := range []bool{true, false} {
		prob := heat.Problem
		if !given {
			prob.SpectralRadius = nil
		}
		res := solve(t, prob, ode.Settings{Method: ode.ROCK4, RTol: 1e-7, ATol: 1e-10})
		if e := maxAbs(res.Y, heat.Want); e > 1e-7 {
			t.Errorf("heat (ρ given %v): max error %.3g", given, e)
		}
		// An explicit method would need 0.05·1.6·10⁵/3.3 ≈ 2400 steps.
		if res.Stats.Steps > 200 {
			t.Errorf("heat (ρ given %v): %d steps; ROCK4's step should not be limited by stability", given, res.Stats.Steps)
		}
	}
	br := odetest.Brusselator(100)
	ref := solve(t, br.Problem, ode.Settings{Method: ode.DOP853, RTol: 1e-12, ATol: 1e-12, MaxSteps: 1e6})
	res := solve(t, br.Problem, ode.Settings{Method: ode.ROCK4, RTol: 1e-8, ATol: 1e-8})
	if e := maxAbs(res.Y, ref.Y); e > 1e-6 {
		t.Errorf("Brusselator: ROCK4 differs from DOP853 by %.3g", e)
	}
	if res.Stats.FuncEvals*3 > ref.Stats.FuncEvals {
		t.Errorf("Brusselator: ROCK4 %d evaluations, DOP853 %d: want ROCK4 ≥ 3× cheaper", res.Stats.FuncEvals, ref.Stats.FuncEvals)
	}
}

// TestROCK4SpectralRadiusFailsLoudly: a spectral radius that is not a
// finite number fails the solve (status NonFinite, the cause named), as
// OrdinaryDiffEq.jl's maxeig! reports failure, instead of being taken as
// 0 (the fewest stages). Given by the problem as NaN or −1, or estimated
// by the power iteration on y' = −10³⁰⁰·y, whose ‖f(y)‖ overflows (the
// norm squares 10³⁰⁰), or on y' = −1.6·10³⁰⁸·y from y = 10⁻²⁰⁰, whose
// estimate, enlarged by 20 %, does.
func TestROCK4SpectralRadiusFailsLoudly(t *testing.T) {
	t.Parallel()
	decay := func(c float64) ode.Func {
		return func(_ float64, y, dy []float64) {
			for i := range y {
				dy[i] = -c * y[i]
			}
		}
	}
	for _, tc := range []struct {
		name string
		p    ode.Problem
		want string
	}{
		{"given NaN", ode.Problem{Func: decay(1), T1: 1, Y0: []float64{1, 2},
			SpectralRadius: func(float64, []float64) float64 { return math.NaN() }}, "Problem.SpectralRadius(0, y) = NaN"},
		{"given negative", ode.Problem{Func: decay(1), T1: 1, Y0: []float64{1, 2},
			SpectralRadius: func(float64, []float64) float64 { return -1 }}, "want a finite bound ≥ 0"},
		{"norm overflows", ode.Problem{Func: decay(1e300), T1: 1, Y0: []float64{1}}, "‖f(y)‖ = +Inf, which overflow"},
		{"estimate overflows", ode.Problem{Func: decay(1.6e308), T1: 1, Y0: []float64{1e-200}}, "estimate at t = 0 is +Inf"},
	} {
		_, err := ode.Solve(context.Background(), tc.p, ode.Settings{Method: ode.ROCK4, InitialStep: 1e-3})
		var oe *ode.Error
		if !errors.As(err, &oe) || oe.Status != ode.NonFinite || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want NonFinite with %q", tc.name, err, tc.want)
		}
	}
}

func maxAbs(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// TestStiffConvergenceOrder measures the order of ROCK4, Rodas5P and Radau5
// with fixed steps on the Brusselator with diffusion (n = 10) over [0, 1],
// and of ROCK4 at high degree (h·ρ ≈ 260, 28 stages) on the heat equation
// with n = 80 over [0, 0.4]: the error must fall by 2^p when the step
// halves. Radau5's Newton iteration stops at a fraction of the tolerance,
// so it is given a tight one.
func TestStiffConvergenceOrder(t *testing.T) {
	br := odetest.Brusselator(10)
	br.T1 = 1
	heat := odetest.Heat(80, 0.4)
	ref := solve(t, br.Problem, ode.Settings{Method: ode.DOP853, RTol: 1e-14, ATol: 1e-14})
	for _, tc := range []struct {
		m     ode.Method
		order float64
		h     float64
		p     odetest.Problem
	}{{ode.ROCK4, 4, 0.05, br}, {ode.Rodas5P, 5, 0.05, br}, {ode.Radau5, 5, 0.05, br}, {ode.ROCK4, 4, 0.01, heat}} {
		want := tc.p.Want
		if want == nil {
			want = ref.Y
		}
		var errs []float64
		for _, h := range []float64{tc.h, tc.h / 2, tc.h / 4} {
			res := solve(t, tc.p.Problem, ode.Settings{Method: tc.m, FixedStep: h, RTol: 1e-10, ATol: 1e-12})
			errs = append(errs, maxAbs(res.Y, want))
		}
		p1, p2 := math.Log2(errs[0]/errs[1]), math.Log2(errs[1]/errs[2])
		if math.Abs(p2-tc.order) > 0.35 {
			t.Errorf("%s: observed orders %.2f, %.2f (errors %.3g), want %g", tc.m.Name(), p1, p2, errs, tc.order)
		}
		t.Logf("%s: observed orders %.2f, %.2f (errors %.3g)", tc.m.Name(), p1, p2, errs)
	}
}

// TestStiffDenseOutputAndEvents: on the heat equation the midpoint decays as
// e^{−μt}, so it crosses half its initial value at exactly t* = ln 2/μ.
// ROCK4, Rodas5P, Radau5 and Auto locate that event and return the
// requested output times on their continuous extensions, with the accuracy
// of the solve.
func TestStiffDenseOutputAndEvents(t *testing.T) {
	const n = 49 // midpoint x = 1/2 is component 24
	heat := odetest.Heat(n, 0.1)
	mu := -math.Log(heat.Want[24]) / heat.T1
	tStar := math.Ln2 / mu
	teval := []float64{0.001, 0.003, 0.0071, 0.013, 0.02, 0.07, 0.1}
	for _, m := range []ode.Method{ode.ROCK4, ode.Rodas5P, ode.Radau5, ode.Auto} {
		// Auto's first steps are DOP853's at its stability limit until the
		// stiffness test has seen 15 of them, where its error control is
		// erratic (HNW II, IV.2): a looser bound for it.
		tol := 1e-7
		if m == ode.Auto {
			tol = 1e-6
		}
		res := solve(t, heat.Problem, ode.Settings{Method: m, RTol: 1e-8, ATol: 1e-10, TEval: teval,
			Events: []ode.Event{{Func: func(_ float64, y []float64) float64 { return y[24] - 0.5 }, Direction: ode.Falling}}})
		if len(res.Events) != 1 || math.Abs(res.Events[0].T-tStar) > 1e-7*tStar {
			t.Errorf("%s: events %v, want one at t* = %.12g", m.Name(), res.Events, tStar)
		}
		for k, tk := range teval {
			got := res.YEval[k*n+24]
			if want := math.Exp(-mu * tk); math.Abs(got-want) > tol {
				t.Errorf("%s: y(%g) = %.12g, want %.12g", m.Name(), tk, got, want)
			}
		}
	}
}

// TestAutoSwitches: the Van der Pol oscillator with ε = 10⁻³ is stiff on its
// slow branches and not during the fast jumps. Auto(DOP853, Rodas5P),
// Auto(DOP853, Radau5) and Auto(DOP853, ROCK4) must all use both methods,
// switch, and agree with DOP853 at a tight tolerance.
func TestAutoSwitches(t *testing.T) {
	vdp := vanDerPolMild()
	ref := solve(t, vdp, ode.Settings{Method: ode.DOP853, RTol: 1e-13, ATol: 1e-13, MaxSteps: 1e6})
	autoRodas, err := ode.NewAuto(ode.DOP853, ode.Rodas5P)
	if err != nil {
		t.Fatal(err)
	}
	autoRadau, err := ode.NewAuto(ode.DOP853, ode.Radau5)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []ode.Method{autoRodas, autoRadau, ode.Auto} {
		res := solve(t, vdp, ode.Settings{Method: m, RTol: 1e-8, ATol: 1e-8, MaxSteps: 1e6})
		st := res.Stats
		if len(st.PerMethod) != 2 || st.PerMethod[0].Steps == 0 || st.PerMethod[1].Steps == 0 || st.Switches < 2 {
			t.Errorf("%s: stats %+v: want steps by both methods and switches both ways", m.Name(), st)
		}
		if st.PerMethod[0].Steps+st.PerMethod[1].Steps != st.Steps || st.PerMethod[0].FuncEvals+st.PerMethod[1].FuncEvals != st.FuncEvals {
			t.Errorf("%s: per-method statistics %+v do not add up to %+v", m.Name(), st.PerMethod, st)
		}
		if e := relErr(res.Y, ref.Y, []float64{1, 1}); e > 1e-5 {
			t.Errorf("%s: y(3) = %v, DOP853 %v", m.Name(), res.Y, ref.Y)
		}
		t.Logf("%s: %+v", m.Name(), st)
	}
	big := ode.Problem{Func: func(_ float64, y, dy []float64) { copy(dy, y) }, T0: 0, T1: 1, Y0: make([]float64, ode.MaxDenseDim+1)}
	for _, m := range []ode.Method{ode.Rodas5P, ode.Radau5} {
		if _, err := ode.Solve(context.Background(), big, ode.Settings{Method: m}); err == nil || !strings.Contains(err.Error(), "MaxDenseDim") {
			t.Errorf("%s on n = %d: error %v, want one naming MaxDenseDim", m.Name(), len(big.Y0), err)
		}
	}
	if _, err := ode.NewAuto(ode.DOP853, ode.DP5); err == nil {
		t.Error("NewAuto(DOP853, DP5): want an error (DP5 is not a stiff method)")
	}
}

// TestStiffNoAllocationsPerStep: with a reused Integrator, a solve of many
// steps allocates no more than one of few (the result only), for ROCK4,
// Rodas5P, Radau5 and Auto.
func TestStiffNoAllocationsPerStep(t *testing.T) {
	for _, tc := range []struct {
		m ode.Method
		p odetest.Problem
	}{{ode.ROCK4, odetest.Heat(50, 0.1)}, {ode.Auto, odetest.Heat(50, 0.1)}, {ode.Rodas5P, odetest.HIRES()}, {ode.Radau5, odetest.HIRES()}} {
		in := ode.NewIntegrator(tc.m, len(tc.p.Y0))
		allocs := func(t1 float64) (float64, int) {
			p := tc.p.Problem
			p.T1 = t1
			var steps int
			a := testing.AllocsPerRun(3, func() {
				res, err := in.Solve(context.Background(), p, ode.Settings{Method: tc.m, RTol: 1e-8})
				if err != nil {
					t.Fatal(err)
				}
				steps = res.Stats.Steps
			})
			return a, steps
		}
		aShort, nShort := allocs(tc.p.T1 / 10)
		aLong, nLong := allocs(tc.p.T1)
		if aLong > aShort || nLong <= nShort {
			t.Errorf("%s: %v allocations in %d steps, %v in %d: want no allocations per step", tc.m.Name(), aShort, nShort, aLong, nLong)
		}
	}
}

// vanDerPolMild is the Van der Pol oscillator with ε = 10⁻³ on [0, 3]: stiff
// on its slow branches and not during the fast jumps.
func vanDerPolMild() ode.Problem {
	vdp := odetest.VanDerPol().Problem
	const eps = 1e-3
	vdp.Func = func(_ float64, y, dy []float64) {
		dy[0] = y[1]
		dy[1] = ((1-y[0]*y[0])*y[1] - y[0]) / eps
	}
	vdp.Jac = func(_ float64, y, j []float64) {
		j[0], j[1] = 0, 1
		j[2], j[3] = (-2*y[0]*y[1]-1)/eps, (1-y[0]*y[0])/eps
	}
	vdp.T1 = 3
	return vdp
}

// TestSolutionEqualsTEval: the kept Solution reproduces bit for bit what the
// solve itself interpolated at TEval, for every method, including ROCK4's
// Hermite steps, whose f values the Solution evaluates again, Auto's
// switches between the two kinds of step, and BDF's Nordsieck polynomials
// from the kept states of the solve, all of them and thinned (the steps
// between taken again with the dense LU's Jacobians and factorizations).
func TestSolutionEqualsTEval(t *testing.T) {
	vdp := vanDerPolMild()
	teval := make([]float64, 200)
	for i := range teval {
		teval[i] = vdp.T1 * float64(i) / float64(len(teval)-1)
	}
	for i, m := range []ode.Method{ode.DP5, ode.DOP853, ode.ROCK4, ode.Rodas5P, ode.Radau5, ode.Auto, ode.BDF, ode.BDF} {
		s := ode.Settings{Method: m, RTol: 1e-6, ATol: 1e-8, TEval: teval, Dense: true, MaxSteps: 1e6}
		if i == 7 {
			s.DenseLimit = 100 // BDF's kept states thinned to a few dozen (n = 2)
		}
		res := solve(t, vdp, s)
		if m == ode.Auto && res.Stats.Switches < 2 {
			t.Errorf("Auto switched %d times, want both ways", res.Stats.Switches)
		}
		n := len(vdp.Y0)
		y := make([]float64, n)
		for k, tk := range teval {
			if _, err := res.Solution.At(y, tk); err != nil {
				t.Fatal(err)
			}
			for i := range y {
				if want := res.YEval[k*n+i]; math.Float64bits(y[i]) != math.Float64bits(want) {
					t.Fatalf("%s: Solution.At(%g)[%d] = %v, TEval gave %v", m.Name(), tk, i, y[i], want)
				}
			}
		}
	}
}

// TestRadauFixedStepTooLong: the fixed step [0, 1] contains Van der Pol's
// first fast jump (ε = 10⁻⁶; adaptive solves place it between t = 0.78 and
// 0.81), which Radau5's simplified Newton iteration with the Jacobian of
// the step's start cannot follow; the solve ends with an error that says
// so, rather than accepting an unconverged step.
func TestRadauFixedStepTooLong(t *testing.T) {
	vdp := odetest.VanDerPol().Problem
	res, err := ode.Solve(context.Background(), vdp, ode.Settings{Method: ode.Radau5, FixedStep: 1})
	var oe *ode.Error
	if !errors.As(err, &oe) || oe.Status != ode.StepTooSmall || !strings.Contains(err.Error(), "Newton iteration") {
		t.Fatalf("error %v, want StepTooSmall naming the Newton iteration", err)
	}
	if res == nil || res.Stats.Steps != 0 {
		t.Errorf("result %+v: want no step accepted", res)
	}
}

// TestRadauNeverAcceptsNonFinite: y' = −√y, y(0) = 1, has the solution
// (1 − t/2)² down to 0 at t = 2, and f is NaN below 0. Every state Radau5
// accepts must have a finite f (the Newton iteration never evaluates f at
// the final y₁ itself), whether or not the solve gets past t = 2.
func TestRadauNeverAcceptsNonFinite(t *testing.T) {
	f := func(_ float64, y, dy []float64) { dy[0] = -math.Sqrt(y[0]) }
	p := ode.Problem{Func: f, T0: 0, T1: 3, Y0: []float64{1}}
	fy := make([]float64, 1)
	res, _ := ode.Solve(context.Background(), p, ode.Settings{Method: ode.Radau5, RTol: 1e-6, ATol: 1e-9,
		Observer: func(s *ode.Step) error {
			if f(s.T1, s.Y1, fy); !(fy[0] == fy[0]) {
				t.Errorf("accepted y(%g) = %g, where f is %g", s.T1, s.Y1[0], fy[0])
			}
			return nil
		}})
	if res == nil || res.Stats.Steps == 0 {
		t.Fatalf("result %+v: want accepted steps", res)
	}
}

// TestRadauReusesJacobian: on the heat equation, linear with a constant
// Jacobian, the Newton iteration converges at once and Radau5 evaluates the
// Jacobian once and factors far fewer times than it steps (radau5.f keeps
// the step, and its factorization, when it would grow by less than 20 %),
// at the accuracy of the solve.
func TestRadauReusesJacobian(t *testing.T) {
	heat := odetest.Heat(50, 0.1)
	res := solve(t, heat.Problem, ode.Settings{Method: ode.Radau5, RTol: 1e-8, ATol: 1e-10})
	st := res.Stats
	if st.JacEvals != 1 || st.Decompositions/2 > st.Steps/2 {
		t.Errorf("stats %+v: want one Jacobian and a factorization pair for at most every other step", st)
	}
	if e := maxAbs(res.Y, heat.Want); e > 1e-7 {
		t.Errorf("max error %.3g", e)
	}
	t.Logf("%d steps, %d factorizations, %d evaluations", st.Steps, st.Decompositions, st.FuncEvals)
}
