package ode

import (
	"context"
	"errors"
	"math"
	"testing"
)

func oscillator(_ float64, y, dy []float64) { dy[0], dy[1] = y[1], -y[0] }

// The harmonic oscillator y = (cos t, −sin t) crosses y₀ = 0 at π/2 + kπ,
// falling at k even and rising at k odd.
func TestEventZeroCrossings(t *testing.T) {
	g := func(_ float64, y []float64) float64 { return y[0] }
	for _, m := range methods {
		for _, dir := range []Direction{Both, Rising, Falling} {
			res := solveOrFatal(t, Problem{Func: oscillator, T0: 0, T1: 20, Y0: []float64{1, 0}},
				Settings{Method: m, RTol: 1e-12, ATol: 1e-12, Events: []Event{{Func: g, Direction: dir}}})
			var want []float64
			for k := 0; math.Pi/2+float64(k)*math.Pi < 20; k++ {
				d := Falling
				if k%2 == 1 {
					d = Rising
				}
				if dir == Both || dir == d {
					want = append(want, math.Pi/2+float64(k)*math.Pi)
				}
			}
			if len(res.Events) != len(want) {
				t.Fatalf("%s dir=%d: %d events, want %d", m.Name(), dir, len(res.Events), len(want))
			}
			for i, ev := range res.Events {
				if math.Abs(ev.T-want[i]) > 1e-10 {
					t.Errorf("%s dir=%d: event %d at %.15g, want %.15g", m.Name(), dir, i, ev.T, want[i])
				}
				if math.Abs(ev.Y[0]) > 1e-10 || math.Abs(math.Abs(ev.Y[1])-1) > 1e-10 {
					t.Errorf("%s: state at event %v", m.Name(), ev.Y)
				}
			}
			if res.T != 20 || res.Status != Success {
				t.Errorf("%s: non-terminal events ended the solve at %v (%v)", m.Name(), res.T, res.Status)
			}
		}
	}
}

