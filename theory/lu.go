package theory

import (
	"fmt"
	"math"
)

// LuParams are the scaled sizes of the in-context regression problem of
// Lu, Letey, Zavatone-Veth, Maiti and Pehlevan (PNAS 2025) in the limit
// D → ∞ of the token dimension.
//
// Their data law: tokens x ~ N(0, I_D/D), task w ~ N(0, I_D), label
// y = wᵀx + ε with ε ~ N(0, Rho); a sequence has N = Alpha·D context pairs
// and one query; pretraining draws n = Tau·D² sequences whose tasks are
// drawn uniformly from a fixed set of K = Kappa·D tasks.
type LuParams struct {
	// Kappa = K/D is the number of pretraining tasks per dimension,
	// > 0; +Inf means a fresh task for every pretraining sequence.
	Kappa float64
	// Alpha = N/D is the context length per dimension, > 0 and finite.
	Alpha float64
	// Tau = n/D² is the number of pretraining sequences per D², > 0 and
	// ≠ 1 (the ridgeless error diverges at the interpolation threshold
	// τ = 1); +Inf is the infinite-pretraining limit.
	Tau float64
	// Rho is the label-noise variance, ≥ 0 and finite.
	Rho float64
}

// Validate returns an error naming the first field of p outside its range.
func (p LuParams) Validate() error {
	switch {
	case !(p.Kappa > 0):
		return fmt.Errorf("theory: LuParams.Kappa = %v: must be > 0 (+Inf allowed)", p.Kappa)
	case !(p.Alpha > 0) || math.IsInf(p.Alpha, 1):
		return fmt.Errorf("theory: LuParams.Alpha = %v: must be > 0 and finite", p.Alpha)
	case !(p.Tau > 0) || p.Tau == 1:
		return fmt.Errorf("theory: LuParams.Tau = %v: must be > 0 and ≠ 1 (+Inf allowed)", p.Tau)
	case !(p.Rho >= 0) || math.IsInf(p.Rho, 1):
		return fmt.Errorf("theory: LuParams.Rho = %v: must be ≥ 0 and finite", p.Rho)
	}
	return nil
}

// LuICL returns the asymptotic in-context error e_ICL of the ridgeless
// (λ → 0⁺) optimal linear attention of Lu et al.: the test task is fresh,
// w ~ N(0, I_D), with a fresh context of N = αD pairs and a fresh query.
//
// Normalization: e_ICL = E[(y − ŷ)²] for the query label y = wᵀx + ε, the
// label noise included, in units where E[(wᵀx)²] = 1; the zero predictor
// scores 1 + ρ and no predictor scores below ρ. For tokens x ~ N(0, Λ) with
// Λ = λI and noise σ², take ρ = σ²/tr(Λ) and multiply e by tr(Λ) (see
// LuScale).
//
// With q = (1+ρ)/α, m = M_κ(q) and μ = q·M_{κ/τ}(q), where M_κ(x) is the
// positive root m of (x/κ)m² + (x + 1 − 1/κ)m − 1 = 0 (the Marchenko–Pastur
// resolvent lim (1/D) tr (R̂ + xI)⁻¹ of the task moment R̂ = (1/K) Σ w_k w_kᵀ;
// M_kappa in common.py), for τ > 1 and s = 1/(τ−1) (s = 0 at τ = +Inf):
//
//	e_ICL = (k − s)(1+q)(q m)² + (s − 2) m q² + (1 + (1+ρ) s m) q + ρ s m + ρ,
//	k = 1/(1 − κ (m/(κ+m))²),
//
// and for τ < 1:
//
//	e_ICL = τ(1+q)/(1−τ)·(1 − τ(1−μ)² − (q−ρ) μ/q) − 2τ(1−μ) + 1 + ρ.
//
// At τ = +Inf this is ρ + q − 2q²m + q²(1+q)·(−dM_κ/dq) (docs/math.md).
//
// References:
//
//	Lu, Letey, Zavatone-Veth, Maiti, Pehlevan, "Asymptotic theory of
//	in-context learning by linear attention", PNAS 122 (2025) e2502599122,
//	arXiv:2405.11751; the ridgeless ICL result. The formula above is the
//	function ridgeless_icl(alpha, kappa, tau, rho) of theory_runs/common.py
//	in github.com/Pehlevan-Group/incontext-asymptotics-experiments, commit
//	9f9b5626befd5ff58239f4a074657c6d9589fb85 (term1, term2, term3 there),
//	rewritten in s = 1/(τ−1) so that τ = +Inf is exact.
func LuICL(p LuParams) (float64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	q := (1 + p.Rho) / p.Alpha
	var e float64
	if p.Tau < 1 {
		mu := q * wishartResolvent(q, p.Kappa/p.Tau)
		t := p.Tau
		e = t*(1+q)/(1-t)*(1-t*(1-mu)*(1-mu)-(q-p.Rho)/q*mu) - 2*t*(1-mu) + 1 + p.Rho
	} else {
		s := 1 / (p.Tau - 1) // 0 at τ = +Inf
		m := wishartResolvent(q, p.Kappa)
		k := 1 / (1 - taskRatioSquared(m, p.Kappa))
		qm := q * m
		e = (k-s)*(1+q)*qm*qm + (s-2)*m*q*q + (1+(1+p.Rho)*s*m)*q + p.Rho*s*m + p.Rho
	}
	return finite("LuICL", e, p)
}

