package landscape

import (
	"github.com/linattn/linattn/flow"
	"gonum.org/v1/gonum/mat"
)

// Jacobian returns the Jacobian of the flow at y (eigen coordinates), the
// flow's own linearization (flow.Linearization) assembled densely. Because
// the flow is a gradient flow, J = −∇²L/(2τ) is symmetric; it is returned
// symmetrized, and the largest asymmetry of the assembled matrix is
// reported (round-off size).
func Jacobian(s *flow.System, y []float64) (*mat.SymDense, float64) {
	n := s.Len()
	l := s.NewLinearization()
	l.At(y)
	jac := make([]float64, n*n)
	asym := l.Dense(jac)
	return mat.NewSymDense(n, jac), asym
}
