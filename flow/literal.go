package flow

import "fmt"

// LiteralMergedDeriv is the merged flow written literally as the two-layer
// linear network on z = vec(β x_qᵀ) (paper eq. attnM-gd):
//
//	τ dW₁/dt = w₂ (E[y zᵀ] − w₂ᵀ W₁ E[z zᵀ]),
//	τ dw₂/dt = W₁ (E[y zᵀ] − w₂ᵀ W₁ E[z zᵀ])ᵀ,
//
// with w₂ = (v_1..v_H), row i of W₁ = vec(U_i)ᵀ, and E[z zᵀ] formed as the
// explicit D²×D² matrix. y and dydt are in the original basis (System's
// layout). It costs O(D⁴) and allocates: it is a test oracle for DerivEigen, not
// a fast path.
func LiteralMergedDeriv(s *System, dydt, y []float64) {
	if s.Model.Kind != Merged {
		panic(fmt.Sprintf("flow: LiteralMergedDeriv on a %v model", s.Model.Kind))
	}
	s.checkLen("y", y)
	s.checkLen("dydt", dydt)
	d, h := s.d, s.Model.H
	dd := d * d
	eyz := s.Data.EYZ()
	ezz := s.Data.EZZ()
	// W₁[i][j·D+k] = (U_i)_{kj}: vec stacks columns; U_i is stored row-major.
	w1 := make([][]float64, h)
	for i := range w1 {
		w1[i] = make([]float64, dd)
		for k := 0; k < d; k++ {
			for j := 0; j < d; j++ {
				w1[i][j*d+k] = y[h+i*dd+k*d+j]
			}
		}
	}
	beta := make([]float64, dd) // w₂ᵀ W₁
	for i := 0; i < h; i++ {
		for c := range beta {
			beta[c] += y[i] * w1[i][c]
		}
	}
	res := make([]float64, dd) // E[y zᵀ] − w₂ᵀ W₁ E[z zᵀ]
	for c := range res {
		var sum float64
		for c2 := range beta {
			sum += beta[c2] * ezz.At(c2, c)
		}
		res[c] = eyz[c] - sum
	}
	tau := s.Model.Tau
	for i := 0; i < h; i++ {
		var dv float64
		for c := range res {
			dv += w1[i][c] * res[c]
		}
		dydt[i] = dv / tau
		for k := 0; k < d; k++ {
			for j := 0; j < d; j++ {
				dydt[h+i*dd+k*d+j] = y[i] * res[j*d+k] / tau
			}
		}
	}
}
