package theory

import (
	"math"
	"testing"
)

// TestMarchenkoPasturMoments: the first moments are 1, 1, 1 + q,
// 1 + 3q + q² and 1 + 6q + 6q² + q³ (the Narayana polynomials; Bai and
// Silverstein 2010, Lemma 3.1), and as moments of a law they satisfy
// m₂m₀ ≥ m₁² (Cauchy–Schwarz).
func TestMarchenkoPasturMoments(t *testing.T) {
	for _, q := range []float64{0.25, 1, 3} {
		want := []float64{1, 1, 1 + q, 1 + 3*q + q*q, 1 + 6*q + 6*q*q + q*q*q}
		for k, w := range want {
			if got := MarchenkoPasturMoment(k, q); math.Abs(got-w) > 1e-12*w {
				t.Errorf("q = %g: m_%d = %g, want %g", q, k, got, w)
			}
		}
	}
}

// TestIsotropicGDOneLayer: with one layer L(η) = 1 − 2η + η²(1 + q + qσ²)
// + σ² (expand (1 − ηs)² and η²s over the law), least at
// η* = 1/(1 + q(1 + σ²)), where it is 1 − η* + σ²: the D → ∞ limit of the
// one layer's least loss tr Λ − Σ_d λ_d³/a_d at Λ = I/D, 1 − 1/(1 + (D+1)/N)
// (docs/math.md, "Fixed points").
func TestIsotropicGDOneLayer(t *testing.T) {
	for _, c := range []struct{ alpha, noise float64 }{{1, 0}, {4, 0}, {0.5, 0.25}} {
		p := IsotropicGD{Layers: 1, Alpha: c.alpha, Noise: c.noise}
		q := 1 / c.alpha
		wantEta := 1 / (1 + q*(1+c.noise))
		eta, loss, err := p.Optimum()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(eta-wantEta) > 1e-12 || math.Abs(loss-(1-wantEta+c.noise)) > 1e-12 {
			t.Errorf("α = %g, σ² = %g: η* = %.15g, L* = %.15g; want %.15g, %.15g", c.alpha, c.noise, eta, loss, wantEta, 1-wantEta+c.noise)
		}
	}
}

// TestIsotropicGDDepth: three steps with their best step size reach a
// lower loss than one with its own, by more at α = 1 than at α = 4
// (Bordelon et al., Fig. 1b: depth matters most near α ≈ 1), and with
// label noise no loss falls below σ².
func TestIsotropicGDDepth(t *testing.T) {
	gain := func(alpha float64) float64 {
		_, l1, _ := IsotropicGD{Layers: 1, Alpha: alpha}.Optimum()
		_, l3, _ := IsotropicGD{Layers: 3, Alpha: alpha}.Optimum()
		if !(l3 < l1) {
			t.Errorf("α = %g: three steps reach %g, one %g", alpha, l3, l1)
		}
		return l1 - l3
	}
	if g1, g4 := gain(1), gain(4); !(g1 > g4) {
		t.Errorf("depth gains %g at α = 1 and %g at α = 4, want more at α = 1", g1, g4)
	}
	if _, l, _ := (IsotropicGD{Layers: 4, Alpha: 2, Noise: 0.1}).Optimum(); !(l > 0.1) {
		t.Errorf("the loss with noise 0.1 is %g, below the noise", l)
	}
}

// TestIsotropicGDSteps: a step per layer does at least as well as one
// common step (StepsLoss at the common optimum is Optimum's loss), and
// without noise the best per-layer steps reach 1/Σ_{k=0}^{L} α^k (1/(L+1)
// at α = 1): observed here for L ≤ 4 and α = 0.5, 1, 4 to 10⁻¹², the
// loss of the Hankel system's solution checked by StepsLoss at its roots.
func TestIsotropicGDSteps(t *testing.T) {
	for _, alpha := range []float64{0.5, 1, 4} {
		for layers := 1; layers <= 4; layers++ {
			p := IsotropicGD{Layers: layers, Alpha: alpha}
			eta, common, _ := p.Optimum()
			same := make([]float64, layers)
			for i := range same {
				same[i] = eta
			}
			if l, _ := p.StepsLoss(same); math.Abs(l-common) > 1e-12 {
				t.Errorf("α = %g, L = %d: StepsLoss at the common step %.15g, Optimum %.15g", alpha, layers, l, common)
			}
			steps, best, err := p.OptimumSteps()
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			for k := 0; k <= layers; k++ {
				sum += math.Pow(alpha, float64(k))
			}
			check, _ := p.StepsLoss(steps)
			if math.Abs(best-1/sum) > 1e-12 || math.Abs(check-best) > 1e-10 || best > common+1e-15 {
				t.Errorf("α = %g, L = %d: per-layer steps %v reach %.15g (check %.15g), want 1/Σα^k = %.15g ≤ %.15g", alpha, layers, steps, best, check, 1/sum, common)
			}
		}
	}
	if _, l, _ := (IsotropicGD{Layers: 3, Alpha: 2, Noise: 0.1}).OptimumSteps(); !(l > 0.1) {
		t.Errorf("with noise 0.1 the per-layer steps reach %g, below the noise", l)
	}
}
