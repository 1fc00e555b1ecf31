// Package odetest provides initial-value problems with known answers for
// testing and benchmarking the ode package's methods, as gonum's
// integrate/testquad does for quadrature: the stiff classics of the Test Set
// for IVP Solvers (F. Mazzia, C. Magherini, Bari 2008; the problems of
// E. Hairer, G. Wanner, Solving Ordinary Differential Equations II, 2nd ed.,
// Springer 1996 (HNW II), IV.10) with their published reference solutions,
// and discretized parabolic problems with exact solutions.
package odetest

import (
	"math"

	"github.com/linattn/linattn/ode"
)

// Problem is a test problem: the initial-value problem and the solution at
// its final time.
type Problem struct {
	Name string
	ode.Problem
	// Want is y(T1): exact, or the published reference solution.
	Want []float64
	// ATol is the absolute tolerance scale the problem's components need
	// (components are far apart in magnitude); zero where RTol alone will do.
	ATol []float64
}

// Robertson is the chemical reaction of Robertson (1966) on [0, 10¹¹]
// (HNW II, IV.10, eq. 10.3; Test Set "ROBER"), with the Test Set's
// reference solution at 10¹¹. Its Jacobian has eigenvalues down to −10⁴ at
// first and the solution varies on all time scales.
func Robertson() Problem {
	return Problem{
		Name: "Robertson",
		Problem: ode.Problem{
			Func: func(_ float64, y, dy []float64) {
				dy[0] = -0.04*y[0] + 1e4*y[1]*y[2]
				dy[2] = 3e7 * y[1] * y[1]
				dy[1] = -dy[0] - dy[2]
			},
			Jac: func(_ float64, y, j []float64) {
				j[0], j[1], j[2] = -0.04, 1e4*y[2], 1e4*y[1]
				j[6], j[7], j[8] = 0, 6e7*y[1], 0
				j[3], j[4], j[5] = 0.04, -1e4*y[2]-6e7*y[1], -1e4*y[1]
			},
			Autonomous: true,
			T0:         0, T1: 1e11,
			Y0: []float64{1, 0, 0},
		},
		Want: []float64{0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050e+00},
		ATol: []float64{1e-14, 1e-20, 1e-14},
	}
}

// VanDerPol is the Van der Pol oscillator y₁' = y₂, ε y₂' = (1 − y₁²)y₂ − y₁
// with ε = 10⁻⁶ (μ = 10⁶ in the time-scaled form) on [0, 2], from (2, 0)
// (HNW II, IV.10, eq. 10.1'; Test Set "VDPOL"), with the Test Set's
// reference solution at t = 2.
func VanDerPol() Problem {
	const eps = 1e-6
	return Problem{
		Name: "VanDerPol",
		Problem: ode.Problem{
			Func: func(_ float64, y, dy []float64) {
				dy[0] = y[1]
				dy[1] = ((1-y[0]*y[0])*y[1] - y[0]) / eps
			},
			Jac: func(_ float64, y, j []float64) {
				j[0], j[1] = 0, 1
				j[2], j[3] = (-2*y[0]*y[1]-1)/eps, (1-y[0]*y[0])/eps
			},
			Autonomous: true,
			T0:         0, T1: 2,
			Y0: []float64{2, 0},
		},
		Want: []float64{0.1706167732170483e+01, -0.8928097010248125e+00},
	}
}

// HIRES is the "High Irradiance RESponse" of photomorphogenesis (Schäfer
// 1975; HNW II, IV.10, eq. 10.4; Test Set "HIRES"), eight equations on
// [0, 321.8122], with the Test Set's reference solution.
func HIRES() Problem {
	return Problem{
		Name: "HIRES",
		Problem: ode.Problem{
			Func: func(_ float64, y, dy []float64) {
				r := 280 * y[5] * y[7]
				dy[0] = -1.71*y[0] + 0.43*y[1] + 8.32*y[2] + 0.0007
				dy[1] = 1.71*y[0] - 8.75*y[1]
				dy[2] = -10.03*y[2] + 0.43*y[3] + 0.035*y[4]
				dy[3] = 8.32*y[1] + 1.71*y[2] - 1.12*y[3]
				dy[4] = -1.745*y[4] + 0.43*y[5] + 0.43*y[6]
				dy[5] = -r + 0.69*y[3] + 1.71*y[4] - 0.43*y[5] + 0.69*y[6]
				dy[6] = r - 1.81*y[6]
				dy[7] = -r + 1.81*y[6]
			},
			Jac:        hiresJac,
			Autonomous: true,
			T0:         0, T1: 321.8122,
			Y0: []float64{1, 0, 0, 0, 0, 0, 0, 0.0057},
		},
		Want: []float64{
			0.7371312573325668e-3, 0.1442485726316185e-3, 0.5888729740967575e-4, 0.1175651343283149e-2,
			0.2386356198831331e-2, 0.6238968252742796e-2, 0.2849998395185769e-2, 0.2850001604814231e-2,
		},
	}
}

