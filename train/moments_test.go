package train

import (
	"math"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// TestPopulationMomentsGiveTheFlow: the reduced layer trained on the
// exact population moments (A ⊗ Λ, vec Λ², tr Λ) is package flow's system:
// the same loss, and −∂L/∂θ/(2τ) is flow's right-hand side, to rounding,
// at random states of both models (docs/math.md, "Population loss and
// flow"; here the moments form and there the residual G = Λ² − AMΛ).
func TestPopulationMomentsGiveTheFlow(t *testing.T) {
	data, err := law.NewData([]float64{0.5, 0.3, 0.15, 0.05}, law.RandomRotation(4, 7), law.Lengths{Nu: 1.0 / 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []flow.Kind{flow.Merged, flow.Separate} {
		m := Model{Model: flow.Model{Kind: kind, H: 3, Layer: flow.ReducedLayer, Tau: 1}, D: 4}
		if kind == flow.Separate {
			m.R = 2
		}
		s, err := flow.NewSystem(data, flow.Model{Kind: kind, H: m.H, R: m.R, Tau: 2})
		if err != nil {
			t.Fatal(err)
		}
		pop, err := data.Moments(flow.ReducedLayer.Pairs(data.Dim()), law.Training, false)
		if err != nil {
			t.Fatal(err)
		}
		obj := newLinearObjective(flow.NewCoefficients(4, m.flowModel()), newMomentsObjective(pop))
		y := randomWeights(m.Len(), 0.6, 3)
		grad := make([]float64, m.Len())
		loss := obj.eval(y, grad, nil)
		if want := s.Loss(y); math.Abs(loss-want) > 1e-13*math.Abs(want) {
			t.Errorf("%v: loss %.17g, flow's %.17g", kind, loss, want)
		}
		// flow's derivative in the original basis: V·(eigen derivative).
		dy := make([]float64, s.Len())
		s.DerivEigen(dy, s.ToEigen(nil, y))
		s.FromEigen(dy, dy)
		for i := range grad {
			grad[i] *= -1 / (2 * s.Model.Tau)
		}
		if d := relDiff(grad, dy); d > 1e-13 {
			t.Errorf("%v: −∂L/∂θ/2τ differs from flow's dθ/dt by %.3g relative", kind, d)
		}
	}
}

// TestMonteCarloLoss: the training loss on P sampled sequences is an
// unbiased estimate of the population loss L(M) = tr Λ − 2 tr(ΛMΛ) +
// tr(MᵀAMΛ) (docs/math.md), for the Reduced model and for the Full one
// with its extra blocks at zero (the same function of M). Thirty data
// seeds of P = 10⁴ sequences give independent estimates; their mean must
// lie within 4 standard errors (estimated from their spread, ≈ 0.4%) of the
// exact value, at M = 0, at the global minimum M* = A⁻¹Λ and at a random
// M. Tokens drawn from N(0, 1.02Λ) instead would be 5 to 15 standard
// errors off.
func TestMonteCarloLoss(t *testing.T) {
	data, err := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{Nu: 1.0 / 7})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := flow.NewSystem(data, flow.Model{Kind: flow.Merged, H: 1, Tau: 1})
	// Merged, one head: v = 1 and U = M gives the map M.
	states := map[string][]float64{"zero": make([]float64, 17)}
	mstar := mulInvDiag(data)
	states["M*"] = append([]float64{1}, mstar...)
	states["random"] = append([]float64{1}, randomWeights(16, 0.5, 9)...)
	for _, blocks := range []flow.Layer{flow.ReducedLayer, flow.FullLayer} {
		m := Model{Model: flow.Model{Kind: flow.Merged, H: 1, Layer: blocks, Tau: 1}, D: 4}
		trainers := make([]*Trainer, 30)
		for i := range trainers {
			trainers[i] = newTrainer(t, Config{Model: m, Data: withLaw(t, data, law.Lengths{N: 7}, 1, uint64(100+i)), P: 10000,
				Seed: uint64(100 + i), Path: MomentsPath})
		}
		for name, y := range states {
			theta, _ := m.FromFlow(y)
			var sum, sum2 float64
			for _, tr := range trainers {
				l := tr.Loss(theta)
				sum, sum2 = sum+l, sum2+l*l
			}
			k := float64(len(trainers))
			mean := sum / k
			se := math.Sqrt((sum2/k - mean*mean) / (k - 1))
			want := data.LossOfMap(s.Map(y))
			t.Logf("%v, M %s: mean %.6g ± %.2g, exact %.6g", blocks, name, mean, se, want)
			if math.Abs(mean-want) > 4*se {
				t.Errorf("%v, M %s: Monte Carlo loss %.6g ± %.2g, exact %.6g: %.1f standard errors apart",
					blocks, name, mean, se, want, math.Abs(mean-want)/se)
			}
		}
	}
}

// mulInvDiag returns M* = A⁻¹Λ row-major: V diag(λ_d/a_d) Vᵀ.
func mulInvDiag(data *law.Data) []float64 {
	d := data.Dim()
	v, me := data.Vecs(), data.MapEigenvalues()
	out := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				out[i*d+j] += v.At(i, k) * me[k] * v.At(j, k)
			}
		}
	}
	return out
}
