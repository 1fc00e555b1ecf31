package landscape

import (
	"fmt"

	"github.com/linattn/linattn/flow"
	"gonum.org/v1/gonum/mat"
)

// JacVec writes J(y)·dy into dst, where J is the Jacobian of s.Deriv at y;
// y, dy and dst are in eigen coordinates. It is the exact linearization of
// the flow (MATH.md "Population loss and flow"): with δM the change of the
// effective map and δG = −A δM Λ,
//
//	merged:   τ δv̇_i = ⟨δU_i, G⟩ + ⟨U_i, δG⟩,  τ δU̇_i = δv_i G + v_i δG;
//	separate: τ δk̇ = δv G q + v δG q + v G δq,   τ δq̇ = δv Gᵀk + v δGᵀk + v Gᵀδk,
//	          τ δv̇_i = Σ_r δkᵀG q + kᵀδG q + kᵀG δq.
func JacVec(s *flow.System, dst, y, dy []float64) {
	newLinearization(s, y).apply(dst, dy)
}

// linearization holds what J(y)·dy needs that does not depend on dy: the
// state, the residual G at y, and scratch space.
type linearization struct {
	s            *flow.System
	y            []float64
	lam, a       []float64
	g, dm, dg    []float64
	gq, dgq, gdq []float64
	gk, dgk, gdk []float64
}

func newLinearization(s *flow.System, y []float64) *linearization {
	n := s.Len()
	if len(y) != n {
		panic(fmt.Sprintf("landscape: state has length %d, want %d", len(y), n))
	}
	d := s.Dim()
	l := &linearization{s: s, y: y, lam: s.Data.Lambda, a: s.Data.AEigenvalues(),
		g: make([]float64, d*d), dm: make([]float64, d*d), dg: make([]float64, d*d),
		gq: make([]float64, d), dgq: make([]float64, d), gdq: make([]float64, d),
		gk: make([]float64, d), dgk: make([]float64, d), gdk: make([]float64, d)}
	m := s.MapEigen(y)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			l.g[i*d+j] = -l.a[i] * m[i*d+j] * l.lam[j]
		}
		l.g[i*d+i] += l.lam[i] * l.lam[i]
	}
	return l
}

func (l *linearization) apply(dst, dy []float64) {
	s, y, g, dm, dg := l.s, l.y, l.g, l.dm, l.dg
	n := s.Len()
	if len(dst) != n || len(dy) != n {
		panic(fmt.Sprintf("landscape: JacVec lengths %d and %d, want %d", len(dst), len(dy), n))
	}
	d, h := s.Dim(), s.Model.H
	for c := range dm {
		dm[c] = 0
	}
	tau := s.Model.Tau
	if s.Model.Kind == flow.Merged {
		dd := d * d
		for i := 0; i < h; i++ {
			u, du := y[h+i*dd:h+(i+1)*dd], dy[h+i*dd:h+(i+1)*dd]
			for c := range dm {
				dm[c] += dy[i]*u[c] + y[i]*du[c]
			}
		}
		residualChange(dg, dm, l.a, l.lam, d)
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
	r := s.Model.R
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
	residualChange(dg, dm, l.a, l.lam, d)
	// mv returns Mat·x (trans = false) or Matᵀ·x into out.
	mv := func(out, mtx, x []float64, trans bool) {
		for p := 0; p < d; p++ {
			var sum float64
			for c := 0; c < d; c++ {
				if trans {
					sum += mtx[c*d+p] * x[c]
				} else {
					sum += mtx[p*d+c] * x[c]
				}
			}
			out[p] = sum
		}
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

// residualChange sets δG = −A δM Λ (diagonal A and Λ in eigen coordinates).
func residualChange(dg, dm, a, lam []float64, d int) {
	for p := 0; p < d; p++ {
		for c := 0; c < d; c++ {
			dg[p*d+c] = -a[p] * dm[p*d+c] * lam[c]
		}
	}
}

// Jacobian returns the Jacobian of the flow at y (eigen coordinates), built
// column by column from JacVec. Because the flow is a gradient flow,
// J = −∇²L/(2τ) is symmetric; it is returned symmetrized, and the largest
// asymmetry of the assembled matrix is reported (round-off size).
func Jacobian(s *flow.System, y []float64) (*mat.SymDense, float64) {
	n := s.Len()
	lin := newLinearization(s, y)
	cols := mat.NewDense(n, n, nil)
	e := make([]float64, n)
	col := make([]float64, n)
	for j := 0; j < n; j++ {
		e[j] = 1
		lin.apply(col, e)
		e[j] = 0
		cols.SetCol(j, col)
	}
	sym := mat.NewSymDense(n, nil)
	var asym float64
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x, z := cols.At(i, j), cols.At(j, i)
			if dx := x - z; dx > asym || -dx > asym {
				asym = max(dx, -dx)
			}
			sym.SetSym(i, j, 0.5*(x+z))
		}
	}
	return sym, asym
}
