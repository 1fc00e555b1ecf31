package reduced

import (
	"fmt"
	"math"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// MergedWhite is the exact solution of the merged model with white
// covariance Λ = cI and a balanced, aligned initialization
// W₁(0) = w₂(0) mᵀ, m = vec(I)/√D (docs/math.md "Closed form for the merged model
// with white covariance"; paper eqs. attnM-solution and saxe-solution, there
// with c = 1):
//
//	s(t) = γe^{2γt/τ} / (α(e^{2γt/τ} − 1) + γ/s₀),  γ = c²√D, α = c³(1 + ν(1 + D)),
//
// with s = ‖w₂‖², M(t) = σ(t)I, σ = s/√D.
type MergedWhite struct {
	C, Nu, Tau float64
	D          int
	S0         float64 // ‖w₂(0)‖² > 0
}

func (m MergedWhite) validate() error {
	if !(m.C > 0) || !(m.Nu > 0 && m.Nu <= 1) || !(m.Tau > 0) || m.D < 1 || !(m.S0 > 0) {
		return fmt.Errorf("reduced: MergedWhite{C: %g, Nu: %g, Tau: %g, D: %d, S0: %g} needs C > 0, ν ∈ (0, 1], τ > 0, D ≥ 1, S0 > 0", m.C, m.Nu, m.Tau, m.D, m.S0)
	}
	return nil
}

func (m MergedWhite) gammaAlpha() (float64, float64) {
	d := float64(m.D)
	return m.C * m.C * math.Sqrt(d), m.C * m.C * m.C * (1 + m.Nu*(1+d))
}

// Sigma returns σ(t), the scale of M(t) = σ(t) I.
func (m MergedWhite) Sigma(t float64) (float64, error) {
	if err := m.validate(); err != nil {
		return 0, err
	}
	g, a := m.gammaAlpha()
	// γe/(α(e − 1) + γ/s₀) = γ/(α(1 − e⁻¹) + γe⁻¹/s₀), stable for large t.
	ei := math.Exp(-2 * g * t / m.Tau)
	s := g / (a*(1-ei) + g*ei/m.S0)
	return s / math.Sqrt(float64(m.D)), nil
}

// Loss returns L(t) = cD − 2σc²D + σ²c³(1 + ν(1 + D))D.
func (m MergedWhite) Loss(t float64) (float64, error) {
	sg, err := m.Sigma(t)
	if err != nil {
		return 0, err
	}
	d := float64(m.D)
	c := m.C
	return c*d - 2*sg*c*c*d + sg*sg*c*c*c*(1+m.Nu*(1+d))*d, nil
}

// MergedPlateau returns the paper's estimate of the merged model's plateau,
// τ/(2‖Λ²‖_F) ln(1/s₀) with s₀ = ‖w₂(0)‖² (eq. attnM-duration, with
// γ = ‖E[y_q z]‖ = ‖Λ²‖_F from eq. attnM-gamma).
func MergedPlateau(data *law.Data, tau, s0 float64) (float64, error) {
	if !(tau > 0) || !(s0 > 0 && s0 < 1) {
		return 0, fmt.Errorf("reduced: MergedPlateau needs τ > 0 and 0 < s0 < 1, got τ = %g, s0 = %g", tau, s0)
	}
	var f float64
	for _, l := range data.Lambda() {
		f += l * l * l * l
	}
	return tau / (2 * math.Sqrt(f)) * math.Log(1/s0), nil
}

// MergedDropTime refines MergedPlateau for the merged model started at y0
// (original basis): it predicts when the loss crosses half-way from L(M_0)
// to L*, keeping the two O(1) terms the paper's leading-order estimate drops.
//
// Early on, the flow is linear (appendix "Early dynamics"): with
// m = vec(Λ²)/γ, γ = ‖Λ²‖_F, the combination w₂ + W₁m grows as e^{γt/τ} and
// w₂ − W₁m decays, so s = ‖w₂‖² ≈ s_eff e^{2γt/τ} with
// s_eff = ‖w₂(0) + W₁(0)m‖²/4, not s₀. Along the ray M = (s/γ)Λ² the loss is
// tr Λ − 2γs + α s² with α = Σ_d a_d λ_d⁵/γ², and s follows the logistic
// τ ds/dt = 2s(γ − αs) (exact for white Λ, paper eq. ode-s). The half-way
// level is reached at s_h with 2γs_h − αs_h² = (L(M_0) − L*)/2, so
//
//	t ≈ τ/(2γ) ln[(s_h/s_eff)(γ − α s_eff)/(γ − α s_h)].
//
// On the paper's D = 4 data it is within 0.4% of the observed time for
// w_init from 1e-3 to 1e-9 (TestMergedDropTime), where the leading-order
// τ/(2γ) ln(1/s₀) is 5–16% short.
func MergedDropTime(s *flow.System, y0 []float64) (float64, error) {
	if s.Model.Kind != flow.Merged {
		return 0, fmt.Errorf("reduced: MergedDropTime needs the merged model, got %v", s.Model.Kind)
	}
	if len(y0) != s.Len() {
		return 0, fmt.Errorf("reduced: initial state has length %d, want %d", len(y0), s.Len())
	}
	data := s.Data
	d, h := s.Dim(), s.Model.H
	a := data.AEigenvalues()
	var g2, a5 float64
	for i, l := range data.Lambda() {
		l4 := l * l * l * l
		g2 += l4
		a5 += a[i] * l4 * l
	}
	gamma := math.Sqrt(g2)
	alpha := a5 / g2
	ye := s.ToEigen(nil, y0)
	var seff float64
	for i := 0; i < h; i++ {
		var um float64 // ⟨U'_i, m⟩ with m = diag(λ²)/γ in eigen coordinates
		for e := 0; e < d; e++ {
			um += ye[h+i*d*d+e*d+e] * data.Lambda()[e] * data.Lambda()[e] / gamma
		}
		c := ye[i] + um
		seff += c * c / 4
	}
	half := 0.5 * (data.Trace() - data.MinLoss())
	disc := gamma*gamma - alpha*half
	if disc < 0 {
		return 0, fmt.Errorf("reduced: along M ∝ Λ² the loss cannot fall half-way to L* (γ² = %g < α·ΔL/2 = %g); the estimate does not apply", gamma*gamma, alpha*half)
	}
	sh := half / (gamma + math.Sqrt(disc)) // the smaller root of αs² − 2γs + half = 0
	if !(seff > 0 && seff < sh) {
		return 0, fmt.Errorf("reduced: s_eff = %g, want 0 < s_eff < s_h = %g (a small initialization)", seff, sh)
	}
	return s.Model.Tau / (2 * gamma) * math.Log(sh/seff*(gamma-alpha*seff)/(gamma-alpha*sh)), nil
}
