package ode

import (
	"math"
	"sort"
)

type crossing struct {
	e   int
	t   float64
	dir Direction
}

// locateEvents finds the zero crossings of the event functions in the
// accepted step (t0, t1]. Each function is sampled at `samples` equal
// sub-intervals of the step on the continuous extension, every sign change
// that matches the event's direction is refined by Brent's method, and the
// crossings are recorded in time order. If a terminal event fires, the
// crossings after the first terminal one are dropped and its time is
// returned with terminal = true. gNew receives g at the end of the step (or
// at the terminal crossing).
func (in *Integrator) locateEvents(res *Result, events []Event, samples int, t0, t1 float64) (tStop float64, terminal bool) {
	g := in.sampleEvents(events, samples, t0, t1)
	copy(in.gNew, g[samples*len(events):(samples+1)*len(events)])
	var found []crossing
	for e := range events {
		found = in.crossings(found, events, e, g, samples, t0, t1)
	}
	if len(found) == 0 {
		return 0, false
	}
	dir := 1.0
	if t1 < t0 {
		dir = -1
	}
	sort.SliceStable(found, func(a, b int) bool { return dir*(found[a].t-found[b].t) < 0 })
	for _, c := range found {
		y := make([]float64, in.n)
		if c.t == t1 {
			copy(y, in.ynew)
		} else {
			in.interpolate(y, c.t)
		}
		res.Events = append(res.Events, EventRecord{Index: c.e, T: c.t, Y: y, Direction: c.dir})
		if events[c.e].Terminal {
			for e, ev := range events {
				in.gNew[e] = ev.Func(c.t, y)
			}
			return c.t, true
		}
	}
	return 0, false
}

// sampleEvents returns the event functions at θ = j/samples of the step,
// j = 0..samples: row j of the result (in.gSample), row 0 from the last
// step's end.
func (in *Integrator) sampleEvents(events []Event, samples int, t0, t1 float64) []float64 {
	nev := len(events)
	g := in.gSample
	copy(g[:nev], in.gPrev)
	for j := 1; j <= samples; j++ {
		row := g[j*nev : (j+1)*nev]
		var y []float64
		var tj float64
		if j == samples {
			y, tj = in.ynew, t1
		} else {
			tj = t0 + (t1-t0)*float64(j)/float64(samples)
			in.interpolate(in.ydst, tj)
			y = in.ydst
		}
		for e, ev := range events {
			row[e] = ev.Func(tj, y)
		}
	}
	return g
}

// crossings appends to found the crossings of event e in the step: each
// sign change of its samples g in the event's direction, refined by
// Brent's method on the continuous extension.
func (in *Integrator) crossings(found []crossing, events []Event, e int, g []float64, samples int, t0, t1 float64) []crossing {
	nev, ev := len(events), events[e]
	for j := 0; j < samples; j++ {
		ga, gb := g[j*nev+e], g[(j+1)*nev+e]
		var d Direction
		switch {
		case ga < 0 && gb >= 0:
			d = Rising
		case ga > 0 && gb <= 0:
			d = Falling
		default:
			continue
		}
		if ev.Direction != Both && ev.Direction != d {
			continue
		}
		ta := t0 + (t1-t0)*float64(j)/float64(samples)
		tb := t0 + (t1-t0)*float64(j+1)/float64(samples)
		if j+1 == samples {
			tb = t1
		}
		tr := tb
		if gb != 0 {
			fn := func(t float64) float64 {
				in.interpolate(in.ydst, t)
				return ev.Func(t, in.ydst)
			}
			tr = brent(fn, ta, tb, ga, gb)
		}
		found = append(found, crossing{e, tr, d})
	}
	return found
}

// brent returns a zero of f in the bracket [a, b] (f(a)·f(b) ≤ 0, fa = f(a),
// fb = f(b)) to within a few ulp of the root, by Brent's method: inverse
// quadratic interpolation and secant steps safeguarded by bisection
// (R. P. Brent, Algorithms for Minimization without Derivatives, 1973,
// ch. 4, procedure zero).
func brent(f func(float64) float64, a, b, fa, fb float64) float64 {
	const eps = 0x1p-52
	c, fc := a, fa
	d := b - a
	e := d
	for iter := 0; iter < 200; iter++ {
		if (fb > 0) == (fc > 0) && fb != 0 && fc != 0 {
			c, fc = a, fa
			d = b - a
			e = d
		}
		if math.Abs(fc) < math.Abs(fb) {
			a, b, c = b, c, b
			fa, fb, fc = fb, fc, fb
		}
		tol := 2*eps*math.Abs(b) + 0x1p-1074
		m := 0.5 * (c - b)
		if math.Abs(m) <= tol || fb == 0 {
			return b
		}
		if math.Abs(e) < tol || math.Abs(fa) <= math.Abs(fb) {
			d = m
			e = m
		} else {
			s := fb / fa
			var p, q float64
			if a == c {
				p = 2 * m * s
				q = 1 - s
			} else {
				q = fa / fc
				r := fb / fc
				p = s * (2*m*q*(q-r) - (b-a)*(r-1))
				q = (q - 1) * (r - 1) * (s - 1)
			}
			if p > 0 {
				q = -q
			} else {
				p = -p
			}
			if 2*p < 3*m*q-math.Abs(tol*q) && p < math.Abs(0.5*e*q) {
				e = d
				d = p / q
			} else {
				d = m
				e = m
			}
		}
		a, fa = b, fb
		if math.Abs(d) > tol {
			b += d
		} else if m > 0 {
			b += tol
		} else {
			b -= tol
		}
		fb = f(b)
	}
	return b
}

// CacheByTime returns g remembered by t: within one solve the state is a
// function of t, so event functions and an observer that need g at the same
// (t, y) compute it once. It is not safe for concurrent use.
func CacheByTime(g func(y []float64) float64) func(t float64, y []float64) float64 {
	ct, cg := math.NaN(), 0.0
	return func(t float64, y []float64) float64 {
		if t != ct {
			ct, cg = t, g(y)
		}
		return cg
	}
}
