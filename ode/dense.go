package ode

import (
	"fmt"
	"sort"
)

// ensureDense computes the extra stages (if the method has any) and the
// Hairer-form vectors F_j of the current accepted step.
func (in *Integrator) ensureDense() {
	if in.denseReady {
		return
	}
	m := in.m
	s := m.Stages()
	h := in.h
	for k := range m.ExtraC {
		i := s + 1 + k
		in.combine(in.ytmp, in.y, h, m.rows[i])
		in.f(in.t0+m.cAll[i]*h, in.ytmp, in.k[i])
		in.stats.FuncEvals++
	}
	for j, w := range m.dSp {
		fj := in.dense[j]
		for i := range fj {
			fj[i] = 0
		}
		for _, c := range w {
			a := h * c.a
			for i, v := range in.k[c.j] {
				fj[i] += a * v
			}
		}
	}
	in.denseReady = true
}

// interpolate writes the continuous extension of the current step at t.
func (in *Integrator) interpolate(dst []float64, t float64) {
	in.ensureDense()
	evalHairer(dst, in.y, in.dense, (t-in.t0)/in.h)
}

// evalHairer evaluates y + θ(F₁ + (1−θ)(F₂ + θ(F₃ + …))) into dst.
func evalHairer(dst, y []float64, f [][]float64, theta float64) {
	th1 := 1 - theta
	last := len(f) - 1
	for i := range dst {
		acc := f[last][i]
		for j := last - 1; j >= 0; j-- {
			if j%2 == 0 {
				acc = f[j][i] + th1*acc
			} else {
				acc = f[j][i] + theta*acc
			}
		}
		dst[i] = y[i] + theta*acc
	}
}

// Solution is the continuous extension of a whole solve (Settings.Dense),
// evaluable at any t in the solved interval. At reuses scratch space, so a
// Solution must not be read by several goroutines at once.
type Solution struct {
	n, m int
	dir  float64
	t0   []float64 // start of each step
	t1   []float64 // end of each step (the last may be cut by a terminal event)
	h    []float64 // full length of each step
	y    []float64 // y at the start of each step, n per step
	f    []float64 // Hairer-form vectors, m·n per step
	fv   [][]float64
}

func (s *Solution) add(t0, h, t1 float64, y []float64, f [][]float64) {
	s.t0 = append(s.t0, t0)
	s.t1 = append(s.t1, t1)
	s.h = append(s.h, h)
	s.y = append(s.y, y...)
	for _, fj := range f {
		s.f = append(s.f, fj...)
	}
}

// Steps returns the number of stored steps.
func (s *Solution) Steps() int { return len(s.t0) }

// Span returns the first and last time covered.
func (s *Solution) Span() (t0, t1 float64) {
	if len(s.t0) == 0 {
		return 0, 0
	}
	return s.t0[0], s.t1[len(s.t1)-1]
}

// At writes y(t) into dst, which must have the state's length, and returns
// dst. It returns an error when t is outside the solved interval.
func (s *Solution) At(dst []float64, t float64) ([]float64, error) {
	if len(dst) != s.n {
		panic(fmt.Sprintf("ode: Solution.At: len(dst) = %d, want %d", len(dst), s.n))
	}
	a, b := s.Span()
	if len(s.t0) == 0 || s.dir*(t-a) < 0 || s.dir*(t-b) > 0 {
		return dst, fmt.Errorf("ode: Solution.At: t = %g is outside the solved interval [%g, %g]", t, a, b)
	}
	k := sort.Search(len(s.t1), func(i int) bool { return s.dir*(s.t1[i]-t) >= 0 })
	if k == len(s.t1) {
		k--
	}
	if len(s.fv) != s.m {
		s.fv = make([][]float64, s.m)
	}
	for j := range s.fv {
		off := (k*s.m + j) * s.n
		s.fv[j] = s.f[off : off+s.n]
	}
	evalHairer(dst, s.y[k*s.n:(k+1)*s.n], s.fv, (t-s.t0[k])/s.h[k])
	return dst, nil
}
