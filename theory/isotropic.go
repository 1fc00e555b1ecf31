package theory

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
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
	return PolynomialAt(c, eta), nil
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
	x, value = lo, PolynomialAt(c, lo)
	if v := PolynomialAt(c, hi); v < value {
		x, value = hi, v
	}
	const grid = 4096
	prev, fPrev := lo, PolynomialAt(deriv, lo)
	for i := 1; i <= grid; i++ {
		cur := lo + (hi-lo)*float64(i)/grid
		fCur := PolynomialAt(deriv, cur)
		if fPrev < 0 && fCur >= 0 { // a minimum of the polynomial in [prev, cur]
			a, b := prev, cur
			for k := 0; k < 200 && b-a > 0; k++ {
				m := a + (b-a)/2
				if m == a || m == b {
					break
				}
				if PolynomialAt(deriv, m) < 0 {
					a = m
				} else {
					b = m
				}
			}
			if v := PolynomialAt(c, b); v < value {
				x, value = b, v
			}
		}
		prev, fPrev = cur, fCur
	}
	return x, value, nil
}

// PolynomialAt returns Σ_j c_j x^j, by Horner's rule.
func PolynomialAt(c []float64, x float64) float64 {
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

// StepsLoss returns the limit loss of L steps of gradient descent with a
// step of its own per layer, A_ℓ = η_ℓD·I (the untied stack's isotropic
// critical points: Ahn et al., Theorem 3): with p(s) = Π_ℓ (1 − η_ℓ s),
// ∫ p² dμ_q + σ² q ∫ (1 − p)²/s dμ_q + σ², each a polynomial in s.
func (p IsotropicGD) StepsLoss(etas []float64) (float64, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	if len(etas) != p.Layers {
		return 0, fmt.Errorf("theory: %d steps for %d layers", len(etas), p.Layers)
	}
	q := 1 / p.Alpha
	poly := []float64{1}
	for _, eta := range etas {
		poly = polyMul(poly, []float64{1, -eta})
	}
	rest := polyScale(poly[1:], -1) // (1 − p(s))/s
	var loss float64
	for k, c := range polyMul(poly, poly) {
		loss += c * MarchenkoPasturMoment(k, q)
	}
	for k, c := range polyMul(rest, rest) { // (1 − p)²/s = s·((1 − p)/s)²
		loss += p.Noise * q * c * MarchenkoPasturMoment(k+1, q)
	}
	return loss + p.Noise, nil
}

// OptimumSteps returns the steps η_ℓ of least StepsLoss, in increasing
// order, and the loss there. The loss is a quadratic in the coefficients
// c_k of p(s) = 1 + Σ_{k=1}^L c_k s^k: with the moments m_k,
//
//	L(c) = m_0 + σ² + 2 Σ_k c_k m_k + Σ_{j,k} c_j c_k (m_{j+k} + qσ² m_{j+k−1}),
//
// least at the solution of the L × L Hankel system H c = −m; the steps
// are the inverses of p's roots, which lie in the law's support (p is the
// orthogonal polynomial of a positive measure, up to scale).
func (p IsotropicGD) OptimumSteps() ([]float64, float64, error) {
	if err := p.check(); err != nil {
		return nil, 0, err
	}
	q, l := 1/p.Alpha, p.Layers
	h := mat.NewDense(l, l, nil)
	m := mat.NewVecDense(l, nil)
	for j := 1; j <= l; j++ {
		m.SetVec(j-1, MarchenkoPasturMoment(j, q))
		for k := 1; k <= l; k++ {
			h.Set(j-1, k-1, MarchenkoPasturMoment(j+k, q)+p.Noise*q*MarchenkoPasturMoment(j+k-1, q))
		}
	}
	var c mat.VecDense
	if err := c.SolveVec(h, m); err != nil {
		return nil, 0, fmt.Errorf("theory: the per-layer steps' Hankel system: %w", err)
	}
	c.ScaleVec(-1, &c)
	loss := 1 + p.Noise + mat.Dot(&c, m)
	// The roots of p: the eigenvalues of its companion matrix.
	comp := mat.NewDense(l, l, nil)
	for k := 0; k < l; k++ { // p(s)/c_L = s^L + Σ_{k<L} (c_k/c_L) s^k, c_0 = 1
		ck := 1.0
		if k > 0 {
			ck = c.AtVec(k - 1)
		}
		comp.Set(0, l-1-k, -ck/c.AtVec(l-1))
	}
	for i := 1; i < l; i++ {
		comp.Set(i, i-1, 1)
	}
	var eig mat.Eigen
	if !eig.Factorize(comp, mat.EigenNone) {
		return nil, 0, fmt.Errorf("theory: the roots of the optimal polynomial did not converge")
	}
	steps := make([]float64, l)
	for i, r := range eig.Values(nil) {
		if math.Abs(imag(r)) > 1e-9*math.Abs(real(r)) || !(real(r) > 0) {
			return nil, 0, fmt.Errorf("theory: the optimal polynomial has the root %v, not in the support", r)
		}
		steps[i] = 1 / real(r)
	}
	sort.Float64s(steps)
	return steps, loss, nil
}
