package flow

import (
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
)

// fullPrecond is the preconditioner of BDF's Newton matrix I − γJ for the
// full layer where I − γJ is too large to factor (n > ode.MaxDenseDim):
// the diagonal of its Gauss–Newton part,
//
//	P = I + (γ/τ) diag(J_cᵀ D_z J_c),   D_z = diag(ZZ),
//
// with ZZ's couplings between features dropped. The curvature part
// Σ_k r_k ∇²c_k has a zero diagonal (c(θ) is multilinear: no weight
// appears twice in a product), so P is the diagonal of I − γJ up to ZZ's
// off-diagonal entries. For the merged model every derivative of a
// coefficient by one weight is a single product of the other weights, so
// Σ_j (∂c_j/∂θ_k)² D_z,j is exactly the pullback of D_z at the weights
// squared entry by entry; for the separate one the derivatives by a query
// weight (ṽ_a k̃_b + ṽ_b k̃_a) and, with R > 1, by a value weight (a sum
// over r) are sums, which this squares term by term, within a factor 2
// for R = 1. A setup costs one pullback, as an evaluation of the flow
// does.
//
// References:
//
//	P. N. Brown, A. C. Hindmarsh, Reduced storage matrix methods in stiff
//	ODE systems, Appl. Math. Comput. 31 (1989) 40–91.
type fullPrecond struct {
	s         *System
	sq        *Coefficients
	zdiag     []float64 // D_z
	y2, gn    []float64 // θ², diag(J_cᵀ D_z J_c)/τ
	inv       []float64 // 1/P
	haveJac   bool
	lastGamma float64
}

func newFullPrecond(s *System) *fullPrecond {
	n := s.n
	p := &fullPrecond{s: s, sq: NewCoefficients(s.d, s.Model), y2: make([]float64, n), gn: make([]float64, n), inv: make([]float64, n)}
	p.zdiag = featureDiagonal(s.law.full.train)
	return p
}

// featureDiagonal returns the diagonal of ZZ.
func featureDiagonal(mo featureMoments) []float64 {
	switch m := mo.(type) {
	case *law.Operator:
		return append([]float64(nil), m.Diagonal()...)
	case *law.Moments:
		out := make([]float64, m.F)
		for k := range out {
			out[k] = m.ZZ[k*m.F+k]
		}
		return out
	}
	panic("flow: featureDiagonal: unknown moments")
}

func (p *fullPrecond) Setup(_ float64, y []float64, gamma float64, jacOK bool) (bool, error) {
	fresh := !jacOK || !p.haveJac
	if fresh {
		for i, v := range y {
			p.y2[i] = v * v
		}
		p.sq.At(p.y2)
		p.sq.Pullback(p.gn, p.zdiag)
		tau := p.s.Model.Tau
		for i := range p.gn {
			p.gn[i] /= tau
		}
		p.haveJac = true
	}
	for i, g := range p.gn {
		p.inv[i] = 1 / (1 + gamma*g)
	}
	p.lastGamma = gamma
	return fresh, nil
}

func (p *fullPrecond) Solve(z, r []float64) {
	for i, x := range r {
		z[i] = x * p.inv[i]
	}
}

var _ ode.Preconditioner = (*fullPrecond)(nil)
