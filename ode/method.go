package ode

// Method is an integration method: an explicit Runge–Kutta pair (*RK: DP5,
// Tsit5, DOP853 or one built by NewRK), the stabilized explicit method
// ROCK4, the Rosenbrock method Rodas5P, the collocation method Radau5, the
// multistep method BDF, or an automatic switch between a non-stiff and a
// stiff method (NewAuto). The set is closed: methods are values of this
// package.
type Method interface {
	// Name returns the method's name, as reported in Stats.
	Name() string
	// Family says what kind of method it is, which its callers need to
	// know (default tolerances, memory) without comparing method values.
	Family() Family
	// newStepper returns the method's per-solve state, working on the
	// integrator's buffers.
	newStepper(in *Integrator) stepper
}

// Family is the kind of an integration method.
type Family int

const (
	// Explicit Runge–Kutta pairs (DP5, Tsit5, DOP853, NewRK): their steps
	// are bounded by stability on stiff problems.
	Explicit Family = iota
	// Stabilized explicit methods (ROCK4).
	Stabilized
	// DenseImplicit methods factor the state's n×n iteration matrix every
	// few steps (Rodas5P, Radau5): MaxDenseDim bounds their states.
	DenseImplicit
	// Multistep methods (BDF): linear solves by GMRES or a kept dense
	// factorization; their global error is a larger multiple of the
	// tolerance than a one-step method's.
	Multistep
	// Switching methods (NewAuto) move between two families.
	Switching
)

// A stepper advances a solve by one method. The Integrator owns the
// accepted state (y, f(t, y)) in in.y, in.f0 and the candidate
// (y₁, f(t+h, y₁)) in in.ynew, in.f1, which every method computes (first
// same as last); the stepper owns its stages.
type stepper interface {
	// begin prepares a solve of p; in.y and in.f0 hold y₀ and f(t₀, y₀).
	begin(p *Problem) error
	// limit returns the largest step not longer than |h| (same sign) that
	// the method can take from (t, in.y); most methods return h. NaN means
	// none is known (see limitFailer).
	limit(t, h float64) float64
	// attempt computes in.ynew and in.f1 for the step (t, h) and returns
	// the scaled error norm; a non-finite value rejects the step.
	attempt(t, h float64) float64
	// accept is told that the attempt was accepted.
	accept(t, h float64)
	// dense returns the Hairer-form vectors F_j (see Tableau) of the
	// accepted step, computing them on first use.
	dense(t, h float64) [][]float64
	// hermiteDense reports whether the continuous extension of the last
	// accepted step is the cubic Hermite interpolant of (y, f) at its ends,
	// which a dense Solution stores as y alone, and the spectral-radius
	// bound ρ the step was taken with: ROCK4's step is a function of
	// (t, h, y, ρ), so a Solution that keeps ρ can take it again (replay).
	hermiteDense() (rho float64, ok bool)
	// controller returns the method's default step-size controller.
	controller() controllerDefaults
	// order is the order of the propagated solution (for the initial step).
	order() int
	// active returns the index in the per-method statistics of the method
	// that made the last attempt, and the names of all.
	active() int
	names() []string
}

// controllerDefaults are a method's step-size control constants: the error
// exponent is 1/(errorOrder+1); predictive selects Gustafsson's predictive
// controller (HNW II, IV.8, eq. 8.21; rodas.f), otherwise the PI controller
// with exponents beta1, beta2 (HNW II, IV.2; dopri5.f).
type controllerDefaults struct {
	errorOrder         int
	predictive         bool
	safety             float64
	beta1, beta2       float64
	minScale, maxScale float64
}

// A newtonStepper solves its stage equations by Newton iterations (Radau5):
// an attempt can fail without an error estimate, and the controller's
// safety factor depends on the iterations it took.
type newtonStepper interface {
	// newton reports the last attempt: the factor ≤ 1 by which to lower
	// the controller's safety factor and, when the attempt is rejected with
	// a step factor of the method's own (a failed iteration, a rejected
	// first step), that factor (else 0).
	newton() (safetyScale, rejectScale float64)
}

// A limitFailer says why its limit returned NaN (ROCK4: the spectral radius
// is not finite); the solve then fails.
type limitFailer interface {
	limitFailure() error
}

// limitFailure is s.limitFailure() for a limitFailer, else nil.
func limitFailure(s stepper) error {
	if lf, ok := s.(limitFailer); ok {
		return lf.limitFailure()
	}
	return nil
}

// newtonOutcome is s.newton() for a newtonStepper, else (1, 0).
func newtonOutcome(s stepper) (safetyScale, rejectScale float64) {
	if ns, ok := s.(newtonStepper); ok {
		return ns.newton()
	}
	return 1, 0
}

// methodNames are the methods by the names a command line or a settings
// file gives them, in the order MethodNames lists them.
var methodNames = []struct {
	name string
	m    Method
}{
	{"auto", Auto}, {"bdf", BDF}, {"rock4", ROCK4}, {"rodas5p", Rodas5P}, {"radau5", Radau5},
	{"dop853", DOP853}, {"dp5", DP5}, {"tsit5", Tsit5},
}

// MethodByName returns the method called name: auto, bdf, rock4, rodas5p,
// radau5, dop853, dp5 or tsit5 (MethodNames).
func MethodByName(name string) (Method, bool) {
	for _, mn := range methodNames {
		if mn.name == name {
			return mn.m, true
		}
	}
	return nil, false
}

// MethodNames lists the names MethodByName knows.
func MethodNames() []string {
	out := make([]string, len(methodNames))
	for i, mn := range methodNames {
		out[i] = mn.name
	}
	return out
}
