package ode

import (
	"context"
	"fmt"
	"math"
)

// Defaults of Settings: RTol and ATol for solves of states of order one,
// tighter than scipy's solve_ivp (10⁻³, 10⁻⁶) because the solutions here are
// kept and compared to many digits; a caller whose states have small
// components that matter, or who needs event times to more digits, sets its
// own (package flow's defaults are 10⁻⁸ and 10⁻¹², and say why).
const (
	DefaultRTol     = 1e-6
	DefaultATol     = 1e-9
	DefaultMaxSteps = 100000
	defaultSamples  = 4
)

// Solve integrates p with the settings s. It is a convenience for
// NewIntegrator(s.Method, len(p.Y0)).Solve(ctx, p, s).
func Solve(ctx context.Context, p Problem, s Settings) (*Result, error) {
	return NewIntegrator(s.Method, len(p.Y0)).Solve(ctx, p, s)
}

// Integrator holds the workspace of a method for states of one dimension.
// Reusing it across solves avoids all set-up allocations but the result's.
// An Integrator must not be used by several goroutines at once.
type Integrator struct {
	m  Method
	st stepper
	n  int

	y    []float64 // accepted state at the start of the step
	f0   []float64 // f(t, y)
	ynew []float64 // candidate state at the end of the step
	f1   []float64 // f(t+h, ynew)
	atol []float64
	ydst []float64 // scratch for event functions on the dense output

	gPrev, gNew, gSample []float64

	rtol      float64 // relative tolerance of the current solve
	fixedStep bool    // the current solve has Settings.FixedStep > 0
	workers   int     // the processors its linear algebra may share (Settings.Workers)
	f         Func

	// current accepted step
	t0, h float64
	stats Stats
	step  Step
}

// NewIntegrator returns the workspace of method m (nil means DP5) for states
// of dimension n.
func NewIntegrator(m Method, n int) *Integrator {
	if m == nil {
		m = DP5
	}
	in := &Integrator{m: m, n: n}
	slab := make([]float64, 6*n)
	next := func() []float64 {
		v := slab[:n:n]
		slab = slab[n:]
		return v
	}
	in.y, in.f0, in.ynew, in.f1, in.atol, in.ydst = next(), next(), next(), next(), next(), next()
	in.st = m.newStepper(in)
	in.step.in = in
	return in
}

// Step is the step just accepted, handed to Settings.Observer. It and its
// slices are valid only during the call.
type Step struct {
	T0, T1 float64
	Y0, Y1 []float64
	in     *Integrator
}

// Interpolate writes the continuous extension at t ∈ [T0, T1] into dst.
func (s *Step) Interpolate(dst []float64, t float64) { s.in.interpolate(dst, t) }

// scale is the error weight atol_i + rtol·max(|y_i|, |y₁,i|) of component i
// (HNW I, eq. II.4.10).
func (in *Integrator) scale(i int) float64 {
	return in.atol[i] + in.rtol*math.Max(math.Abs(in.y[i]), math.Abs(in.ynew[i]))
}

// Solve integrates p. It returns the result and, when the solve did not reach
// T1 or a terminal event, an *Error naming the status, the time and the cause.
// Invalid settings give an error and a nil result.
func (in *Integrator) Solve(ctx context.Context, p Problem, s Settings) (*Result, error) {
	if s.Method != nil && s.Method != in.m {
		return nil, fmt.Errorf("ode: Settings.Method %s differs from the integrator's %s", s.Method.Name(), in.m.Name())
	}
	cfg, err := in.setup(p, &s)
	if err != nil {
		return nil, err
	}
	in.fixedStep = s.FixedStep > 0
	if err := in.st.begin(&p); err != nil {
		return nil, err
	}
	r := &run{in: in, p: &p, s: &s, cfg: cfg, done: ctx.Done(), ctx: ctx}
	in.f = p.Func
	defer func() { in.f = nil }()
	if s.Resume != nil {
		return r.resume(s.Resume)
	}
	return r.solve()
}

