package ode

import "fmt"

// NewAuto returns the method that starts with the explicit pair nonstiff,
// switches to stiff when the problem turns stiff, and back when it no longer
// is. Stiffness is detected as in dopri5.f and dop853.f (HNW II, IV.2): after
// each accepted explicit step the estimate h·ρ̂, ρ̂ = ‖f(y₁) − f(Y)‖/‖y₁ − Y‖
// from the last two evaluations, is compared with the length β of the
// method's real stability interval; 15 estimates above 0.9β without 6
// consecutive ones below switch. The stiff method switches back when h·ρ,
// from its own spectral-radius estimate, stays below β/2 for 15 accepted
// steps: the explicit method could then take the same steps stably. stiff
// must be ROCK4, Rodas5P or Radau5.
func NewAuto(nonstiff *RK, stiff Method) (Method, error) {
	if nonstiff == nil {
		return nil, fmt.Errorf("ode: NewAuto: nonstiff is nil")
	}
	if stiff != ROCK4 && stiff != Rodas5P && stiff != Radau5 {
		name := "nil"
		if stiff != nil {
			name = stiff.Name()
		}
		return nil, fmt.Errorf("ode: NewAuto: stiff = %s, want ROCK4, Rodas5P or Radau5", name)
	}
	return &auto{nonstiff: nonstiff, stiff: stiff}, nil
}

// Auto is NewAuto(DOP853, ROCK4): the default for large problems whose
// stiffness comes from a real spectrum.
var Auto = mustAuto(DOP853, ROCK4)

// mustAuto is NewAuto for the package's own methods, which it accepts: it
// panics, with NewAuto's reason, if it does not (TestMustAuto).
func mustAuto(nonstiff *RK, stiff Method) Method {
	m, err := NewAuto(nonstiff, stiff)
	if err != nil {
		panic(err)
	}
	return m
}

type auto struct {
	nonstiff *RK
	stiff    Method
}

// Family returns Switching.
func (m *auto) Family() Family { return Switching }

func (m *auto) Name() string { return "Auto(" + m.nonstiff.Name() + "," + m.stiff.Name() + ")" }

func (m *auto) newStepper(in *Integrator) stepper {
	rk := m.nonstiff.newStepper(in).(*rkStepper)
	return &autoStepper{in: in, rk: rk, steppers: [2]stepper{rk, m.stiff.newStepper(in)}, bound: m.nonstiff.stabilityBound}
}

// Switching constants of dopri5.f (NSTIFF = 15 stiff steps, reset after 6
// non-stiff ones).
const (
	autoStiffSteps    = 15
	autoNonstiffReset = 6
	autoStiffFraction = 0.9
	autoBackFraction  = 0.5
)

type autoStepper struct {
	in       *Integrator
	rk       *rkStepper
	steppers [2]stepper
	cur      int
	bound    float64 // β of the explicit method

	stiffCount, calmCount int
	pending               int // method to switch to before the next step; −1 for none
}

// spectral is a stiff stepper that can estimate ρ, and forget its cached
// estimates when Auto switches to it.
type spectral interface {
	radius() float64
	forget()
}

func (a *autoStepper) begin(p *Problem) error {
	a.cur, a.stiffCount, a.calmCount, a.pending = 0, 0, 0, -1
	for _, s := range a.steppers {
		if err := s.begin(p); err != nil {
			return err
		}
	}
	return nil
}

// limit makes a pending switch, then asks the current method.
func (a *autoStepper) limit(t, h float64) float64 {
	if a.pending >= 0 && a.pending != a.cur {
		a.cur = a.pending
		a.in.stats.Switches++
		a.stiffCount, a.calmCount = 0, 0
		if sp, ok := a.steppers[a.cur].(spectral); ok {
			sp.forget()
		}
	}
	a.pending = -1
	return a.steppers[a.cur].limit(t, h)
}

func (a *autoStepper) attempt(t, h float64) float64   { return a.steppers[a.cur].attempt(t, h) }
func (a *autoStepper) limitFailure() error            { return limitFailure(a.steppers[a.cur]) }
func (a *autoStepper) newton() (float64, float64)     { return newtonOutcome(a.steppers[a.cur]) }
func (a *autoStepper) dense(t, h float64) [][]float64 { return a.steppers[a.cur].dense(t, h) }
func (a *autoStepper) controller() controllerDefaults { return a.steppers[a.cur].controller() }
func (a *autoStepper) order() int                     { return a.steppers[0].order() }
func (a *autoStepper) hermiteDense() (float64, bool)  { return a.steppers[a.cur].hermiteDense() }
func (a *autoStepper) active() int                    { return a.cur }

func (a *autoStepper) names() []string {
	return []string{a.steppers[0].names()[0], a.steppers[1].names()[0]}
}

// accept runs the stiffness test after the accepted step (t, h); a switch
// takes effect from the next step (the dense output of this one is the
// method's that took it, so the current index is kept until then).
func (a *autoStepper) accept(t, h float64) {
	a.steppers[a.cur].accept(t, h)
	if a.cur == 0 {
		if a.rk.stiffness(h) > autoStiffFraction*a.bound {
			a.stiffCount++
			a.calmCount = 0
		} else if a.calmCount++; a.calmCount >= autoNonstiffReset {
			a.stiffCount = 0
		}
		if a.stiffCount >= autoStiffSteps {
			a.pending = 1
		}
		return
	}
	hrho := h * a.steppers[1].(spectral).radius()
	if hrho < 0 {
		hrho = -hrho
	}
	if hrho < autoBackFraction*a.bound {
		a.calmCount++
	} else {
		a.calmCount = 0
	}
	if a.calmCount >= autoStiffSteps {
		a.pending = 0
	}
}
