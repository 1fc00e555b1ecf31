package landscape

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/linattn/linattn/flow"
	"gonum.org/v1/gonum/mat"
)

// Realization is a way to realize M(S) by the separate model's weights.
// The function-space fixed point is the same; the weight-space Jacobian,
// and so the stability, is not (docs/math.md "Fixed points").
type Realization int

const (
	// Packed groups the eigenvectors of S, in decreasing order of
	// eigenvalue, R to a head: the configuration training from small
	// initialization reaches. Each head is balanced, Σ_r ‖k_r‖² = v² and
	// ‖k_r‖ = ‖q_r‖ (the conserved quantities of docs/math.md vanish at
	// small initialization), so v³ = Σ_{d∈group} λ_d/a_d and
	// k_r = q_r = (λ_d/(a_d v))^{1/2} e_d. It needs ⌈|S|/R⌉ ≤ H heads.
	Packed Realization = iota
	// OnePerHead gives each eigenvector of S its own head, k = q = v e_d with
	// v = (λ_d/a_d)^{1/3}: the configuration of least ℓ₂ norm (paper
	// appendix "Weight Configuration with Minimal L2 Norm"). It needs
	// |S| ≤ H heads. For R = 1 it is the packed one.
	OnePerHead
)

func (r Realization) String() string {
	switch r {
	case Packed:
		return "packed"
	case OnePerHead:
		return "one per head"
	}
	return fmt.Sprintf("Realization(%d)", int(r))
}

// Configuration returns the configuration of the separate model s (in the
// original basis) that training from small initialization reaches for the
// subset in mask: Realize(s, mask, Packed).
func Configuration(s *flow.System, mask uint64) ([]float64, error) {
	return Realize(s, mask, Packed)
}

// Alternatives returns the realizations of mask that differ from the
// packed one and fit in s: OnePerHead when R > 1, 2 ≤ |S| ≤ H.
func Alternatives(s *flow.System, mask uint64) []Realization {
	n := bits.OnesCount64(mask)
	if s.Model.Kind == flow.Separate && s.Model.R > 1 && n >= 2 && n <= s.Model.H {
		return []Realization{OnePerHead}
	}
	return nil
}

// Realize returns the configuration of the separate model s (in the
// original basis) that realizes M(S) for the subset in mask in the given
// way; every other weight is zero. Every such configuration is a fixed
// point: G e_d = 0 for d ∈ S (conditions C1–C3 of the paper's appendix).
func Realize(s *flow.System, mask uint64, how Realization) ([]float64, error) {
	if s.Model.Kind != flow.Separate {
		return nil, fmt.Errorf("landscape: Configuration is for the separate model; use MergedFixedPoints")
	}
	sub, err := SubsetOf(s.Data, mask)
	if err != nil {
		return nil, err
	}
	h, r := s.Model.H, s.Model.R
	per := r // eigenvectors per head
	if how == OnePerHead {
		per = 1
	} else if how != Packed {
		return nil, fmt.Errorf("landscape: unknown realization %v", how)
	}
	if heads := (sub.Size + per - 1) / per; heads > h {
		return nil, fmt.Errorf("landscape: |S| = %d eigenvectors %v need %d heads, H = %d; M(S) cannot be realized", sub.Size, how, heads, h)
	}
	ratio := s.Data.MapEigenvalues()
	y := make([]float64, s.Len())
	idx := Indices(mask)
	for head := 0; head*per < len(idx); head++ {
		group := idx[head*per : min((head+1)*per, len(idx))]
		var v3 float64
		for _, e := range group {
			v3 += ratio[e]
		}
		v := math.Cbrt(v3)
		y[head] = v
		for rank, e := range group {
			setKeyQuery(s, y, head*r+rank, e, math.Sqrt(ratio[e]/v))
		}
	}
	return y, nil
}

// setKeyQuery sets key and query row of the separate model to c·e_d, in
// the original basis.
func setKeyQuery(s *flow.System, y []float64, row, e int, c float64) {
	h, d := s.Model.H, s.Dim()
	kOff, qOff := h, h+h*s.Model.R*d
	vecs := s.Data.Vecs()
	for i := 0; i < d; i++ {
		ed := vecs.At(i, e)
		y[kOff+row*d+i] = c * ed
		y[qOff+row*d+i] = c * ed
	}
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
	for i, l := range s.Data.Lambda() {
		diag[i] = l / a[i]
	}
	var mstar mat.Dense // V diag(λ/a) Vᵀ = A⁻¹Λ
	mstar.Mul(s.Data.Vecs(), mat.NewDiagDense(d, diag))
	mstar.Mul(&mstar, s.Data.Vecs().T())
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
