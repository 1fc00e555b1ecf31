package reduced

import (
	"context"
	"fmt"
	"math"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/theory"
)

// IsotropicStack is the isotropic reduction of a tied stack of Layers
// merged layers at finite D and N (docs/math.md, "Depth: the isotropic
// reduction"; Bordelon, Letey, Pehlevan, ICLR 2026, the ISO setting):
// tokens x ~ N(0, I/D), tasks w ~ N(0, I), label noise σ², and the one
// map A = γI = ηD·I, on which the flow of the tied stack stays when it
// starts there. Its loss L(η) is a polynomial whose coefficients are the
// exact Wishart expectations (law.StackLoss.ScalarPolynomial); as
// D, N → ∞ at α = N/D it tends to theory.IsotropicGD's.
type IsotropicStack struct {
	D, N, Layers int
	Noise        float64
	Tau          float64 // τ > 0 of the flow; 0 means 1
	poly         []float64
}

// NewIsotropicStack returns the reduction at dimension d ≥ 1, context
// length n ≥ 1, 1 to law.MaxStackLayers layers and noise σ² ≥ 0.
func NewIsotropicStack(d, n, layers int, noise float64) (*IsotropicStack, error) {
	if d < 1 || n < 1 {
		return nil, fmt.Errorf("reduced: D = %d, N = %d, want both ≥ 1", d, n)
	}
	if !(noise >= 0) || math.IsInf(noise, 0) {
		return nil, fmt.Errorf("reduced: noise σ² = %g, want a finite value ≥ 0", noise)
	}
	lam := make([]float64, d)
	for i := range lam {
		lam[i] = 1 / float64(d)
	}
	data, err := law.NewData(lam, nil, law.Lengths{N: n})
	if err != nil {
		return nil, err
	}
	sl, err := data.StackLoss(layers, true)
	if err != nil {
		return nil, fmt.Errorf("reduced: %w", err)
	}
	// Whitened, Ã = Λ^½ A Λ^½ = ηI and M̃ = Λ^½ I Λ^½ = I/D.
	signal, nz := sl.ScalarPolynomial(d, 1/float64(d))
	poly := make([]float64, len(signal))
	for j := range poly {
		poly[j] = signal[j] + noise*nz[j]
	}
	poly[0] += noise
	return &IsotropicStack{D: d, N: n, Layers: layers, Noise: noise, poly: poly}, nil
}

// Polynomial returns the coefficients c_j of L(η) = Σ_j c_j η^j.
func (p *IsotropicStack) Polynomial() []float64 { return append([]float64(nil), p.poly...) }

// Loss returns L(η) for the map A = ηD·I.
func (p *IsotropicStack) Loss(eta float64) float64 { return theory.PolynomialAt(p.poly, eta) }

// Optimum returns the step η* of least loss and the loss there, on
// [0, 2/(1 + √(D/N))²] (theory.PolynomialMinimum; IsotropicGD.Optimum
// gives the limit).
func (p *IsotropicStack) Optimum() (eta, loss float64) {
	q := float64(p.D) / float64(p.N)
	eta, loss, _ = theory.PolynomialMinimum(p.poly, 0, 2/math.Pow(1+math.Sqrt(q), 2)) // a nonempty interval
	return eta, loss
}

// Rate returns dη/dt of the tied merged stack's flow from a balanced,
// isotropic start (U_i = u_i I, v_i = √D·u_i, every v_i u_i of one sign:
// flow.System.BalancedAligned), which stays so: with A = γI, γ = ηD,
// τ dγ/dt = −(|γ|/√D) dL/dγ, that is τ dη/dt = −|η| D^{−3/2} dL/dη.
func (p *IsotropicStack) Rate(eta float64) float64 {
	var dl float64
	for j := len(p.poly) - 1; j >= 1; j-- {
		dl = dl*eta + float64(j)*p.poly[j]
	}
	return -math.Abs(eta) * dl / math.Pow(float64(p.D), 1.5) / p.tau()
}

func (p *IsotropicStack) tau() float64 {
	if p.Tau == 0 {
		return 1
	}
	return p.Tau
}

// Run integrates the reduction from η0 to each of times (increasing,
// from 0) with DOP853 at rtol 10⁻¹², and returns η and the loss there.
func (p *IsotropicStack) Run(eta0 float64, times []float64) (eta, loss []float64, err error) {
	if len(times) == 0 {
		return nil, nil, nil
	}
	prob := ode.Problem{Func: func(_ float64, y, dy []float64) { dy[0] = p.Rate(y[0]) },
		T0: 0, T1: times[len(times)-1], Y0: []float64{eta0}, Autonomous: true}
	res, err := ode.Solve(context.Background(), prob, ode.Settings{Method: ode.DOP853, RTol: 1e-12, ATol: 1e-15, TEval: times})
	if err != nil {
		return nil, nil, fmt.Errorf("reduced: the isotropic reduction: %w", err)
	}
	loss = make([]float64, len(res.YEval))
	for i, e := range res.YEval {
		loss[i] = p.Loss(e)
	}
	return res.YEval, loss, nil
}
