package flow

import (
	"fmt"

	"github.com/linattn/linattn/law"
)

// fullLayer is the population flow of the full layer (docs/math.md, "The
// full layer"): with the coefficients c(θ) of its features and their
// exact population moments ZZ, YZ, YY (eigen coordinates),
//
//	L(θ) = YY − 2 c(θ)ᵀYZ + c(θ)ᵀ ZZ c(θ),   τ dθ/dt = −½ ∂L/∂θ = J_cᵀ (YZ − ZZ c(θ)).
type fullLayer struct {
	coef  *Coefficients
	train featureMoments
	r     []float64
}

func newFullLayer(s *System) (*fullLayer, error) {
	d := s.d
	if b := MomentBytes(s.Model.Layer, d); b > MaxFullBytes {
		return nil, fmt.Errorf("flow: the %v layer at D = %d has %d features, whose moments take %.3g GiB, more than MaxFullBytes = %.3g GiB",
			s.Model.Layer, d, len(s.Model.Layer.Pairs(d))*d, b/(1<<30), float64(MaxFullBytes)/(1<<30))
	}
	mo, err := s.featureMoments(law.Training)
	if err != nil {
		return nil, fmt.Errorf("flow: the full layer's population loss: %w", err)
	}
	f := &fullLayer{coef: NewCoefficients(d, s.Model), train: mo}
	f.r = make([]float64, f.coef.Features())
	return f, nil
}

// deriv writes τ⁻¹ J_cᵀ (YZ − ZZ c) into dydt and returns the loss.
func (f *fullLayer) deriv(dydt, y []float64, tau float64) float64 {
	f.coef.At(y)
	loss := f.train.Residual(f.r, f.coef.Values())
	f.coef.Pullback(dydt, f.r)
	for i := range dydt {
		dydt[i] /= tau
	}
	return loss
}

func (f *fullLayer) loss(y []float64) float64 {
	f.coef.At(y)
	return f.train.Loss(f.coef.Values())
}

// fullLinearization is the Jacobian of the full layer's flow at a point:
//
//	τ J·δθ = J_cᵀ(−ZZ J_c δθ) + Σ_k r_k ∇²c_k δθ,   r = YZ − ZZ c,
//
// symmetric as the Hessian of L is (J = −∇²L/(2τ)). It has its own
// coefficients, so that evaluating the flow does not move its point.
type fullLinearization struct {
	f          *fullLayer
	coef       *Coefficients
	r, dc, zdc []float64
	curv       []float64
}

func (f *fullLayer) newLinearization(n int) *fullLinearization {
	nf := f.coef.Features()
	return &fullLinearization{f: f, coef: NewCoefficients(f.coef.d, f.coef.model),
		r: make([]float64, nf), dc: make([]float64, nf), zdc: make([]float64, nf), curv: make([]float64, n)}
}

func (l *fullLinearization) at(y []float64) {
	l.coef.At(y)
	l.f.train.Residual(l.r, l.coef.Values())
}

func (l *fullLinearization) apply(dst, dy []float64, tau float64) {
	l.coef.Apply(l.dc, dy)
	l.f.train.MulVec(l.zdc, l.dc)
	for i, x := range l.zdc {
		l.zdc[i] = -x
	}
	l.coef.Pullback(dst, l.zdc)
	l.coef.Curvature(l.curv, dy, l.r)
	for i := range dst {
		dst[i] = (dst[i] + l.curv[i]) / tau
	}
}