// run is the state of one solve's main loop.
type run struct {
	in   *Integrator
	p    *Problem
	s    *Settings
	cfg  config
	ctx  context.Context
	done <-chan struct{}
	res  *Result

	ctls      []controller
	bdf       *bdfStepper // a BDF solve that keeps a dense Solution
	attempts  []float64   // the step sizes its current step attempted
	t, h      float64
	iEval     int
	evalsSeen int // FuncEvals already attributed to a method

	lastActive int  // the method of the last attempt (−1: none yet)
	nonFinite  bool // the latest rejection was caused by NaN or Inf
	ckpt       Checkpoint
}

func (r *run) solve() (*Result, error) {
	in, p, s := r.in, r.p, r.s
	n := in.n
	r.res = &Result{Y: make([]float64, n)}
	if len(s.TEval) > 0 {
		r.res.TEval = make([]float64, 0, len(s.TEval))
		r.res.YEval = make([]float64, 0, len(s.TEval)*n)
	}
	if s.Dense {
		sol := newSolution(n, r.cfg.dir, p.Func)
		defer sol.endSolve()
		r.res.Solution = sol
	}
	in.stats = Stats{PerMethod: make([]MethodStats, len(in.st.names()))}
	for i, name := range in.st.names() {
		in.stats.PerMethod[i].Name = name
	}
	if err := r.controllers(); err != nil {
		return nil, err
	}
	r.t = p.T0
	copy(in.y, p.Y0)
	if st, ok := in.st.(*bdfStepper); ok {
		st.keepSetups = s.Dense || s.Checkpoint != nil
		if s.Dense {
			r.bdf = st
			r.res.Solution.beginBDF(p, in, st)
		}
	}
	p.Func(r.t, in.y, in.f0)
	in.stats.FuncEvals++
	if !allFinite(in.f0) {
		return r.fail(0, NonFinite, "f(t0, y0) is not finite", nil)
	}
	r.startEvents()
	r.emitEval(r.t, in.y, false)
	if p.T0 == p.T1 {
		return r.finish()
	}
	r.h = s.InitialStep * r.cfg.dir
	if s.FixedStep > 0 {
		r.h = (p.T1 - p.T0) / float64(r.cfg.nFixed)
	} else if r.h == 0 {
		r.h = in.initialStep(p.Func, r.t, r.cfg)
	}
	r.lastActive = -1
	return r.loop()
}

// controllers builds one step-size controller per method of the stepper.
func (r *run) controllers() error {
	names := r.in.st.names()
	r.ctls = make([]controller, len(names))
	for i := range names {
		d := r.in.st.controller()
		if a, ok := r.in.st.(*autoStepper); ok {
			d = a.steppers[i].controller()
		}
		c, err := newController(d, r.s.Controller)
		if err != nil {
			return err
		}
		r.ctls[i] = c
	}
	return nil
}

