package flow

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/law"
)

// TestJacobianMatchesFiniteDifferences at random (non-fixed) points of both
// models with non-diagonal Λ, R > 1 and D ≠ H.
func TestJacobianMatchesFiniteDifferences(t *testing.T) {
	nu, _ := law.NuNextToken(9)
	data, _ := law.NewData([]float64{0.9, 0.6, 0.3}, law.RandomRotation(3, 4), law.Lengths{Nu: nu})
	for _, m := range []Model{
		{Kind: Separate, H: 2, R: 2, Tau: 0.8},
		{Kind: Merged, H: 4, Tau: 1.3},
	} {
		s, err := NewSystem(data, m)
		if err != nil {
			t.Fatal(err)
		}
		y0, _ := s.Init(1.5, 11)
		y := s.ToEigen(nil, y0)
		jac, asym := jacobianOf(s, y)
		if rel := jacobianFDError(s, jac, y, 1e-6); rel > 1e-6 {
			t.Errorf("%v: analytic Jacobian differs from finite differences by %.3g relative", m.Kind, rel)
		}
		if asym > 1e-12 {
			t.Errorf("%v: Jacobian asymmetry %.3g; a gradient flow has a symmetric one", m.Kind, asym)
		}
		// J = −∇²L/(2τ): check uᵀJu against the second difference of the loss.
		rng := rand.New(rand.NewPCG(5, 5))
		n := s.Len()
		u := make([]float64, n)
		for i := range u {
			u[i] = rng.NormFloat64()
		}
		ju := make([]float64, n)
		l := s.NewLinearization()
		l.At(y)
		l.Apply(ju, u)
		var uju float64
		for i := range u {
			uju += u[i] * ju[i]
		}
		const h = 1e-4
		yp, ym := make([]float64, n), make([]float64, n)
		for i := range y {
			yp[i], ym[i] = y[i]+h*u[i], y[i]-h*u[i]
		}
		d2 := (s.LossEigen(yp) - 2*s.LossEigen(y) + s.LossEigen(ym)) / (h * h)
		if math.Abs(-2*m.Tau*uju-d2) > 1e-5*math.Abs(d2) {
			t.Errorf("%v: −2τ uᵀJu = %.10g, uᵀ∇²L u = %.10g", m.Kind, -2*m.Tau*uju, d2)
		}
	}
}

func jacobianOf(s *System, y []float64) (*mat.Dense, float64) {
	n := s.Len()
	l := s.NewLinearization()
	l.At(y)
	jac := make([]float64, n*n)
	asym := l.Dense(jac)
	return mat.NewDense(n, n, jac), asym
}

// jacobianFDError returns the Frobenius distance of the analytic Jacobian
// jac at y (eigen coordinates) from the central differences of the flow
// DerivEigen with step h (error O(h²)), relative to the differences'
// norm. y is restored.
func jacobianFDError(s *System, jac *mat.Dense, y []float64, h float64) float64 {
	n := s.Len()
	fp, fm := make([]float64, n), make([]float64, n)
	var num, den float64
	for j := 0; j < n; j++ {
		orig := y[j]
		y[j] = orig + h
		s.DerivEigen(fp, y)
		y[j] = orig - h
		s.DerivEigen(fm, y)
		y[j] = orig
		for i := 0; i < n; i++ {
			fd := (fp[i] - fm[i]) / (2 * h)
			num += (jac.At(i, j) - fd) * (jac.At(i, j) - fd)
			den += fd * fd
		}
	}
	return math.Sqrt(num / den)
}
