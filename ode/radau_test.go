package ode

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// radauIIA is the coefficient matrix of the three-stage Radau IIA method in
// closed form (HNW II, IV.5, Table 5.6).
func radauIIA() *mat.Dense {
	s := math.Sqrt(6)
	return mat.NewDense(3, 3, []float64{
		(88 - 7*s) / 360, (296 - 169*s) / 1800, (-2 + 3*s) / 225,
		(296 + 169*s) / 1800, (88 + 7*s) / 360, (-2 - 3*s) / 225,
		(16 - s) / 36, (16 + s) / 36, 1.0 / 9,
	})
}

// TestRadauCoefficients checks Radau5's constants against the method they
// stand for (HNW II, IV.5 and IV.8):
//   - Table 5.6's A with c = (c₁, c₂, 1) satisfies the simplifying
//     conditions C(3), Σ_j a_ij c_j^{k−1} = c_i^k/k, and its last row, the
//     weights b, the quadrature conditions B(5) (order 5 = 2s − 1);
//   - T and T⁻¹ are inverse to each other and T⁻¹A⁻¹T is
//     [[γ̂, 0, 0], [0, α̂, −β̂], [0, β̂, α̂]] (eq. 8.16–8.18), the form the
//     Newton iteration's two systems assume;
//   - the error estimate's weights e give, with γ₀ = 1/γ̂ on f(t, y), an
//     embedded formula ŷ = y₀ + γ₀h f(t₀, y₀) + Σ (b_j + γ₀(e·A)_j)h f_j of
//     order 3 (eq. 8.19): (e·A)·1 = −1, (e·A)·c = (e·A)·c² = 0.
func TestRadauCoefficients(t *testing.T) {
	a := radauIIA()
	c := []float64{radauC1, radauC2, 1}
	const tol = 1e-14
	for i := 0; i < 3; i++ {
		for k := 1; k <= 3; k++ {
			var sum float64
			for j := 0; j < 3; j++ {
				sum += a.At(i, j) * math.Pow(c[j], float64(k-1))
			}
			if want := math.Pow(c[i], float64(k)) / float64(k); math.Abs(sum-want) > tol {
				t.Errorf("C(3): row %d, k = %d: Σ a_ij c_j^(k−1) = %.17g, want %.17g", i, k, sum, want)
			}
		}
	}
	for k := 1; k <= 6; k++ {
		var sum float64
		for j := 0; j < 3; j++ {
			sum += a.At(2, j) * math.Pow(c[j], float64(k-1))
		}
		err := math.Abs(sum - 1/float64(k))
		if k <= 5 && err > tol {
			t.Errorf("B(5): k = %d: Σ b_j c_j^(k−1) = %.17g, want 1/%d", k, sum, k)
		}
		if k == 6 && err < 1e-6 {
			t.Errorf("B(6) holds (%.3g): the weights are not those of an order-5 method", err)
		}
	}

	tm := mat.NewDense(3, 3, nil)
	ti := mat.NewDense(3, 3, nil)
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			tm.Set(i, j, radauT[i][j])
			ti.Set(i, j, radauTI[i][j])
		}
	}
	var prod, ainv, blk mat.Dense
	prod.Mul(ti, tm)
	if !mat.EqualApprox(&prod, eye(3), 1e-13) {
		t.Errorf("T⁻¹T = %v, want I", mat.Formatted(&prod))
	}
	if err := ainv.Inverse(a); err != nil {
		t.Fatal(err)
	}
	blk.Product(ti, &ainv, tm)
	want := mat.NewDense(3, 3, []float64{radauGamma, 0, 0, 0, radauAlpha, -radauBeta, 0, radauBeta, radauAlpha})
	if !mat.EqualApprox(&blk, want, 1e-13) {
		t.Errorf("T⁻¹A⁻¹T =\n%v\nwant\n%v", mat.Formatted(&blk), mat.Formatted(want))
	}

	var ea [3]float64
	for j := 0; j < 3; j++ {
		for i := 0; i < 3; i++ {
			ea[j] += radauErrWeights[i] * a.At(i, j)
		}
	}
	for k, want := range []float64{-1, 0, 0} {
		var sum float64
		for j := 0; j < 3; j++ {
			sum += ea[j] * math.Pow(c[j], float64(k))
		}
		if math.Abs(sum-want) > 1e-13 {
			t.Errorf("error estimate: (e·A)·c^%d = %.17g, want %g", k, sum, want)
		}
	}
}

func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		m.Set(i, i, 1)
	}
	return m
}

// TestNewtonSafety: Radau5's safety factor is radau5.f's
// FAC = min(SAFE, SAFE·(1 + 2·NIT)/(NEWT + 2·NIT)), applied by the
// controller to the error-based proposal after an acceptance and to the
// retry after a rejection: 0.9 after 1 iteration, 0.9·15/16 after 2, 0.9·15/21 after 7.
func TestNewtonSafety(t *testing.T) {
	for _, tc := range []struct {
		iterations int
		want       float64
	}{{1, 1}, {2, 15.0 / 16}, {7, 15.0 / 21}} {
		st := radauStepper{iterations: tc.iterations}
		if got, _ := st.newton(); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%d iterations: safety scale %v, want %v", tc.iterations, got, tc.want)
		}
	}
	c, err := newController(radau5{}.newStepper(NewIntegrator(Radau5, 1)).controller(), Controller{})
	if err != nil {
		t.Fatal(err)
	}
	// First acceptance: only the error-based factor 0.9·s·err^(−1/4).
	const errNorm = 0.5
	if got, want := c.accept(1, errNorm, false, 15.0/21), 0.9*15/21*math.Pow(errNorm, -0.25); math.Abs(got-want) > 1e-15 {
		t.Errorf("accept: next step %v, want %v", got, want)
	}
	if got, want := c.reject(1, 16, 15.0/21), 0.9*15/21*0.5; math.Abs(got-want) > 1e-15 {
		t.Errorf("reject: next step %v, want %v", got, want)
	}
}
