package landscape

import (
	"fmt"
	"math"

	"github.com/linattn/linattn/flow"
	"gonum.org/v1/gonum/mat"
)

// Configuration returns a weight configuration of the separate model s (in
// the original basis) that realizes M(S) for the subset in mask (docs/math.md
// "Fixed points"; paper appendix "Weight Configuration with Minimal L2
// Norm"): head j takes the j-th eigenvector e_d of S with
// k_{j,1} = q_{j,1} = v e_d, v = (λ_d/a_d)^{1/3}, and every other weight is
// zero. This is the minimum-norm configuration; it needs H ≥ |S|. When
// H < |S| ≤ H·R, the eigenvectors are packed R to a head instead
// (v = 1, k_{j,r} = q_{j,r} = (λ_d/a_d)^{1/2} e_d), still a fixed point
// (conditions C1–C3) but not of minimal norm; beyond H·R, M(S) cannot be
// realized and an error says so.
func Configuration(s *flow.System, mask uint64) ([]float64, error) {
	if s.Model.Kind != flow.Separate {
		return nil, fmt.Errorf("landscape: Configuration is for the separate model; use MergedFixedPoints")
	}
	sub, err := SubsetOf(s.Data, mask)
	if err != nil {
		return nil, err
	}
	h, r, d := s.Model.H, s.Model.R, s.Dim()
	if sub.Size > h*r {
		return nil, fmt.Errorf("landscape: |S| = %d eigenvectors need more than H·R = %d·%d key–query pairs; M(S) cannot be realized", sub.Size, h, r)
	}
	a := s.Data.AEigenvalues()
	y := make([]float64, s.Len())
	hr := h * r
	kOff, qOff := h, h+hr*d
	for j, e := range Indices(mask) {
		ratio := s.Data.Lambda[e] / a[e]
		var head, rank int
		var v, c float64
		if sub.Size <= h {
			head, rank = j, 0
			v = math.Cbrt(ratio)
			c = v
		} else {
			head, rank = j/r, j%r
			v, c = 1, math.Sqrt(ratio)
		}
		y[head] = v
		row := head*r + rank
		for i := 0; i < d; i++ {
			ed := s.Data.Vecs.At(i, e)
			y[kOff+row*d+i] = c * ed
			y[qOff+row*d+i] = c * ed
		}
	}
	return y, nil
}

// MergedFixedPoint is one of the merged model's two fixed points: M_0 = {0}
// and the global minimum M* = A⁻¹Λ (paper eq. attnM-def-M).
type MergedFixedPoint struct {
	Name  string // "zero" or "minimum"
	Loss  float64
	State []float64 // a configuration in the original basis
}

// MergedFixedPoints returns the merged model's fixed points with a
// configuration for each: all weights zero, and one balanced head with
// U = M*/v, v = ‖M*‖_F^{1/2} (so v² = ‖U‖²_F), the others zero.
func MergedFixedPoints(s *flow.System) ([]MergedFixedPoint, error) {
	if s.Model.Kind != flow.Merged {
		return nil, fmt.Errorf("landscape: MergedFixedPoints is for the merged model")
	}
	d, h := s.Dim(), s.Model.H
	a := s.Data.AEigenvalues()
	diag := make([]float64, d)
	for i, l := range s.Data.Lambda {
		diag[i] = l / a[i]
	}
	var mstar mat.Dense // V diag(λ/a) Vᵀ = A⁻¹Λ
	mstar.Mul(s.Data.Vecs, mat.NewDiagDense(d, diag))
	mstar.Mul(&mstar, s.Data.Vecs.T())
	v := math.Sqrt(mat.Norm(&mstar, 2))
	y := make([]float64, s.Len())
	y[0] = v
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			y[h+i*d+j] = mstar.At(i, j) / v
		}
	}
	return []MergedFixedPoint{
		{Name: "zero", Loss: s.Data.Trace(), State: make([]float64, s.Len())},
		{Name: "minimum", Loss: s.Data.MinLoss(), State: y},
	}, nil
}
