package ode

import "math"

// The Nordsieck history of BDF and its coefficients.
//
// At order q the history is z_j = h^j y⁽ʲ⁾(t_n)/j!, j = 0..q, the scaled
// derivatives of the polynomial that interpolates the solution (z_j = 0
// for j > q). A step predicts z(0) = z·A (A the Pascal matrix: Taylor's
// formula at t_n + h), solves for the correction Δ = y_{n+1} − z₀(0), and
// sets z = z(0) + Δ·l. The Newton iteration needs only z₀(0) and z₁(0);
// the whole z(0) is formed with the correction, in one pass over memory.
// In fixed-leading-coefficient form l is the coefficient vector of
//
//	Λ(x) = (1 + x/ξ*) Π_{j=1}^{q−1} (1 + x/ξ_j),  ξ_j = (t_{n+1} − t_{n+1−j})/h,
//
// with ξ* chosen so that l₁ = Σ_{j=1}^q 1/j whatever the step sizes; with
// constant steps ξ* = q and Λ is the classical BDF polynomial. The
// corrector equation is then z₁(0)/l₁ + Δ − γ f(t_{n+1}, z₀(0) + Δ) = 0
// with γ = h/l₁.
//
// References:
//
//	K. R. Jackson, R. Sacks-Davis, An alternative implementation of variable
//	step-size multistep formulas for stiff ODEs, ACM TOMS 6 (1980) 295–318.
//	P. N. Brown, G. D. Byrne, A. C. Hindmarsh, VODE: a variable-coefficient
//	ODE solver, SIAM J. Sci. Stat. Comput. 10 (1989) 1038–1051.
//	A. C. Hindmarsh et al., SUNDIALS: Suite of nonlinear and
//	differential/algebraic equation solvers, ACM TOMS 31 (2005) 363–396;
//	the CVODE guide, "Mathematical Considerations".

// bdfMaxOrder is the highest order (BDF6 and beyond are not zero-stable).
const bdfMaxOrder = 5

// bdfHistory is the Nordsieck array of the last accepted step and what its
// coefficients need: the orders, the recent step sizes and the test
// constants of the error estimates.
type bdfHistory struct {
	z      [bdfMaxOrder + 1][]float64 // accepted history, scaled to hScale; zero beyond q
	p0, p1 []float64                  // the prediction z₀(0), z₁(0) of the step being attempted
	// predicted says that p0, p1 already hold the prediction from z as it
	// is: correct forms it for the next step with the same h and order
	// (the usual case), and whatever changes z clears it.
	predicted bool
	q         int     // order
	hScale    float64 // the step z is scaled to
	// tau[1] is the last accepted step, tau[2] the one before, …
	tau [bdfMaxOrder + 2]float64

	l     [bdfMaxOrder + 1]float64 // Λ's coefficients for the current attempt
	gamma float64                  // h/l₁
	rl1   float64                  // 1/l₁
	// tq are the test constants (CVODE's tq[1..5]): the error estimates at
	// orders q−1, q and q+1 are tq1‖z_q‖, tq2‖Δ‖ and tq3‖Δ − c·Δ_saved‖;
	// tq4 is the Newton iteration's tolerance on ‖Δ‖; tq5 relates Δ to the
	// (q+2)-th derivative for a later order increase.
	tq1, tq2, tq3, tq4, tq5 float64
}

// newtonTolFraction is the Newton iteration's stopping tolerance as a
// fraction of the error test's (CVODE: 0.1).
const newtonTolFraction = 0.1

// predict sets p0 = Σ_k z_k and p1 = Σ_k k z_k, the predicted value and
// scaled derivative (z·A's first two columns).
func (hs *bdfHistory) predict() {
	if hs.predicted {
		return
	}
	hs.predicted = true
	z := &hs.z
	n := len(z[0])
	z0, z1, z2, z3, z4, z5 := z[0][:n], z[1][:n], z[2][:n], z[3][:n], z[4][:n], z[5][:n]
	p0, p1 := hs.p0[:n], hs.p1[:n]
	for i := range p0 {
		a1, a2, a3, a4, a5 := z1[i], z2[i], z3[i], z4[i], z5[i]
		p0[i] = z0[i] + a1 + a2 + a3 + a4 + a5
		p1[i] = a1 + 2*a2 + 3*a3 + 4*a4 + 5*a5
	}
}