func (r *run) loop() (*Result, error) {
	in, s, cfg := r.in, r.s, r.cfg
	rejected := false                                                  // the previous attempt was rejected
	for attempts := in.stats.Steps + in.stats.Rejected; ; attempts++ { // as many as the solve has made
		if err := r.check(attempts); err != nil {
			return r.res, err
		}
		h, last, err := r.nextStep()
		if err != nil {
			return r.res, err
		}
		if !(math.Abs(h) >= 10*ulp(r.t)) {
			st, cause := StepTooSmall, "step size below 10 ulp of t (tolerance cannot be met)"
			if r.nonFinite {
				st, cause = NonFinite, "NaN or Inf in the step that rejection could not cure"
			}
			return r.fail(h, st, cause, nil)
		}
		if r.bdf != nil {
			r.attempts = append(r.attempts, h)
		}
		errNorm := in.st.attempt(r.t, h)
		safetyScale, rejectScale := newtonOutcome(in.st)
		active := in.st.active()
		r.attribute(active)
		ctl := &r.ctls[active]
		if active != r.lastActive {
			ctl.reset()
			r.lastActive = active
		}
		if s.FixedStep > 0 {
			if rejectScale > 0 {
				return r.fail(h, StepTooSmall, fmt.Sprintf("Settings.FixedStep = %g is too long for %s's Newton iteration to converge", s.FixedStep, in.m.Name()), nil)
			}
			if !finite(errNorm) || !allFinite(in.ynew) {
				return r.fail(h, NonFinite, "NaN or Inf with a fixed step", nil)
			}
			errNorm = 0
		}
		if !finite(errNorm) || errNorm > 1 {
			in.stats.Rejected++
			in.stats.PerMethod[active].Rejected++
			rejected, r.nonFinite = true, !finite(errNorm)
			switch {
			case rejectScale > 0: // the method's own factor (Radau5)
				r.h = h * rejectScale
			case r.nonFinite:
				r.h = h * 0.1
			default:
				r.h = r.reject(ctl, h, errNorm, safetyScale)
			}
			continue
		}
		stop, err := r.accepted(h, last)
		if err != nil || stop {
			return r.res, err
		}
		if s.FixedStep == 0 {
			r.h = r.accept(ctl, h, errNorm, rejected, safetyScale)
		}
		rejected = false // nonFinite stays: the steps that collapse near a NaN region alternate with accepted ones
		if cfg.dir*(r.t-r.p.T1) >= 0 {
			break
		}
		if s.Checkpoint != nil {
			r.ckpt = Checkpoint{T: r.t, r: r}
			if err := s.Checkpoint(&r.ckpt); err != nil {
				return r.fail(r.h, Stopped, "stopped at a checkpoint", err)
			}
		}
	}
	return r.finish()
}

// accept and reject return the step after an accepted or rejected attempt
// h: the stepper's own choice for a stepChooser, else the controller's.
func (r *run) accept(ctl *controller, h, errNorm float64, afterReject bool, safetyScale float64) float64 {
	if ch, ok := r.in.st.(stepChooser); ok {
		return ch.nextStep(h, true)
	}
	return ctl.accept(h, errNorm, afterReject, safetyScale)
}

func (r *run) reject(ctl *controller, h, errNorm, safetyScale float64) float64 {
	if ch, ok := r.in.st.(stepChooser); ok {
		return ch.nextStep(h, false)
	}
	return ctl.reject(h, errNorm, safetyScale)
}

// check stops the solve on cancellation or when the step budget is spent.
func (r *run) check(attempts int) error {
	if r.done != nil {
		select {
		case <-r.done:
			_, err := r.fail(r.h, Canceled, "solve canceled", r.ctx.Err())
			return err
		default:
		}
	}
	if attempts >= r.cfg.maxSteps {
		_, err := r.fail(r.h, TooManySteps, fmt.Sprintf("MaxSteps = %d attempted steps", r.cfg.maxSteps), nil)
		return err
	}
	return nil
}

// nextStep returns the step to attempt from r.t and whether it ends at T1.
func (r *run) nextStep() (h float64, last bool, err error) {
	in, p, cfg := r.in, r.p, r.cfg
	if r.s.FixedStep > 0 {
		k := in.stats.Steps + 1
		tn := p.T0 + (p.T1-p.T0)*float64(k)/float64(cfg.nFixed)
		h = tn - r.t
		hl, err := r.limit(h)
		if err == nil && hl != h {
			_, err = r.fail(h, StepTooSmall, fmt.Sprintf("Settings.FixedStep = %g exceeds the largest step %s can take here", r.s.FixedStep, in.m.Name()), nil)
		}
		return h, k == cfg.nFixed, err
	}
	h = r.h
	if math.Abs(h) > cfg.hmax {
		h = cfg.hmax * cfg.dir
	}
	// A step that would end within 1 % of T1 is stretched to it
	// (dopri5.f), so that no step is left too short to take; where that
	// would exceed MaxStep, two equal steps end there instead.
	if cfg.dir*(r.t+1.01*h-p.T1) >= 0 {
		h = p.T1 - r.t
		last = true
		if math.Abs(h) > cfg.hmax {
			h, last = h/2, false
		}
	}
	hl, err := r.limit(h)
	if err != nil {
		return h, false, err
	}
	if hl != h {
		h, last = hl, false
		if cfg.dir*(r.t+2*hl-p.T1) >= 0 {
			h = (p.T1 - r.t) / 2 // two equal steps rather than one and a sliver
		}
	}
	return h, last, nil
}

