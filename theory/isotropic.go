package theory

import (
	"fmt"
	"math"
)

// The isotropic reduction of deep linear attention (Bordelon, Letey,
// Pehlevan, "Theory of scaling laws for in-context regression: depth,
// width, context and time", ICLR 2026, arXiv:2510.01098, the ISO setting
// and their Fig. 1): with tokens x ~ N(0, I/D), tasks w ~ N(0, I),
// label noise σ², N = αD context examples and every layer's
// preconditioner the same multiple of the inverse token covariance,
// A_ℓ = ηD·I, the stack is L steps of gradient descent with step η on
// the context's least squares, w_L = (I − (I − ηŴ)^L) Ŵ⁺ b, and its
// in-context loss is a function of the eigenvalues s of the white Wishart
// matrix Ŵ = D·Σ̂ (docs/math.md, "Depth: the isotropic reduction"):
//
//	L(η) = (1/D) E Σ_i (1 − ηs_i)^{2L} + σ² (D/N) (1/D) E Σ_i (1 − (1 − ηs_i)^L)²/s_i + σ².
//
// Both sums are polynomials in s (the second because 1 − (1 − ηs)^L
// vanishes at s = 0), so as D, N → ∞ at α fixed their limits are
// polynomials in the moments of the Marchenko–Pastur law of ratio
// q = D/N = 1/α, which are Narayana polynomials.

// MarchenkoPasturMoment returns ∫ s^k dμ_q(s), the k-th moment of the
// Marchenko–Pastur law of ratio q > 0, the limit of (1/D) E tr Ŵ^k for
// Ŵ = GGᵀ/N with G a D×N matrix of independent standard normals and
// D/N → q: Σ_{r=0}^{k−1} C(k, r) C(k−1, r) q^r/(r + 1) for k ≥ 1, and 1
// for k = 0 (the moments of the Narayana numbers; e.g. Bai and
// Silverstein, Spectral Analysis of Large Dimensional Random Matrices,
// 2nd ed., Springer 2010, Lemma 3.1).
func MarchenkoPasturMoment(k int, q float64) float64 {
	if k == 0 {
		return 1
	}
	var m float64
	for r := 0; r < k; r++ {
		m += binomial(k, r) * binomial(k-1, r) * math.Pow(q, float64(r)) / float64(r+1)
	}
	return m
}

func binomial(n, k int) float64 {
	c := 1.0
	for i := 0; i < k; i++ {
		c = c * float64(n-i) / float64(i+1)
	}
	return c
}

// IsotropicGD is the isotropic setting of a stack of Layers ≥ 1 layers as
// D, N → ∞ with N = Alpha·D, and label noise Noise = σ² ≥ 0.
type IsotropicGD struct {
	Layers int
	Alpha  float64
	Noise  float64
}

func (p IsotropicGD) check() error {
	switch {
	case p.Layers < 1:
		return fmt.Errorf("theory: IsotropicGD.Layers = %d, want ≥ 1", p.Layers)
	case !(p.Alpha > 0) || math.IsInf(p.Alpha, 0):
		return fmt.Errorf("theory: IsotropicGD.Alpha = %g, want a finite α = N/D > 0", p.Alpha)
	case !(p.Noise >= 0) || math.IsInf(p.Noise, 0):
		return fmt.Errorf("theory: IsotropicGD.Noise = %g, want a finite σ² ≥ 0", p.Noise)
	}
	return nil
}

// Polynomial returns the loss as a polynomial in η: L(η) = Σ_j c_j η^j,
// the coefficients c (of degree 2·Layers).
func (p IsotropicGD) Polynomial() ([]float64, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	q, l := 1/p.Alpha, p.Layers
	// (1 − ηs)^L = Σ_j C(L, j)(−η s)^j; its square has the terms of
	// degree j in η and in s alike, and (1 − (1 − ηs)^L)²/s those of
	// degree j in η and j − 1 in s.
	step := make([]float64, l+1) // coefficients of (1 − x)^L in x = ηs
	for j := range step {
		step[j] = binomial(l, j) * math.Pow(-1, float64(j))
	}
	sq := polyMul(step, step)
	rest := append([]float64{0}, polyScale(step[1:], -1)...) // 1 − (1 − x)^L
	restSq := polyMul(rest, rest)
	out := make([]float64, 2*l+1)
	for j := range out {
		out[j] = sq[j] * MarchenkoPasturMoment(j, q)
		if j >= 1 {
			out[j] += p.Noise * q * restSq[j] * MarchenkoPasturMoment(j-1, q)
		}
	}
	out[0] += p.Noise
	return out, nil
}

// Loss returns the limit loss L(η) at the step η.
func (p IsotropicGD) Loss(eta float64) (float64, error) {
	c, err := p.Polynomial()
	if err != nil {
		return 0, err
	}
	return polyAt(c, eta), nil
}

// Optimum returns the step η* that minimizes the limit loss and the loss
// there, L steps of gradient descent with the best learning rate
// (Bordelon et al.'s Fig. 1c): the least critical value of the
// polynomial's on [0, η_max], η_max = 2/(1 + √q)² beyond which a step
// grows the largest eigendirection's error, found by bisection of the
// derivative's sign changes on a grid of 4096 steps.
func (p IsotropicGD) Optimum() (eta, loss float64, err error) {
	c, err := p.Polynomial()
	if err != nil {
		return 0, 0, err
	}
	return PolynomialMinimum(c, 0, 2/math.Pow(1+math.Sqrt(1/p.Alpha), 2))
}

// PolynomialMinimum returns the point of [lo, hi] where the polynomial
// Σ_j c_j x^j is least, and its value there: an end or a root of the
// derivative, each root located by bisection of a sign change on a grid
// of 4096 points, to within rounding.
func PolynomialMinimum(c []float64, lo, hi float64) (x, value float64, err error) {
	if !(hi > lo) {
		return 0, 0, fmt.Errorf("theory: the interval [%g, %g] is empty", lo, hi)
	}
	deriv := make([]float64, max(0, len(c)-1))
	for j := range deriv {
		deriv[j] = float64(j+1) * c[j+1]
	}
	x, value = lo, polyAt(c, lo)
	if v := polyAt(c, hi); v < value {
		x, value = hi, v
	}
	const grid = 4096
	prev, fPrev := lo, polyAt(deriv, lo)
	for i := 1; i <= grid; i++ {
		cur := lo + (hi-lo)*float64(i)/grid
		fCur := polyAt(deriv, cur)
		if fPrev < 0 && fCur >= 0 { // a minimum of the polynomial in [prev, cur]
			a, b := prev, cur
			for k := 0; k < 200 && b-a > 0; k++ {
				m := a + (b-a)/2
				if m == a || m == b {
					break
				}
				if polyAt(deriv, m) < 0 {
					a = m
				} else {
					b = m
				}
			}
			if v := polyAt(c, b); v < value {
				x, value = b, v
			}
		}
		prev, fPrev = cur, fCur
	}
	return x, value, nil
}

func polyAt(c []float64, x float64) float64 {
	var v float64
	for j := len(c) - 1; j >= 0; j-- {
		v = v*x + c[j]
	}
	return v
}

func polyMul(p, q []float64) []float64 {
	out := make([]float64, len(p)+len(q)-1)
	for i, a := range p {
		for j, b := range q {
			out[i+j] += a * b
		}
	}
	return out
}

func polyScale(p []float64, c float64) []float64 {
	out := make([]float64, len(p))
	for i, a := range p {
		out[i] = c * a
	}
	return out
}