// rescale multiplies z_j by η^j: the history for the step η·hScale.
func (hs *bdfHistory) rescale(eta float64) {
	hs.predicted = false
	f := 1.0
	for j := 1; j <= hs.q; j++ {
		f *= eta
		for i := range hs.z[j] {
			hs.z[j][i] *= f
		}
	}
	hs.hScale *= eta
}

// setCoefficients computes l, γ and the test constants for a step h at
// order q from the step history; withOrderTests adds tq1 and tq3, needed
// when the step after this one may change the order.
func (hs *bdfHistory) setCoefficients(h float64, withOrderTests bool) {
	q := hs.q
	for i := range hs.l {
		hs.l[i] = 0
	}
	hs.l[0], hs.l[1] = 1, 1
	alpha0, alpha0Hat := -1.0, -1.0
	xiInv, xiStarInv := 1.0, 1.0
	hsum := h
	if q > 1 {
		// The factors 1 + x/ξ_j, j = 1..q−1 (ξ₁ = 1, the first is l's start).
		for j := 2; j < q; j++ {
			hsum += hs.tau[j-1]
			xiInv = h / hsum
			alpha0 -= 1 / float64(j)
			for i := j; i >= 1; i-- {
				hs.l[i] += hs.l[i-1] * xiInv
			}
		}
		alpha0 -= 1 / float64(q)
		xiStarInv = -hs.l[1] - alpha0
		hsum += hs.tau[q-1]
		xiInv = h / hsum
		alpha0Hat = -hs.l[1] - xiInv
		for i := q; i >= 1; i-- {
			hs.l[i] += hs.l[i-1] * xiStarInv
		}
	}
	hs.rl1 = 1 / hs.l[1]
	hs.gamma = h * hs.rl1
	hs.testConstants(h, hsum, alpha0, alpha0Hat, xiInv, xiStarInv, withOrderTests)
}

// testConstants sets tq1…tq5 (Jackson & Sacks-Davis; CVODE's cvSetTqBDF)
// from the quantities setCoefficients computed: α₀ = −Σ_{j≤q} 1/j, α̂₀,
// 1/ξ_q and 1/ξ*, with hsum = t_{n+1} − t_{n+1−q}.
func (hs *bdfHistory) testConstants(h, hsum, alpha0, alpha0Hat, xiInv, xiStarInv float64, withOrderTests bool) {
	q := float64(hs.q)
	a1 := 1 - alpha0Hat + alpha0
	a2 := 1 + q*a1
	hs.tq2 = abs(a1 / (alpha0 * a2))
	hs.tq5 = abs(a2 * xiStarInv / (hs.l[hs.q] * xiInv))
	if withOrderTests {
		if hs.q > 1 {
			c := xiStarInv / hs.l[hs.q]
			a3 := alpha0 + 1/q
			a4 := alpha0Hat + xiInv
			hs.tq1 = abs(c * (1 - a4 + a3) / a3)
		} else {
			hs.tq1 = 1
		}
		hsum += hs.tau[hs.q]
		xiInv = h / hsum
		a5 := alpha0 - 1/(q+1)
		a6 := alpha0Hat - xiInv
		hs.tq3 = abs((1 - a6 + a5) / a2 / (xiInv * (q + 2) * a5))
	}
	hs.tq4 = newtonTolFraction / hs.tq2
}