// limit asks the method for the largest step up to h from r.t, and fails
// the solve when it cannot tell (NaN: ROCK4 without a finite spectral
// radius).
func (r *run) limit(h float64) (float64, error) {
	hl := r.in.st.limit(r.t, h)
	if !math.IsNaN(hl) {
		return hl, nil
	}
	_, err := r.fail(h, NonFinite, "no stable step size", limitFailure(r.in.st))
	return hl, err
}

// attribute charges the evaluations since the last call to method i.
func (r *run) attribute(i int) {
	st := &r.in.stats
	st.PerMethod[i].FuncEvals += st.FuncEvals - r.evalsSeen
	r.evalsSeen = st.FuncEvals
}

// accepted records the accepted step (r.t, h): events, output times, dense
// output and the observer, then moves to its end.
func (r *run) accepted(h float64, last bool) (stop bool, err error) {
	in := r.in
	active := in.st.active()
	in.st.accept(r.t, h)
	in.stats.Steps++
	in.stats.PerMethod[active].Steps++
	tnew := r.t + h
	if last {
		tnew = r.p.T1
	}
	in.t0, in.h = r.t, tnew-r.t
	r.keepDense(tnew, h) // before a terminal event moves in.ynew
	if len(r.s.Events) > 0 {
		tStop, terminal := in.locateEvents(r.res, r.s.Events, r.cfg.samples, r.t, tnew)
		if terminal {
			tnew, stop = tStop, true
			r.res.Status = TerminalEvent
			if tnew != in.t0+in.h { // at the step's end y₁ is exact
				in.interpolate(in.ynew, tnew)
			}
			if sol := r.res.Solution; sol != nil {
				sol.cut(tnew)
			}
		}
	}
	r.emitEval(tnew, in.ynew, true)
	r.attribute(active)
	if r.s.Observer != nil {
		in.step.T0, in.step.T1, in.step.Y0, in.step.Y1 = r.t, tnew, in.y, in.ynew
		if oerr := r.s.Observer(&in.step); oerr != nil {
			in.y, in.ynew = in.ynew, in.y
			r.t = tnew
			_, err = r.fail(h, Stopped, "stopped by the observer", oerr)
			return true, err
		}
	}
	// First same as last: f(t+h, y₁) is f at the start of the next step.
	in.y, in.ynew = in.ynew, in.y
	in.f0, in.f1 = in.f1, in.f0
	r.t = tnew
	if len(r.s.Events) > 0 {
		in.gPrev, in.gNew = in.gNew, in.gPrev
	}
	if stop {
		_, err = r.finish()
	}
	return stop, err
}

// keepDense adds the accepted step (in.t0, in.h), attempted as hTry and
// ending at t1, to the dense solution. When the solution outgrows
// Settings.DenseLimit it is thinned, or dropped if thinning cannot help.
func (r *run) keepDense(t1, hTry float64) {
	sol, in := r.res.Solution, r.in
	if sol == nil {
		return
	}
	if r.bdf != nil {
		sol.addBDF(in.t0, in.h, t1, in.ynew, r.attempts, r.bdf)
		r.attempts = r.attempts[:0]
	} else if rho, ok := in.st.hermiteDense(); ok {
		sol.addHermite(in.t0, in.h, t1, hTry, rho, in.y, in.ynew)
	} else {
		sol.add(in.t0, in.h, t1, in.y, in.f0, in.ynew, in.st.dense(in.t0, in.h))
	}
	if lim := r.s.DenseLimit; lim > 0 && sol.size > lim && !sol.thin(lim) {
		sol.endSolve()
		r.res.Solution, r.bdf = nil, nil
	}
}

