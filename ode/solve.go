package ode

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Defaults of Settings.
const (
	DefaultRTol     = 1e-6
	DefaultATol     = 1e-9
	DefaultMaxSteps = 100000
	defaultSafety   = 0.9
	defaultSamples  = 4
	errPrevInit     = 1e-4 // dopri5.f: FACOLD = 1.D-4
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
	m *Method
	n int

	k     [][]float64 // stages 0..total-1
	y     []float64   // state at the start of the step
	ynew  []float64   // state at the end of the step
	ytmp  []float64
	atol  []float64
	dense [][]float64 // Hairer-form vectors F_j of the current step
	ydst  []float64   // scratch for event functions on the dense output

	gPrev, gNew, gSample []float64

	rtol float64 // relative tolerance of the current solve
	f    Func

	// current step
	t0, h      float64
	denseReady bool
	stats      Stats
	step       Step
}

// NewIntegrator returns the workspace of method m (nil means DP5) for states
// of dimension n.
func NewIntegrator(m *Method, n int) *Integrator {
	if m == nil {
		m = DP5
	}
	total := m.totalStages()
	slab := make([]float64, (total+5+len(m.Dense))*n)
	next := func() []float64 {
		v := slab[:n:n]
		slab = slab[n:]
		return v
	}
	in := &Integrator{m: m, n: n}
	in.k = make([][]float64, total)
	for i := range in.k {
		in.k[i] = next()
	}
	in.y, in.ynew, in.ytmp, in.atol, in.ydst = next(), next(), next(), next(), next()
	in.dense = make([][]float64, len(m.Dense))
	for j := range in.dense {
		in.dense[j] = next()
	}
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

// Solve integrates p. It returns the result and, when the solve did not reach
// T1 or a terminal event, an *Error naming the status, the time and the cause.
// Invalid settings give an error and a nil result.
func (in *Integrator) Solve(ctx context.Context, p Problem, s Settings) (*Result, error) {
	m := in.m
	if s.Method != nil && s.Method != m {
		return nil, fmt.Errorf("ode: Settings.Method %s differs from the integrator's %s", s.Method.Name, m.Name)
	}
	cfg, err := in.setup(p, &s)
	if err != nil {
		return nil, err
	}
	n := in.n
	res := &Result{Y: make([]float64, n)}
	if len(s.TEval) > 0 {
		res.TEval = make([]float64, 0, len(s.TEval))
		res.YEval = make([]float64, 0, len(s.TEval)*n)
	}
	if s.Dense {
		res.Solution = &Solution{n: n, m: len(m.Dense), dir: cfg.dir}
	}
	in.stats = Stats{}
	in.f = p.Func
	defer func() { in.f = nil }()
	done := ctx.Done()

	t := p.T0
	copy(in.y, p.Y0)
	s0 := m.Stages()
	p.Func(t, in.y, in.k[0])
	in.stats.FuncEvals++
	if !allFinite(in.k[0]) {
		return in.fail(res, t, 0, NonFinite, "f(t0, y0) is not finite", nil)
	}
	nev := len(s.Events)
	if nev > 0 {
		in.gPrev = grow(in.gPrev, nev)
		in.gNew = grow(in.gNew, nev)
		in.gSample = grow(in.gSample, nev*(cfg.samples+1))
		for e, ev := range s.Events {
			in.gPrev[e] = ev.Func(t, in.y)
		}
	}
	iEval := 0
	for iEval < len(s.TEval) && s.TEval[iEval] == t {
		res.TEval = append(res.TEval, t)
		res.YEval = append(res.YEval, in.y...)
		iEval++
	}
	if p.T0 == p.T1 {
		copy(res.Y, in.y)
		res.T = t
		res.Stats = in.stats
		return res, nil
	}

	h := s.InitialStep * cfg.dir
	if s.FixedStep > 0 {
		h = (p.T1 - p.T0) / float64(cfg.nFixed)
	} else if h == 0 {
		h = in.initialStep(p.Func, t, cfg)
	}
	errPrev := errPrevInit
	rejected := false  // the previous attempt was rejected
	nonFinite := false // the latest rejection was caused by NaN or Inf
	attempts := 0
	for {
		if done != nil {
			select {
			case <-done:
				return in.fail(res, t, h, Canceled, "solve canceled", ctx.Err())
			default:
			}
		}
		if attempts >= cfg.maxSteps {
			return in.fail(res, t, h, TooManySteps, fmt.Sprintf("MaxSteps = %d attempted steps", cfg.maxSteps), nil)
		}
		attempts++

		last := false
		if s.FixedStep > 0 {
			k := in.stats.Steps + 1
			tn := p.T0 + (p.T1-p.T0)*float64(k)/float64(cfg.nFixed)
			h = tn - t
			last = k == cfg.nFixed
		} else {
			if math.Abs(h) > cfg.hmax {
				h = cfg.hmax * cfg.dir
			}
			if cfg.dir*(t+h-p.T1) >= 0 {
				h = p.T1 - t
				last = true
			}
		}
		if !(math.Abs(h) >= 10*ulp(t)) {
			st := StepTooSmall
			cause := "step size below 10 ulp of t (tolerance cannot be met)"
			if nonFinite {
				st, cause = NonFinite, "NaN or Inf in the step that rejection could not cure"
			}
			return in.fail(res, t, h, st, cause, nil)
		}

		in.attempt(p.Func, t, h)
		errNorm := in.errorNorm(h)
		if s.FixedStep > 0 {
			if !allFinite(in.ynew) || !allFinite(in.k[s0]) {
				return in.fail(res, t, h, NonFinite, "NaN or Inf with a fixed step", nil)
			}
			errNorm = 0
		}
		if !finite(errNorm) || !allFinite(in.k[s0]) {
			in.stats.Rejected++
			rejected, nonFinite = true, true
			h *= 0.1
			continue
		}
		if errNorm > 1 {
			in.stats.Rejected++
			rejected, nonFinite = true, false
			h *= math.Max(cfg.minScale, cfg.safety*math.Pow(errNorm, -cfg.beta1))
			continue
		}

		// Accepted.
		in.stats.Steps++
		tnew := t + h
		if last {
			tnew = p.T1
		}
		in.t0, in.h, in.denseReady = t, tnew-t, false
		stop := false
		if nev > 0 {
			tStop, terminal := in.locateEvents(res, s.Events, cfg.samples, t, tnew)
			if terminal {
				tnew, stop = tStop, true
				res.Status = TerminalEvent
				if tnew != in.t0+in.h { // at the step's end y₁ is exact
					in.interpolate(in.ynew, tnew)
				}
			}
		}
		for iEval < len(s.TEval) && cfg.dir*(s.TEval[iEval]-tnew) <= 0 {
			te := s.TEval[iEval]
			res.TEval = append(res.TEval, te)
			if te == tnew {
				res.YEval = append(res.YEval, in.ynew...)
			} else {
				off := len(res.YEval)
				res.YEval = append(res.YEval, in.y...)
				in.interpolate(res.YEval[off:], te)
			}
			iEval++
		}
		if res.Solution != nil {
			in.ensureDense()
			res.Solution.add(in.t0, in.h, tnew, in.y, in.dense)
		}
		if s.Observer != nil {
			in.step.T0, in.step.T1, in.step.Y0, in.step.Y1 = t, tnew, in.y, in.ynew
			if err := s.Observer(&in.step); err != nil {
				in.y, in.ynew = in.ynew, in.y
				return in.fail(res, tnew, h, Stopped, "stopped by the observer", err)
			}
		}
		// FSAL: the last stage of this step is the first of the next.
		in.y, in.ynew = in.ynew, in.y
		in.k[0], in.k[s0] = in.k[s0], in.k[0]
		t = tnew
		if nev > 0 {
			in.gPrev, in.gNew = in.gNew, in.gPrev
		}
		if last || stop {
			break
		}
		if s.FixedStep == 0 {
			var fac float64
			if errNorm == 0 {
				fac = cfg.maxScale
			} else {
				fac = cfg.safety * math.Pow(errNorm, -cfg.beta1) * math.Pow(errPrev, cfg.beta2)
				fac = math.Min(cfg.maxScale, math.Max(cfg.minScale, fac))
			}
			if rejected {
				fac = math.Min(fac, 1)
			}
			errPrev = math.Max(errNorm, errPrevInit)
			h *= fac
		}
		rejected = false
	}
	copy(res.Y, in.y)
	res.T = t
	res.Stats = in.stats
	return res, nil
}

// fail ends a solve at the last accepted point (t, in.y).
func (in *Integrator) fail(res *Result, t, h float64, st Status, cause string, err error) (*Result, error) {
	copy(res.Y, in.y)
	res.T = t
	res.Status = st
	res.Stats = in.stats
	return res, &Error{Status: st, T: t, H: h, Cause: cause, Err: err}
}

type config struct {
	dir                        float64
	hmax                       float64
	maxSteps, nFixed, samples  int
	safety, minScale, maxScale float64
	beta1, beta2               float64
}

// setup validates p and s and fills the tolerances.
func (in *Integrator) setup(p Problem, s *Settings) (config, error) {
	var c config
	m := in.m
	if p.Func == nil {
		return c, errors.New("ode: Problem.Func is nil")
	}
	if len(p.Y0) != in.n {
		return c, fmt.Errorf("ode: len(Problem.Y0) = %d, the integrator was made for %d", len(p.Y0), in.n)
	}
	if !finite(p.T0) || !finite(p.T1) {
		return c, fmt.Errorf("ode: Problem.T0 = %g and T1 = %g must be finite", p.T0, p.T1)
	}
	for i, v := range p.Y0 {
		if !finite(v) {
			return c, fmt.Errorf("ode: Problem.Y0[%d] = %g is not finite", i, v)
		}
	}
	c.dir = 1
	if p.T1 < p.T0 {
		c.dir = -1
	}
	in.rtol = s.RTol
	if in.rtol == 0 {
		in.rtol = DefaultRTol
	}
	if !(in.rtol > 0) || !finite(in.rtol) {
		return c, fmt.Errorf("ode: Settings.RTol = %g, want a finite value > 0", s.RTol)
	}
	atol := s.ATol
	if atol == 0 {
		atol = DefaultATol
	}
	if s.ATolVec != nil {
		if len(s.ATolVec) != in.n {
			return c, fmt.Errorf("ode: len(Settings.ATolVec) = %d, want %d", len(s.ATolVec), in.n)
		}
		for i, v := range s.ATolVec {
			if !(v >= 0) || !finite(v) {
				return c, fmt.Errorf("ode: Settings.ATolVec[%d] = %g, want a finite value ≥ 0", i, v)
			}
			in.atol[i] = v
		}
	} else {
		if !(atol >= 0) || !finite(atol) {
			return c, fmt.Errorf("ode: Settings.ATol = %g, want a finite value ≥ 0", s.ATol)
		}
		for i := range in.atol {
			in.atol[i] = atol
		}
	}
	span := math.Abs(p.T1 - p.T0)
	c.hmax = s.MaxStep
	if c.hmax == 0 {
		c.hmax = span
	}
	if !(c.hmax > 0) && span > 0 {
		return c, fmt.Errorf("ode: Settings.MaxStep = %g, want > 0", s.MaxStep)
	}
	if s.InitialStep < 0 || !finite(s.InitialStep) {
		return c, fmt.Errorf("ode: Settings.InitialStep = %g, want a finite value ≥ 0", s.InitialStep)
	}
	if s.FixedStep < 0 || !finite(s.FixedStep) {
		return c, fmt.Errorf("ode: Settings.FixedStep = %g, want a finite value ≥ 0", s.FixedStep)
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
		return c, fmt.Errorf("ode: Settings.MaxSteps = %d, want ≥ 0", s.MaxSteps)
	}
	c.samples = s.EventSamples
	if c.samples == 0 {
		c.samples = defaultSamples
	}
	if c.samples < 1 {
		return c, fmt.Errorf("ode: Settings.EventSamples = %d, want ≥ 0", s.EventSamples)
	}
	for i, ev := range s.Events {
		if ev.Func == nil {
			return c, fmt.Errorf("ode: Settings.Events[%d].Func is nil", i)
		}
		if ev.Direction < -1 || ev.Direction > 1 {
			return c, fmt.Errorf("ode: Settings.Events[%d].Direction = %d, want -1, 0 or 1", i, ev.Direction)
		}
	}
	for i, te := range s.TEval {
		if !finite(te) || c.dir*(te-p.T0) < 0 || c.dir*(te-p.T1) > 0 {
			return c, fmt.Errorf("ode: Settings.TEval[%d] = %g is outside [%g, %g]", i, te, p.T0, p.T1)
		}
		if i > 0 && c.dir*(te-s.TEval[i-1]) < 0 {
			return c, fmt.Errorf("ode: Settings.TEval is not monotone in the direction of integration at index %d", i)
		}
	}
	ctl := s.Controller
	c.safety = pick(ctl.Safety, defaultSafety)
	c.minScale = pick(ctl.MinScale, m.MinScale)
	c.maxScale = pick(ctl.MaxScale, m.MaxScale)
	c.beta1 = pick(ctl.Beta1, m.Beta1)
	c.beta2 = pick(ctl.Beta2, m.Beta2)
	if ctl.Integral {
		c.beta1 = 1 / float64(m.ErrorOrder+1)
		c.beta2 = 0
	}
	if !(c.safety > 0 && c.safety <= 1) {
		return c, fmt.Errorf("ode: Controller.Safety = %g, want a value in (0, 1]", ctl.Safety)
	}
	if !(c.minScale > 0 && c.minScale < 1 && c.maxScale > 1) || !finite(c.maxScale) {
		return c, fmt.Errorf("ode: Controller.MinScale = %g and MaxScale = %g, want 0 < MinScale < 1 < MaxScale < ∞", c.minScale, c.maxScale)
	}
	if !(c.beta1 > 0) || !(c.beta2 >= 0) || !finite(c.beta1) || !finite(c.beta2) {
		return c, fmt.Errorf("ode: Controller.Beta1 = %g, Beta2 = %g, want Beta1 > 0 and Beta2 ≥ 0", c.beta1, c.beta2)
	}
	return c, nil
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

// attempt computes stages 1..s-1, y₁ = in.ynew and the FSAL stage k_s.
func (in *Integrator) attempt(f Func, t, h float64) {
	m := in.m
	s := m.Stages()
	for i := 1; i < s; i++ {
		in.combine(in.ytmp, in.y, h, m.rows[i])
		f(t+m.cAll[i]*h, in.ytmp, in.k[i])
	}
	in.combine(in.ynew, in.y, h, m.bSp)
	f(t+h, in.ynew, in.k[s])
	in.stats.FuncEvals += s
}

// combine sets dst = y + h Σ a_j k_j over the sparse weights w.
func (in *Integrator) combine(dst, y []float64, h float64, w []coef) {
	copy(dst, y)
	for _, c := range w {
		a := h * c.a
		kj := in.k[c.j][:len(dst)]
		for i, v := range kj {
			dst[i] += a * v
		}
	}
}

// errorNorm returns the scaled RMS norm of the local error estimate.
func (in *Integrator) errorNorm(h float64) float64 {
	m := in.m
	n := in.n
	rtol := in.rtol
	var e5, e3 float64
	for i := 0; i < n; i++ {
		sc := in.atol[i] + rtol*math.Max(math.Abs(in.y[i]), math.Abs(in.ynew[i]))
		var d float64
		for _, c := range m.eSp {
			d += c.a * in.k[c.j][i]
		}
		d /= sc
		e5 += d * d
		if m.e3Sp != nil {
			var d3 float64
			for _, c := range m.e3Sp {
				d3 += c.a * in.k[c.j][i]
			}
			d3 /= sc
			e3 += d3 * d3
		}
	}
	if m.e3Sp == nil {
		return math.Abs(h) * math.Sqrt(e5/float64(n))
	}
	// dop853.f: ERR = |h|·ERR5² / sqrt(n·(ERR5² + 0.01·ERR3²)).
	den := e5 + 0.01*e3
	if den == 0 {
		return 0
	}
	return math.Abs(h) * e5 / math.Sqrt(float64(n)*den)
}

// initialStep is Hairer's starting step size (HNW I, II.4, p. 169;
// HINIT in dopri5.f), with RMS norms. It costs one evaluation.
func (in *Integrator) initialStep(f Func, t float64, c config) float64 {
	n := in.n
	var d0, d1 float64
	for i := 0; i < n; i++ {
		sc := in.atol[i] + in.rtol*math.Abs(in.y[i])
		d0 += (in.y[i] / sc) * (in.y[i] / sc)
		d1 += (in.k[0][i] / sc) * (in.k[0][i] / sc)
	}
	d0 = math.Sqrt(d0 / float64(n))
	d1 = math.Sqrt(d1 / float64(n))
	h0 := 1e-6
	if d0 > 1e-5 && d1 > 1e-5 {
		h0 = 0.01 * d0 / d1
	}
	h0 = math.Min(h0, c.hmax)
	for i := 0; i < n; i++ {
		in.ytmp[i] = in.y[i] + c.dir*h0*in.k[0][i]
	}
	k1 := in.k[1]
	f(t+c.dir*h0, in.ytmp, k1)
	in.stats.FuncEvals++
	var d2 float64
	for i := 0; i < n; i++ {
		sc := in.atol[i] + in.rtol*math.Abs(in.y[i])
		d := (k1[i] - in.k[0][i]) / sc
		d2 += d * d
	}
	d2 = math.Sqrt(d2/float64(n)) / h0
	var h1 float64
	if dm := math.Max(d1, d2); !(dm > 1e-15) {
		h1 = math.Max(1e-6, h0*1e-3)
	} else {
		h1 = math.Pow(0.01/dm, 1/float64(in.m.Order))
	}
	return c.dir * math.Min(math.Min(100*h0, h1), c.hmax)
}