// correct applies the accepted correction, z = z·A + Δ·l (A's columns
// written out for order 5; the zero columns beyond q add nothing, and
// z₀ is formed exactly as predict formed p0, so that it is the iterate
// z₀(0) + Δ bit for bit), and moves the step history on by h. In the same
// pass over memory it forms the next step's prediction for the same h and
// order, and the error weights 1/(rtol|y| + atol) of the new y into ewt.
func (hs *bdfHistory) correct(delta []float64, h, rtol float64, atol, ewt []float64) {
	z := &hs.z
	n := len(delta)
	z0, z1, z2, z3, z4, z5 := z[0][:n], z[1][:n], z[2][:n], z[3][:n], z[4][:n], z[5][:n]
	p0, p1, atol, ewt := hs.p0[:n], hs.p1[:n], atol[:n], ewt[:n]
	l := hs.l
	for i, d := range delta {
		a1, a2, a3, a4, a5 := z1[i], z2[i], z3[i], z4[i], z5[i]
		b0 := z0[i] + a1 + a2 + a3 + a4 + a5 + d
		b1 := a1 + 2*a2 + 3*a3 + 4*a4 + 5*a5 + l[1]*d
		b2 := a2 + 3*a3 + 6*a4 + 10*a5 + l[2]*d
		b3 := a3 + 4*a4 + 10*a5 + l[3]*d
		b4 := a4 + 5*a5 + l[4]*d
		b5 := a5 + l[5]*d
		z0[i], z1[i], z2[i], z3[i], z4[i], z5[i] = b0, b1, b2, b3, b4, b5
		p0[i] = b0 + b1 + b2 + b3 + b4 + b5
		p1[i] = b1 + 2*b2 + 3*b3 + 4*b4 + 5*b5
		ewt[i] = 1 / (rtol*math.Abs(b0) + atol[i])
	}
	hs.predicted = true
	for i := hs.q; i >= 2; i-- {
		hs.tau[i] = hs.tau[i-1]
	}
	if hs.q == 1 {
		hs.tau[2] = hs.tau[1]
	}
	hs.tau[1] = h
}

// lowerOrder changes the history from order q to q−1 (q ≥ 2): z_j −=
// c_j z_q, j = 2..q−1, with c the coefficients of x² Π_{j=1}^{q−2}
// (x + ξ_j), ξ_j = (t_n − t_{n−j})/hScale, which removes the q-th
// derivative while keeping the values at the last q points (CVODE's
// cvDecreaseBDF). At q = 2 nothing changes but the order.
func (hs *bdfHistory) lowerOrder() {
	hs.predicted = false
	q := hs.q
	var c [bdfMaxOrder + 1]float64
	c[2] = 1
	hsum := 0.0
	for j := 1; j <= q-2; j++ {
		hsum += hs.tau[j]
		xi := hsum / hs.hScale
		for i := j + 2; i >= 2; i-- {
			c[i] = c[i]*xi + c[i-1]
		}
	}
	for j := 2; j < q; j++ {
		axpy(-c[j], hs.z[q], hs.z[j])
	}
	clear(hs.z[q])
	hs.q--
}

// raiseOrder changes the history from order q to q+1: the new column is
// z_{q+1} = A₁·Δ_saved, Δ_saved the correction of the step at which the
// increase was decided, and z_j += c_j z_{q+1}, j = 2..q, with c the
// coefficients of x² Π_{j=1}^{q−1} (x + ξ_j) (CVODE's cvIncreaseBDF).
func (hs *bdfHistory) raiseOrder(saved []float64) {
	hs.predicted = false
	q := hs.q
	var c [bdfMaxOrder + 2]float64
	c[2] = 1
	alpha0, alpha1, prod, xiOld := -1.0, 1.0, 1.0, 1.0
	hsum := hs.hScale
	for j := 1; j < q; j++ {
		hsum += hs.tau[j+1]
		xi := hsum / hs.hScale
		prod *= xi
		alpha0 -= 1 / float64(j+1)
		alpha1 += 1 / xi
		for i := j + 2; i >= 2; i-- {
			c[i] = c[i]*xiOld + c[i-1]
		}
		xiOld = xi
	}
	a1 := (-alpha0 - alpha1) / prod
	next := hs.z[q+1]
	for i, d := range saved {
		next[i] = a1 * d
	}
	for j := 2; j <= q; j++ {
		axpy(c[j], next, hs.z[j])
	}
	hs.q++
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// axpy sets y += a·x.
func axpy(a float64, x, y []float64) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}
