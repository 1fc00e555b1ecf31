package flow

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
)

// Linearization is the Jacobian J of DerivEigen at a state, applied to vectors
// without forming it (JVP) or assembled densely. It is the exact
// linearization of the flow (docs/math.md, "Population loss and flow"):
// with δM the change of the effective map and δG = −A δM Λ,
//
//	merged:   τ δv̇_i = ⟨δU_i, G⟩ + ⟨U_i, δG⟩,  τ δU̇_i = δv_i G + v_i δG;
//	separate: τ δk̇ = δv G q + v δG q + v G δq,   τ δq̇ = δv Gᵀk + v δGᵀk + v Gᵀδk,
//	          τ δv̇_i = Σ_r δkᵀG q + kᵀδG q + kᵀG δq.
//
// The flow is a gradient flow, so J = −∇²L/(2τ) is symmetric. After
// NewLinearization nothing allocates. A Linearization uses its System's
// scratch space: neither is safe for concurrent use.
type Linearization struct {
	s            *System
	y            []float64
	g, dm, dg    []float64
	gq, dgq, gdq []float64
	gk, dgk, gdk []float64
	e, col       []float64
	full         *fullLinearization  // the full layer's (full.go)
	stack        *stackLinearization // a stack's (stack_linear.go)
}

// NewLinearization returns the linearization workspace of s; At sets the
// point.
func (s *System) NewLinearization() *Linearization {
	n, d := s.n, s.d
	l := &Linearization{s: s, y: make([]float64, n),
		g: make([]float64, d*d), dm: make([]float64, d*d), dg: make([]float64, d*d),
		gq: make([]float64, d), dgq: make([]float64, d), gdq: make([]float64, d),
		gk: make([]float64, d), dgk: make([]float64, d), gdk: make([]float64, d),
		e: make([]float64, n), col: make([]float64, n)}
	switch {
	case s.law.full != nil:
		l.full = s.law.full.newLinearization(n)
		l.full.coef.prod.share(s.workers)
	case s.stack != nil:
		l.stack = s.stack.newLinearization(l)
	}
	return l
}

// At sets the point y (eigen coordinates) of the linearization.
func (l *Linearization) At(y []float64) {
	l.s.checkLen("y", y)
	copy(l.y, y)
	switch {
	case l.full != nil:
		l.full.at(y)
		return
	case l.stack != nil:
		l.stack.at(y)
		return
	}
	l.s.effectiveMap(y)
	l.s.residual(l.g, nil, l.s.scr.m, 1, true)
}

// Dense writes J at the current point into jac, row-major n × n,
// symmetrized: column j is J·e_j, and (J + Jᵀ)/2 removes the round-off
// asymmetry, whose largest entry it returns.
func (l *Linearization) Dense(jac []float64) (asym float64) {
	n := l.s.n
	if len(jac) != n*n {
		panic(fmt.Sprintf("flow: Linearization.Dense: len(jac) = %d, want %d", len(jac), n*n))
	}
	for j := 0; j < n; j++ {
		l.e[j] = 1
		l.Apply(l.col, l.e)
		l.e[j] = 0
		for i, v := range l.col {
			jac[i*n+j] = v
		}
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			x, z := jac[i*n+j], jac[j*n+i]
			asym = max(asym, x-z, z-x)
			jac[i*n+j], jac[j*n+i] = 0.5*(x+z), 0.5*(x+z)
		}
	}
	return asym
}

// Jac returns the dense Jacobian as an ode.Problem.Jac.
func (s *System) Jac() func(t float64, y, jac []float64) {
	l := s.NewLinearization()
	return func(_ float64, y, jac []float64) {
		l.At(y)
		l.Dense(jac)
	}
}

// Apply writes J·dy into dst (eigen coordinates). It does not allocate.
func (l *Linearization) Apply(dst, dy []float64) {
	s, y := l.s, l.y
	n := s.Len()
	if len(dst) != n || len(dy) != n {
		panic(fmt.Sprintf("flow: Linearization.Apply: lengths %d and %d, want %d", len(dst), len(dy), n))
	}
	switch {
	case l.full != nil:
		l.full.apply(dst, dy, s.Model.Tau)
		return
	case l.stack != nil:
		l.stack.apply(dst, dy)
		return
	}
	mapChange(l.dm, y, dy, s.Model, s.d)
	s.residual(l.dg, nil, l.dm, 1, false)
	l.chain(dst, y, dy, l.g, l.dg, s.Model, s.Model.Tau)
}