func hiresJac(_ float64, y, j []float64) {
	for i := range j {
		j[i] = 0
	}
	set := func(r, c int, v float64) { j[r*8+c] = v }
	set(0, 0, -1.71)
	set(0, 1, 0.43)
	set(0, 2, 8.32)
	set(1, 0, 1.71)
	set(1, 1, -8.75)
	set(2, 2, -10.03)
	set(2, 3, 0.43)
	set(2, 4, 0.035)
	set(3, 1, 8.32)
	set(3, 2, 1.71)
	set(3, 3, -1.12)
	set(4, 4, -1.745)
	set(4, 5, 0.43)
	set(4, 6, 0.43)
	set(5, 3, 0.69)
	set(5, 4, 1.71)
	set(5, 5, -0.43-280*y[7])
	set(5, 6, 0.69)
	set(5, 7, -280*y[5])
	set(6, 5, 280*y[7])
	set(6, 6, -1.81)
	set(6, 7, 280*y[5])
	set(7, 5, -280*y[7])
	set(7, 6, 1.81)
	set(7, 7, -280*y[5])
}

// Heat is the heat equation u_t = u_xx on (0, 1) with u = 0 at both ends,
// discretized by second differences on n interior points, from the
// eigenvector u_i(0) = sin(π x_i), x_i = i/(n+1), on [0, T1]. The
// semi-discrete solution is exactly u_i(t) = e^{−μt} sin(π x_i) with
// μ = 4(n+1)² sin²(π/(2(n+1))); the Jacobian's spectrum is real, in
// (−4(n+1)², 0), which SpectralRadius returns as the bound.
func Heat(n int, t1 float64) Problem {
	dx2 := float64((n + 1) * (n + 1))
	y0 := make([]float64, n)
	want := make([]float64, n)
	mu := 4 * dx2 * math.Pow(math.Sin(math.Pi/(2*float64(n+1))), 2)
	for i := range y0 {
		y0[i] = math.Sin(math.Pi * float64(i+1) / float64(n+1))
		want[i] = math.Exp(-mu*t1) * y0[i]
	}
	return Problem{
		Name: "Heat",
		Problem: ode.Problem{
			Func: func(_ float64, u, du []float64) {
				for i := range u {
					var l, r float64
					if i > 0 {
						l = u[i-1]
					}
					if i < n-1 {
						r = u[i+1]
					}
					du[i] = dx2 * (l - 2*u[i] + r)
				}
			},
			SpectralRadius: func(float64, []float64) float64 { return 4 * dx2 },
			Autonomous:     true,
			T0:             0, T1: t1,
			Y0: y0,
		},
		Want: want,
	}
}

// Brusselator is the one-dimensional Brusselator with diffusion
// (HNW II, IV.10, eq. 10.16 with α = 1/50, A = 1, B = 3): on n interior
// points x_i = i/(n+1) with u = 1, v = 3 at both ends,
//
//	u_i' = 1 + u_i² v_i − 4u_i + α(n+1)²(u_{i−1} − 2u_i + u_{i+1}),
//	v_i' = 3u_i − u_i² v_i + α(n+1)²(v_{i−1} − 2v_i + v_{i+1}),
//
// from u_i = 1 + sin(2π x_i), v_i = 3 on [0, 10]; y = (u₁, v₁, u₂, v₂, …).
// Its stiffness (spectral radius ≈ 4α(n+1)²) grows with n. Want is nil: no
// closed form; tests compare with a tight explicit solution.
func Brusselator(n int) Problem {
	const alpha = 1.0 / 50
	c := alpha * float64((n+1)*(n+1))
	y0 := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		y0[2*i] = 1 + math.Sin(2*math.Pi*float64(i+1)/float64(n+1))
		y0[2*i+1] = 3
	}
	return Problem{
		Name: "Brusselator",
		Problem: ode.Problem{
			Func: func(_ float64, y, dy []float64) {
				for i := 0; i < n; i++ {
					u, v := y[2*i], y[2*i+1]
					ul, vl, ur, vr := 1.0, 3.0, 1.0, 3.0
					if i > 0 {
						ul, vl = y[2*i-2], y[2*i-1]
					}
					if i < n-1 {
						ur, vr = y[2*i+2], y[2*i+3]
					}
					dy[2*i] = 1 + u*u*v - 4*u + c*(ul-2*u+ur)
					dy[2*i+1] = 3*u - u*u*v + c*(vl-2*v+vr)
				}
			},
			Autonomous: true,
			T0:         0, T1: 10,
			Y0: y0,
		},
	}
}
