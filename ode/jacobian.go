package ode

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// MaxDenseDim is the largest state dimension accepted by the methods that
// factor dense iteration matrices: Rodas5P one n × n matrix, Radau5 one
// n × n and one 2n × 2n (290 MB and 8 times the work at n = 3000), each
// LU taking seconds at this size. Larger problems with a real spectrum are
// ROCK4's (or Auto's).
const MaxDenseDim = 3000

// denseJacobian is the Jacobian ∂f/∂y of the methods that factor it,
// row-major n × n, with its spectral-radius estimate for Auto.
type denseJacobian struct {
	in      *Integrator
	a       []float64 // a[i*n+j] = ∂f_i/∂y_j
	scratch []float64
	rho     float64 // cached radius() and the calls it may still serve
	rhoLeft int
}

func newDenseJacobian(in *Integrator) denseJacobian {
	return denseJacobian{in: in, scratch: make([]float64, 2*in.n)}
}

// eval evaluates J at (t, in.y), in.f0 = f(t, in.y).
func (j *denseJacobian) eval(p *Problem, t float64) { j.evalAt(p, t, j.in.y, j.in.f0) }

// evalAt evaluates J at (t, y), f0 = f(t, y): Problem.Jac, or forward
// differences with relative increments δ_j = √eps·max(|y_j|, atol_j), so
// that components far below 1 (Robertson's 10⁻¹³) are differentiated on
// their own scale; √eps·10⁻⁵ where both vanish. y is restored.
func (j *denseJacobian) evalAt(p *Problem, t float64, y, f0 []float64) {
	in := j.in
	n := in.n
	if j.a == nil {
		j.a = make([]float64, n*n)
	}
	in.stats.JacEvals++
	if p.Jac != nil {
		p.Jac(t, y, j.a)
		return
	}
	df := j.scratch[:n]
	for c := 0; c < n; c++ {
		yc := y[c]
		d := math.Sqrt(eps) * math.Max(math.Abs(yc), in.atol[c])
		if d == 0 {
			d = math.Sqrt(eps) * 1e-5
		}
		y[c] = yc + d
		in.f(t, y, df)
		y[c] = yc
		for r := 0; r < n; r++ {
			j.a[r*n+c] = (df[r] - f0[r]) / d
		}
	}
	in.stats.FuncEvals += n
}

// forget drops the cached spectral-radius estimate.
func (j *denseJacobian) forget() { j.rhoLeft = 0 }

// radius returns a spectral-radius bound of the last Jacobian: twenty power
// iterations enlarged by ROCK4's safety factor, redone every tenth call
// (for Auto's switch back to the explicit method).
func (j *denseJacobian) radius() float64 {
	if j.rhoLeft > 0 {
		j.rhoLeft--
		return j.rho
	}
	j.rhoLeft = 9
	j.rho = rock4RhoSafety * j.powerIteration()
	return j.rho
}

func (j *denseJacobian) powerIteration() float64 {
	n := j.in.n
	if j.a == nil || n == 0 {
		return 0
	}
	x, y := j.scratch[:n], j.scratch[n:]
	for i := range x {
		x[i] = 1 / math.Sqrt(float64(n)) * (1 + float64(i%7)/7)
	}
	var rho float64
	for it := 0; it < 20; it++ {
		xn := norm2(x)
		if xn == 0 {
			return 0
		}
		blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: n, Cols: n, Stride: n, Data: j.a}, blas64.Vector{N: n, Inc: 1, Data: x}, 0, blas64.Vector{N: n, Inc: 1, Data: y})
		rho = norm2(y) / xn
		if rho == 0 {
			break
		}
		for i := range x {
			x[i] = y[i] / (rho * xn)
		}
	}
	return rho
}

// checkDenseDim refuses states too large to factor densely.
func checkDenseDim(method string, n int) error {
	if n > MaxDenseDim {
		return fmt.Errorf("ode: %s factors a dense n × n matrix: n = %d exceeds MaxDenseDim = %d; use ROCK4 (or Auto) for large problems with a real spectrum", method, n, MaxDenseDim)
	}
	return nil
}