func TestTerminalEvent(t *testing.T) {
	// Stop at the first rising crossing of y₀, t = 3π/2.
	g := func(_ float64, y []float64) float64 { return y[0] }
	for _, m := range methods {
		res, err := Solve(context.Background(), Problem{Func: oscillator, T0: 0, T1: 100, Y0: []float64{1, 0}},
			Settings{Method: m, RTol: 1e-12, ATol: 1e-12, TEval: []float64{1, 5, 50},
				Events: []Event{{Func: g, Direction: Rising, Terminal: true}}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != TerminalEvent || math.Abs(res.T-1.5*math.Pi) > 1e-10 {
			t.Errorf("%s: status %v at t=%.15g, want TerminalEvent at 3π/2", m.Name(), res.Status, res.T)
		}
		if math.Abs(res.Y[0]) > 1e-10 || math.Abs(res.Y[1]-1) > 1e-10 {
			t.Errorf("%s: final state %v, want (0, 1)", m.Name(), res.Y)
		}
		if len(res.TEval) != 1 || res.TEval[0] != 1 {
			t.Errorf("%s: outputs at %v, want only t=1 before the event", m.Name(), res.TEval)
		}
	}
}

func TestTwoCrossingsInOneStep(t *testing.T) {
	// g = y₀ − 0.9 is positive only for |t − 2πk| < acos(0.9) ≈ 0.451. With
	// one fixed step per 2 units of time, the interval around t = 2π holds
	// a rising and a falling crossing inside a single step; the sub-sampled
	// search finds both.
	g := func(_ float64, y []float64) float64 { return y[0] - 0.9 }
	c := math.Acos(0.9)
	for _, m := range methods {
		res := solveOrFatal(t, Problem{Func: oscillator, T0: 5.7, T1: 6.8, Y0: []float64{math.Cos(5.7), -math.Sin(5.7)}},
			Settings{Method: m, FixedStep: 1.1, EventSamples: 8, Events: []Event{{Func: g}}})
		if res.Stats.Steps != 1 {
			t.Fatalf("%s: %d steps, want one", m.Name(), res.Stats.Steps)
		}
		if len(res.Events) != 2 {
			t.Fatalf("%s: %d events, want 2", m.Name(), len(res.Events))
		}
		// With one step of h = 1.1 the continuous extension itself is only
		// accurate to about h^(q+1) ≈ 1e-4; the roots of the interpolant are
		// found to machine precision, so compare with that bound here.
		want := []float64{2*math.Pi - c, 2*math.Pi + c}
		dirs := []Direction{Rising, Falling}
		for i, ev := range res.Events {
			if math.Abs(ev.T-want[i]) > 1e-3 || ev.Direction != dirs[i] {
				t.Errorf("%s: event %d at %.6g (%v), want %.6g (%v)", m.Name(), i, ev.T, ev.Direction, want[i], dirs[i])
			}
		}
	}
}

func TestBrentPrecision(t *testing.T) {
	// Roots of simple functions to within 2 ulp.
	for _, tc := range []struct {
		f    func(float64) float64
		a, b float64
		root float64
	}{
		{math.Cos, 0, 3, math.Pi / 2},
		{func(x float64) float64 { return x*x*x - 2 }, 0, 2, math.Cbrt(2)},
		{func(x float64) float64 { return math.Exp(x) - 10 }, -5, 5, math.Log(10)},
	} {
		got := brent(tc.f, tc.a, tc.b, tc.f(tc.a), tc.f(tc.b))
		if math.Abs(got-tc.root) > 4*ulp(tc.root) {
			t.Errorf("root %.17g, want %.17g", got, tc.root)
		}
	}
}

func TestFailureStepTooSmall(t *testing.T) {
	// y' = y², y(0) = 1 blows up at t = 1: the solve ends there with an
	// error, and what was computed before stays available.
	f := func(_ float64, y, dy []float64) { dy[0] = y[0] * y[0] }
	res, err := Solve(context.Background(), Problem{Func: f, T0: 0, T1: 2, Y0: []float64{1}},
		Settings{RTol: 1e-8, TEval: []float64{0.5, 0.9, 1.5}})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if e.Status != StepTooSmall && e.Status != NonFinite {
		t.Errorf("status %v", e.Status)
	}
	if res == nil || math.Abs(res.T-1) > 1e-6 || !allFinite(res.Y) || e.T != res.T {
		t.Errorf("result up to the failure: t=%v y=%v", res.T, res.Y)
	}
	if len(res.TEval) != 2 || math.Abs(res.YEval[1]-10) > 1e-6 {
		t.Errorf("outputs before the failure: %v %v, want y(0.9) = 10", res.TEval, res.YEval)
	}
}

func TestFailureNonFinite(t *testing.T) {
	// The right-hand side is NaN for y > 2; every attempt to step past it is
	// rejected until the step size collapses.
	f := func(_ float64, y, dy []float64) {
		if y[0] > 2 {
			dy[0] = math.NaN()
			return
		}
		dy[0] = 1
	}
	res, err := Solve(context.Background(), Problem{Func: f, T0: 0, T1: 5, Y0: []float64{0}}, Settings{})
	var e *Error
	if !errors.As(err, &e) || e.Status != NonFinite {
		t.Fatalf("err = %v, want NonFinite", err)
	}
	if res.T > 2 || res.T < 1.99 || res.Status != NonFinite {
		t.Errorf("stopped at t=%v status %v, want just below 2", res.T, res.Status)
	}
}

func TestFailureTooManySteps(t *testing.T) {
	res, err := Solve(context.Background(), Problem{Func: oscillator, T0: 0, T1: 1000, Y0: []float64{1, 0}},
		Settings{RTol: 1e-10, MaxSteps: 50})
	var e *Error
	if !errors.As(err, &e) || e.Status != TooManySteps {
		t.Fatalf("err = %v, want TooManySteps", err)
	}
	if res.Stats.Steps+res.Stats.Rejected != 50 || res.T <= 0 {
		t.Errorf("stats %+v, t=%v", res.Stats, res.T)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	obs := func(*Step) error {
		steps++
		if steps == 10 {
			cancel()
		}
		return nil
	}
	res, err := Solve(ctx, Problem{Func: oscillator, T0: 0, T1: 1e6, Y0: []float64{1, 0}}, Settings{Observer: obs})
	if !errors.Is(err, context.Canceled) || res.Status != Canceled || res.Stats.Steps != 10 {
		t.Fatalf("err=%v status=%v steps=%d", err, res.Status, res.Stats.Steps)
	}
	if d := maxAbsDiff(res.Y, []float64{math.Cos(res.T), -math.Sin(res.T)}); d > 1e-5 {
		t.Errorf("state at cancellation off by %g", d)
	}
}

func TestObserverStops(t *testing.T) {
	stop := errors.New("enough")
	res, err := Solve(context.Background(), Problem{Func: oscillator, T0: 0, T1: 10, Y0: []float64{1, 0}},
		Settings{Observer: func(s *Step) error {
			if s.T1 > 1 {
				return stop
			}
			return nil
		}})
	if !errors.Is(err, stop) || res.Status != Stopped || res.T <= 1 {
		t.Fatalf("err=%v status=%v t=%v", err, res.Status, res.T)
	}
}

func TestInvalidSettings(t *testing.T) {
	p := Problem{Func: oscillator, T0: 0, T1: 1, Y0: []float64{1, 0}}
	for name, s := range map[string]Settings{
		"RTol":         {RTol: -1},
		"ATol":         {ATol: math.NaN()},
		"ATolVec":      {ATolVec: []float64{1}},
		"MaxStep":      {MaxStep: -1},
		"TEval":        {TEval: []float64{2}},
		"TEval order":  {TEval: []float64{0.5, 0.2}},
		"Safety":       {Controller: Controller{Safety: 2}},
		"MinScale":     {Controller: Controller{MinScale: 1.5}},
		"EventFunc":    {Events: []Event{{}}},
		"EventSamples": {EventSamples: -1},
		"Workers":      {Workers: -1},
	} {
		if _, err := Solve(context.Background(), p, s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	bad := p
	bad.Y0 = []float64{math.Inf(1), 0}
	if _, err := Solve(context.Background(), bad, Settings{}); err == nil {
		t.Error("Inf in Y0: no error")
	}
}

func TestDeterministic(t *testing.T) {
	run := func() []float64 {
		res := solveOrFatal(t, Problem{Func: arenstorf, T0: 0, T1: arenstorfT, Y0: arenstorfY0},
			Settings{Method: DOP853, RTol: 1e-9, Dense: true})
		return res.Y
	}
	a, b := run(), run()
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("run differs in component %d: %v vs %v", i, a[i], b[i])
		}
	}
}

// TestNoAllocationPerStep checks that the allocations of a solve do not
// depend on its number of steps once the Integrator exists.
func TestNoAllocationPerStep(t *testing.T) {
	for _, m := range methods {
		in := NewIntegrator(m, 4)
		count := func(t1 float64) (float64, int) {
			var steps int
			allocs := testing.AllocsPerRun(5, func() {
				res, err := in.Solve(context.Background(), Problem{Func: arenstorf, T0: 0, T1: t1, Y0: arenstorfY0},
					Settings{RTol: 1e-10, ATol: 1e-13})
				if err != nil {
					t.Fatal(err)
				}
				steps = res.Stats.Steps
			})
			return allocs, steps
		}
		a1, s1 := count(0.5)
		a2, s2 := count(2 * arenstorfT)
		if a1 != a2 || s2 < 5*s1 {
			t.Errorf("%s: %v allocations for %d steps, %v for %d steps", m.Name(), a1, s1, a2, s2)
		}
	}
}