// emitEval appends the requested output times up to t: y is the state at t
// and, within the current step, the dense output gives the others.
func (r *run) emitEval(t float64, y []float64, inStep bool) {
	te := r.s.TEval
	for r.iEval < len(te) && r.cfg.dir*(te[r.iEval]-t) <= 0 {
		ti := te[r.iEval]
		r.res.TEval = append(r.res.TEval, ti)
		if ti == t || !inStep {
			r.res.YEval = append(r.res.YEval, y...)
		} else {
			off := len(r.res.YEval)
			r.res.YEval = append(r.res.YEval, r.in.y...)
			r.in.interpolate(r.res.YEval[off:], ti)
		}
		r.iEval++
	}
}

func (r *run) startEvents() {
	in, nev := r.in, len(r.s.Events)
	if nev == 0 {
		return
	}
	in.gPrev = grow(in.gPrev, nev)
	in.gNew = grow(in.gNew, nev)
	in.gSample = grow(in.gSample, nev*(r.cfg.samples+1))
	for e, ev := range r.s.Events {
		in.gPrev[e] = ev.Func(r.t, in.y)
	}
}

func (r *run) finish() (*Result, error) {
	copy(r.res.Y, r.in.y)
	r.res.T = r.t
	r.res.Stats = r.in.stats.clone()
	return r.res, nil
}

// fail ends a solve at the last accepted point (r.t, in.y).
func (r *run) fail(h float64, st Status, cause string, err error) (*Result, error) {
	r.finish()
	r.res.Status = st
	return r.res, &Error{Status: st, T: r.t, H: h, Cause: cause, Err: err}
}

func pick(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func ulp(t float64) float64 {
	a := math.Abs(t)
	return math.Nextafter(a, math.Inf(1)) - a
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if !finite(x) {
			return false
		}
	}
	return true
}

// initialStep is Hairer's starting step size (HNW I, II.4, p. 169;
// HINIT in dopri5.f), with RMS norms. It costs one evaluation.
func (in *Integrator) initialStep(f Func, t float64, c config) float64 {
	n := in.n
	var d0, d1 float64
	for i := 0; i < n; i++ {
		sc := in.atol[i] + in.rtol*math.Abs(in.y[i])
		d0 += (in.y[i] / sc) * (in.y[i] / sc)
		d1 += (in.f0[i] / sc) * (in.f0[i] / sc)
	}
	d0 = math.Sqrt(d0 / float64(n))
	d1 = math.Sqrt(d1 / float64(n))
	h0 := 1e-6
	if d0 > 1e-5 && d1 > 1e-5 {
		h0 = 0.01 * d0 / d1
	}
	h0 = math.Min(h0, c.hmax)
	for i := 0; i < n; i++ {
		in.ynew[i] = in.y[i] + c.dir*h0*in.f0[i]
	}
	k1 := in.f1
	f(t+c.dir*h0, in.ynew, k1)
	in.stats.FuncEvals++
	var d2 float64
	for i := 0; i < n; i++ {
		sc := in.atol[i] + in.rtol*math.Abs(in.y[i])
		d := (k1[i] - in.f0[i]) / sc
		d2 += d * d
	}
	d2 = math.Sqrt(d2/float64(n)) / h0
	var h1 float64
	if dm := math.Max(d1, d2); !(dm > 1e-15) {
		h1 = math.Max(1e-6, h0*1e-3)
	} else {
		h1 = math.Pow(0.01/dm, 1/float64(in.st.order()))
	}
	return c.dir * math.Min(math.Min(100*h0, h1), c.hmax)
}
