// Package ode integrates systems of ordinary differential equations
// y' = f(t, y) with adaptive step-size control, dense output, output at
// requested times, event location and cancellation.
//
// The state is one flat []float64 and the right-hand side writes into a slice
// the caller provides, so that after set-up a solve allocates nothing per
// step (but what Settings.Dense keeps). The methods, all values of the
// Method interface:
//
//   - explicit embedded Runge–Kutta pairs (*RK): DP5 (Dormand–Prince
//     5(4)), Tsit5 (Tsitouras 5(4)) and DOP853 (Dormand–Prince 8(5,3)), each
//     with its continuous extension, and any pair built from a validated
//     Tableau by NewRK; step control, error norm, initial step and stiffness
//     test as in Hairer's dopri5.f and dop853.f;
//   - ROCK4, Abdulle's stabilized (Runge–Kutta–Chebyshev) method of order
//     4, for stiff problems whose Jacobian has a (nearly) real spectrum:
//     matrix-free, its number of stages follows the spectral radius;
//   - Rodas5P, Steinebach's L-stable Rosenbrock method of order 5, and
//     Radau5, the Radau IIA collocation method of order 5 as in Hairer and
//     Wanner's radau5.f (simplified Newton iterations, Jacobian reuse), for
//     stiff problems of moderate size (dense LU of the Jacobian);
//   - BDF, the variable-order (1–5) backward differentiation method of
//     CVODE in fixed-leading-coefficient Nordsieck form, whose Newton
//     iterations solve their linear systems by GMRES with the problem's
//     Preconditioner (Newton–Krylov: large stiff problems whose stiff part
//     has a cheap approximation), or by a dense LU for small states;
//   - NewAuto(nonstiff, stiff) and Auto = NewAuto(DOP853, ROCK4), which
//     switch between an explicit pair and a stiff method as the stiffness
//     comes and goes.
//
// Package ode/odetest holds known-answer problems (Robertson, Van der Pol,
// HIRES, heat, Brusselator) for tests and benchmarks.
//
// References:
//
//	E. Hairer, S. P. Nørsett, G. Wanner, Solving Ordinary Differential
//	Equations I: Nonstiff Problems, 2nd ed., Springer 1993 (HNW I), II.4–II.6.
//	E. Hairer, G. Wanner, Solving Ordinary Differential Equations II: Stiff
//	and Differential-Algebraic Problems, 2nd ed., Springer 1996 (HNW II),
//	IV.2 (stiffness detection), IV.5 (Radau IIA), IV.7 (Rosenbrock
//	methods), IV.8 (implementation of implicit Runge–Kutta methods, step
//	control); radau5.f from Hairer's web page.
//	J. R. Dormand, P. J. Prince, A family of embedded Runge–Kutta formulae,
//	J. Comput. Appl. Math. 6 (1980) 19–26.
//	Ch. Tsitouras, Runge–Kutta pairs of order 5(4) satisfying only the first
//	column simplifying assumption, Comput. Math. Appl. 62 (2011) 770–775.
//	A. Abdulle, Fourth order Chebyshev methods with recurrence relation,
//	SIAM J. Sci. Comput. 23 (2002) 2041–2054.
//	B. P. Sommeijer, L. F. Shampine, J. G. Verwer, RKC: an explicit solver
//	for parabolic PDEs, J. Comput. Appl. Math. 88 (1998) 315–326 (the
//	spectral-radius estimate).
//	G. Steinebach, Construction of Rosenbrock–Wanner method Rodas5P and
//	numerical benchmarks within the Julia Differential Equations package,
//	BIT 63 (2023) 27.
//	A. C. Hindmarsh et al., SUNDIALS: Suite of nonlinear and
//	differential/algebraic equation solvers, ACM TOMS 31 (2005) 363–396
//	(CVODE; its BDF is VODE's: P. N. Brown, G. D. Byrne, A. C. Hindmarsh,
//	SIAM J. Sci. Stat. Comput. 10 (1989) 1038–1051).
//	P. N. Brown, A. C. Hindmarsh, Reduced storage matrix methods in stiff
//	ODE systems, Appl. Math. Comput. 31 (1989) 40–91 (Newton–Krylov).
//	Y. Saad, M. H. Schultz, GMRES, SIAM J. Sci. Stat. Comput. 7 (1986)
//	856–869.
//	R. P. Brent, Algorithms for Minimization without Derivatives, 1973, ch. 4.
package ode
