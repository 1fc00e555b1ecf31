package ode

import (
	"fmt"
	"math"
)

// controller proposes step sizes from error norms. The PI controller
// (Gustafsson; HNW II, IV.2; dopri5.f) takes
// h·clamp(safety·err^−β₁·errPrev^β₂); the predictive controller
// (Gustafsson 1994; HNW II, IV.8, eq. 8.21; rodas.f, rock4.f) takes the
// smaller of safety·err^−q and safety·(h/h_prev)·(err_prev/err²)^q with
// q = 1/(p̂+1), p̂ the order of the embedded formula. After a rejection the
// next step is never larger than the rejected one.
type controller struct {
	controllerDefaults
	errPrev, hPrev float64
	accepted       int
}

const (
	errPrevInit     = 1e-4 // dopri5.f: FACOLD = 1.D-4
	errPrevFloorPrd = 1e-2 // rodas.f: ERRACC = MAX(1.0D-2, ERR)
)

// newController applies the user's overrides to a method's defaults.
func newController(d controllerDefaults, u Controller) (controller, error) {
	d.safety = pick(u.Safety, d.safety)
	d.minScale = pick(u.MinScale, d.minScale)
	d.maxScale = pick(u.MaxScale, d.maxScale)
	if !d.predictive {
		d.beta1 = pick(u.Beta1, d.beta1)
		d.beta2 = pick(u.Beta2, d.beta2)
		if u.Integral {
			d.beta1, d.beta2 = 1/float64(d.errorOrder+1), 0
		}
	}
	c := controller{controllerDefaults: d}
	c.reset()
	if !(d.safety > 0 && d.safety <= 1) {
		return c, fmt.Errorf("ode: Controller.Safety = %g, want a value in (0, 1]", u.Safety)
	}
	if !(d.minScale > 0 && d.minScale < 1 && d.maxScale > 1) || !finite(d.maxScale) {
		return c, fmt.Errorf("ode: Controller.MinScale = %g and MaxScale = %g, want 0 < MinScale < 1 < MaxScale < ∞", d.minScale, d.maxScale)
	}
	if !d.predictive && (!(d.beta1 > 0) || !(d.beta2 >= 0) || !finite(d.beta1) || !finite(d.beta2)) {
		return c, fmt.Errorf("ode: Controller.Beta1 = %g, Beta2 = %g, want Beta1 > 0 and Beta2 ≥ 0", d.beta1, d.beta2)
	}
	return c, nil
}

// reset forgets the history (at the start and after a method switch).
func (c *controller) reset() {
	c.errPrev, c.hPrev, c.accepted = errPrevInit, 0, 0
}

func (c *controller) exponent() float64 {
	if c.predictive {
		return 1 / float64(c.errorOrder+1)
	}
	return c.beta1
}

// accept returns the next step after an accepted step h with error err.
// safetyScale ≤ 1 lowers the safety factor of the error-based proposal
// (Radau5 after many Newton iterations; 1 for the other methods).
func (c *controller) accept(h, err float64, afterReject bool, safetyScale float64) float64 {
	var fac float64
	switch {
	case err == 0:
		fac = c.maxScale
	case c.predictive:
		q := c.exponent()
		fac = safetyScale * c.safety * math.Pow(err, -q)
		if c.accepted > 0 {
			fac = math.Min(fac, c.safety*(h/c.hPrev)*math.Pow(c.errPrev/(err*err), q))
		}
	default:
		fac = safetyScale * c.safety * math.Pow(err, -c.beta1) * math.Pow(c.errPrev, c.beta2)
	}
	fac = math.Min(c.maxScale, math.Max(c.minScale, fac))
	if afterReject {
		fac = math.Min(fac, 1)
	}
	floor := errPrevInit
	if c.predictive {
		floor = errPrevFloorPrd
	}
	c.errPrev, c.hPrev = math.Max(err, floor), h
	c.accepted++
	return h * fac
}

// reject returns the step to retry after a rejected step h with error err.
func (c *controller) reject(h, err, safetyScale float64) float64 {
	return h * math.Max(c.minScale, safetyScale*c.safety*math.Pow(err, -c.exponent()))
}