// mapChange writes into dm the change δM of one layer's effective map
// under the change dy of its heads y (System's layout): Σ_i δv_i U_i + v_i δU_i
// (merged) or Σ_{i,r} δv_i k qᵀ + v_i δk qᵀ + v_i k δqᵀ (separate).
func mapChange(dm, y, dy []float64, model Model, d int) {
	clear(dm)
	h := model.H
	if model.Kind == Merged {
		dd := d * d
		for i := 0; i < h; i++ {
			u, du := y[h+i*dd:h+(i+1)*dd], dy[h+i*dd:h+(i+1)*dd]
			for c := range dm {
				dm[c] += dy[i]*u[c] + y[i]*du[c]
			}
		}
		return
	}
	r := model.R
	hr := h * r
	kOff, qOff := h, h+hr*d
	row := func(v []float64, off, j int) []float64 { return v[off+j*d : off+(j+1)*d] }
	for j := 0; j < hr; j++ {
		vi, dvi := y[j/r], dy[j/r]
		k, q := row(y, kOff, j), row(y, qOff, j)
		dk, dq := row(dy, kOff, j), row(dy, qOff, j)
		for p := 0; p < d; p++ {
			for c := 0; c < d; c++ {
				dm[p*d+c] += dvi*k[p]*q[c] + vi*dk[p]*q[c] + vi*k[p]*dq[c]
			}
		}
	}
}

// chain writes into dst the change of one layer's flow (heads y, change
// dy) from its residual g and the residual's change dg, by the product
// rule through the heads (the formulas of Linearization).
func (l *Linearization) chain(dst, y, dy, g, dg []float64, model Model, tau float64) {
	d, h := len(l.gq), model.H
	if model.Kind == Merged {
		dd := d * d
		for i := 0; i < h; i++ {
			u, du := y[h+i*dd:h+(i+1)*dd], dy[h+i*dd:h+(i+1)*dd]
			out := dst[h+i*dd : h+(i+1)*dd]
			var dv float64
			for c := range g {
				dv += du[c]*g[c] + u[c]*dg[c]
				out[c] = (dy[i]*g[c] + y[i]*dg[c]) / tau
			}
			dst[i] = dv / tau
		}
		return
	}
	r := model.R
	hr := h * r
	kOff, qOff := h, h+hr*d
	row := func(v []float64, off, j int) []float64 { return v[off+j*d : off+(j+1)*d] }
	mv := func(out, mtx, x []float64, trans bool) {
		t := blas.NoTrans
		if trans {
			t = blas.Trans
		}
		impl.Dgemv(t, d, d, 1, mtx, d, x, 1, 0, out, 1)
	}
	gq, dgq, gdq, gk, dgk, gdk := l.gq, l.dgq, l.gdq, l.gk, l.dgk, l.gdk
	for i := 0; i < h; i++ {
		dst[i] = 0
	}
	for j := 0; j < hr; j++ {
		i := j / r
		vi, dvi := y[i], dy[i]
		k, q := row(y, kOff, j), row(y, qOff, j)
		dk, dq := row(dy, kOff, j), row(dy, qOff, j)
		mv(gq, g, q, false)
		mv(dgq, dg, q, false)
		mv(gdq, g, dq, false)
		mv(gk, g, k, true)
		mv(dgk, dg, k, true)
		mv(gdk, g, dk, true)
		outK, outQ := row(dst, kOff, j), row(dst, qOff, j)
		var dv float64
		for p := 0; p < d; p++ {
			dv += dk[p]*gq[p] + k[p]*dgq[p] + k[p]*gdq[p]
			outK[p] = (dvi*gq[p] + vi*dgq[p] + vi*gdq[p]) / tau
			outQ[p] = (dvi*gk[p] + vi*dgk[p] + vi*gdk[p]) / tau
		}
		dst[i] += dv / tau
	}
}
