package ode

import (
	"errors"
	"fmt"
	"math"
)

type config struct {
	dir                       float64
	hmax                      float64
	maxSteps, nFixed, samples int
}

// setup validates p and s and fills the tolerances.
func (in *Integrator) setup(p Problem, s *Settings) (config, error) {
	var c config
	if err := in.checkProblem(p); err != nil {
		return c, err
	}
	c.dir = 1
	if p.T1 < p.T0 {
		c.dir = -1
	}
	if err := in.setTolerances(s); err != nil {
		return c, err
	}
	if err := c.setSteps(p, s); err != nil {
		return c, err
	}
	if s.Workers < 0 {
		return c, fmt.Errorf("ode: Settings.Workers = %d, want ≥ 0 (0: all processors)", s.Workers)
	}
	in.workers = s.Workers
	return c, c.checkOutput(p, s)
}

func (in *Integrator) checkProblem(p Problem) error {
	if p.Func == nil {
		return errors.New("ode: Problem.Func is nil")
	}
	if len(p.Y0) != in.n {
		return fmt.Errorf("ode: len(Problem.Y0) = %d, the integrator was made for %d", len(p.Y0), in.n)
	}
	if !finite(p.T0) || !finite(p.T1) {
		return fmt.Errorf("ode: Problem.T0 = %g and T1 = %g must be finite", p.T0, p.T1)
	}
	for i, v := range p.Y0 {
		if !finite(v) {
			return fmt.Errorf("ode: Problem.Y0[%d] = %g is not finite", i, v)
		}
	}
	return nil
}

// setTolerances fills in.rtol and in.atol.
func (in *Integrator) setTolerances(s *Settings) error {
	in.rtol = s.RTol
	if in.rtol == 0 {
		in.rtol = DefaultRTol
	}
	if !(in.rtol > 0) || !finite(in.rtol) {
		return fmt.Errorf("ode: Settings.RTol = %g, want a finite value > 0", s.RTol)
	}
	atol := s.ATol
	if atol == 0 {
		atol = DefaultATol
	}
	if s.ATolVec != nil {
		if len(s.ATolVec) != in.n {
			return fmt.Errorf("ode: len(Settings.ATolVec) = %d, want %d", len(s.ATolVec), in.n)
		}
		for i, v := range s.ATolVec {
			if !(v >= 0) || !finite(v) {
				return fmt.Errorf("ode: Settings.ATolVec[%d] = %g, want a finite value ≥ 0", i, v)
			}
			in.atol[i] = v
		}
	} else {
		if !(atol >= 0) || !finite(atol) {
			return fmt.Errorf("ode: Settings.ATol = %g, want a finite value ≥ 0", s.ATol)
		}
		for i := range in.atol {
			in.atol[i] = atol
		}
	}
	return nil
}

// setSteps sets the step bounds and the fixed-step count.
func (c *config) setSteps(p Problem, s *Settings) error {
	span := math.Abs(p.T1 - p.T0)
	c.hmax = s.MaxStep
	if c.hmax == 0 {
		c.hmax = span
	}
	if !(c.hmax > 0) && span > 0 {
		return fmt.Errorf("ode: Settings.MaxStep = %g, want > 0", s.MaxStep)
	}
	if s.InitialStep < 0 || !finite(s.InitialStep) {
		return fmt.Errorf("ode: Settings.InitialStep = %g, want a finite value ≥ 0", s.InitialStep)
	}
	if s.FixedStep < 0 || !finite(s.FixedStep) {
		return fmt.Errorf("ode: Settings.FixedStep = %g, want a finite value ≥ 0", s.FixedStep)
	}
	if s.FixedStep > 0 {
		c.nFixed = int(math.Ceil(span/s.FixedStep - 1e-9))
		if c.nFixed < 1 {
			c.nFixed = 1
		}
	}
	c.maxSteps = s.MaxSteps
	if c.maxSteps == 0 {
		c.maxSteps = DefaultMaxSteps
	}
	if c.maxSteps < 0 {
		return fmt.Errorf("ode: Settings.MaxSteps = %d, want ≥ 0", s.MaxSteps)
	}
	return nil
}

// checkOutput validates what a solve reports: dense output, events, TEval.
func (c *config) checkOutput(p Problem, s *Settings) error {
	if s.DenseLimit < 0 {
		return fmt.Errorf("ode: Settings.DenseLimit = %d, want ≥ 0", s.DenseLimit)
	}
	c.samples = s.EventSamples
	if c.samples == 0 {
		c.samples = defaultSamples
	}
	if c.samples < 1 {
		return fmt.Errorf("ode: Settings.EventSamples = %d, want ≥ 0", s.EventSamples)
	}
	for i, ev := range s.Events {
		if ev.Func == nil {
			return fmt.Errorf("ode: Settings.Events[%d].Func is nil", i)
		}
		if ev.Direction < -1 || ev.Direction > 1 {
			return fmt.Errorf("ode: Settings.Events[%d].Direction = %d, want -1, 0 or 1", i, ev.Direction)
		}
	}
	for i, te := range s.TEval {
		if !finite(te) || c.dir*(te-p.T0) < 0 || c.dir*(te-p.T1) > 0 {
			return fmt.Errorf("ode: Settings.TEval[%d] = %g is outside [%g, %g]", i, te, p.T0, p.T1)
		}
		if i > 0 && c.dir*(te-s.TEval[i-1]) < 0 {
			return fmt.Errorf("ode: Settings.TEval is not monotone in the direction of integration at index %d", i)
		}
	}
	return nil
}