// LuIDG returns the asymptotic in-distribution error e_IDG of the ridgeless
// optimal linear attention of Lu et al.: the test task is drawn uniformly
// from the K = κD pretraining tasks, with a fresh context and query. Its
// normalization is that of LuICL (label noise included, E[(wᵀx)²] = 1).
//
// With q, m, μ as in LuICL, for τ > 1 (s = 1/(τ−1), 0 at τ = +Inf):
//
//	e_IDG = (1 + s)(ρ + q(1 − q m)),
//
// and for τ < 1, with ϵ = (1−τ)q/(τμ) and c = 1/(1 − κ/(1 + κϵ/(1−τ))²):
//
//	e_IDG = τ[(q+ϵ)²/ϵ + (ρ + q − 2q(1−τ)(q/ϵ + 1))/(1 − τ − c(1−τ)²)].
//
// References:
//
//	Lu et al. (PNAS 2025, arXiv:2405.11751), the ridgeless IDG result; the
//	formula is ridgeless_idg(alpha, kappa, tau, rho) of theory_runs/common.py
//	in Pehlevan-Group/incontext-asymptotics-experiments, commit
//	9f9b5626befd5ff58239f4a074657c6d9589fb85, with τ/(τ−1) written 1 + s.
func LuIDG(p LuParams) (float64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	q := (1 + p.Rho) / p.Alpha
	var e float64
	if p.Tau < 1 {
		t := p.Tau
		mu := q * wishartResolvent(q, p.Kappa/t)
		eps := (1 - t) * q / (t * mu)
		// κ/(1 + κϵ/(1−τ))² written as (1/κ)/(1/κ + ϵ/(1−τ))², which is 0
		// at κ = +Inf instead of Inf/Inf.
		ik := 1 / p.Kappa
		d := ik + eps/(1-t)
		c := 1 / (1 - ik/(d*d))
		e = t * ((q+eps)*(q+eps)/eps + (p.Rho+q-2*q*(1-t)*(q/eps+1))/(1-t-c*(1-t)*(1-t)))
	} else {
		s := 1 / (p.Tau - 1)
		m := wishartResolvent(q, p.Kappa)
		e = (1 + s) * (p.Rho + q*(1-q*m))
	}
	return finite("LuIDG", e, p)
}

// LuScale returns the LuParams at τ = +Inf of a finite problem with D-dim
// tokens x ~ N(0, (traceLambda/D)·I), K pretraining tasks (K ≤ 0: a fresh
// task for every sequence, κ = +Inf), N context pairs and label-noise
// variance noiseVar, together with the factor that turns Lu's errors into
// E[(y − ŷ)²] of that problem: e_problem = scale·e_Lu, scale = traceLambda.
//
// Rescaling x by c and y by c (noise variance by c²) maps the problem onto
// itself with the optimal attention weights rescaled, so its optimal error
// scales by c²; here c² = traceLambda and ρ = noiseVar/traceLambda.
func LuScale(d, n, k int, noiseVar, traceLambda float64) (p LuParams, scale float64, err error) {
	switch {
	case d < 1:
		return p, 0, fmt.Errorf("theory: LuScale d = %d: must be ≥ 1", d)
	case n < 1:
		return p, 0, fmt.Errorf("theory: LuScale n = %d: must be ≥ 1", n)
	case !(traceLambda > 0) || math.IsInf(traceLambda, 1):
		return p, 0, fmt.Errorf("theory: LuScale traceLambda = %v: must be > 0 and finite", traceLambda)
	case !(noiseVar >= 0) || math.IsInf(noiseVar, 1):
		return p, 0, fmt.Errorf("theory: LuScale noiseVar = %v: must be ≥ 0 and finite", noiseVar)
	}
	p = LuParams{
		Kappa: math.Inf(1),
		Alpha: float64(n) / float64(d),
		Tau:   math.Inf(1),
		Rho:   noiseVar / traceLambda,
	}
	if k > 0 {
		p.Kappa = float64(k) / float64(d)
	}
	return p, traceLambda, nil
}

// wishartResolvent returns M_κ(x) for x > 0, κ > 0 (κ = +Inf allowed): the
// positive root m of (x/κ)m² + (x + 1 − 1/κ)m − 1 = 0, that is
// lim_{D→∞} (1/D) tr (R̂ + xI)⁻¹ for the task second-moment matrix
// R̂ = (1/K) Σ_k w_k w_kᵀ of K = κD tasks w_k ~ N(0, I_D) (Marchenko–Pastur).
//
// Their closed form (M_kappa in theory_runs/common.py) is
// 2/(b + √(b² + 4x/κ)) with b = x + 1 − 1/κ; for b < 0 this cancels, and
// the equal form κ(√(b² + 4x/κ) − b)/(2x) is used instead.
func wishartResolvent(x, kappa float64) float64 {
	ik := 1 / kappa
	b := x + 1 - ik
	r := math.Sqrt(b*b + 4*x*ik)
	if b >= 0 {
		return 2 / (b + r)
	}
	return (r - b) / (2 * x * ik)
}

// taskRatioSquared returns κ(m/(κ+m))², written m²/(κ(1 + m/κ)²) so that
// κ = +Inf gives 0.
func taskRatioSquared(m, kappa float64) float64 {
	r := 1 + m/kappa
	return m * m / (kappa * r * r)
}

// finite returns e, or an error if e is not finite.
func finite(name string, e float64, p LuParams) (float64, error) {
	if math.IsNaN(e) || math.IsInf(e, 0) {
		return 0, fmt.Errorf("theory: %s(%+v) = %v: not finite", name, p, e)
	}
	return e, nil
}
