// Package ode integrates systems of ordinary differential equations
// y' = f(t, y) with explicit embedded Runge–Kutta pairs, adaptive step-size
// control, dense output, output at requested times, event location and
// cancellation.
//
// The state is one flat []float64 and the right-hand side writes into a slice
// the caller provides, so that after set-up a solve allocates nothing per
// step. Three methods are provided as exported tableau values: DP5
// (Dormand–Prince 5(4)), Tsit5 (Tsitouras 5(4)) and DOP853 (Dormand–Prince
// 8(5,3)), each with its continuous extension.
//
// The step-size control, the error norm and the initial-step heuristic follow
// Hairer's codes dopri5.f and dop853.f.
//
// References:
//
//	E. Hairer, S. P. Nørsett, G. Wanner, Solving Ordinary Differential
//	Equations I: Nonstiff Problems, 2nd ed., Springer 1993 (HNW I), II.4–II.6.
//	J. R. Dormand, P. J. Prince, A family of embedded Runge–Kutta formulae,
//	J. Comput. Appl. Math. 6 (1980) 19–26.
//	Ch. Tsitouras, Runge–Kutta pairs of order 5(4) satisfying only the first
//	column simplifying assumption, Comput. Math. Appl. 62 (2011) 770–775.
//	R. P. Brent, Algorithms for Minimization without Derivatives, 1973, ch. 4.
package ode
