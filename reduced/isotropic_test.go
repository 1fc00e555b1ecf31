package reduced

import (
	"context"
	"math"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/theory"
)

// TestIsotropicStackIsTheFlow: the tied merged stack started balanced and
// isotropic (flow.System.BalancedAligned) stays on A = γI, and its loss
// and γ = tr(A)/D follow the reduction's 1-D flow to 1e-8, at D = 5,
// N = 7, two and three layers, with label noise.
func TestIsotropicStackIsTheFlow(t *testing.T) {
	const d, n, noise = 5, 7, 0.1
	lam := make([]float64, d)
	for i := range lam {
		lam[i] = 1.0 / d
	}
	base, err := law.NewData(lam, law.RandomRotation(d, 2), law.Lengths{N: n})
	if err != nil {
		t.Fatal(err)
	}
	data, err := base.WithTasks(law.Tasks{ICL: 1, Noise: noise})
	if err != nil {
		t.Fatal(err)
	}
	for _, layers := range []int{2, 3} {
		s, err := flow.NewSystem(data, flow.Model{Kind: flow.Merged, H: 2, Layers: layers, Tied: true})
		if err != nil {
			t.Fatal(err)
		}
		y0, err := s.BalancedAligned([]float64{0.3, 0.5})
		if err != nil {
			t.Fatal(err)
		}
		times := []float64{0, 50, 200, 1000, 5000}
		tr, err := s.Run(context.Background(), y0, flow.RunSettings{T: 5000, Times: times, RTol: 1e-11, ATol: 1e-14})
		if err != nil {
			t.Fatal(err)
		}
		red, err := NewIsotropicStack(d, n, layers, noise)
		if err != nil {
			t.Fatal(err)
		}
		gamma0 := (0.3*0.3 + 0.5*0.5) / math.Sqrt(d) // Σ v_i u_i with u_i = v_i/√D
		eta, loss, err := red.Run(gamma0/d, times)
		if err != nil {
			t.Fatal(err)
		}
		for i := range times {
			m := tr.States[i*s.Len() : (i+1)*s.Len()]
			var gamma float64 // tr(A)/D = Σ_i v_i tr(U_i)/D
			for h := 0; h < 2; h++ {
				for a := 0; a < d; a++ {
					gamma += m[h] * m[2+h*d*d+a*d+a] / d
				}
			}
			if math.Abs(gamma-eta[i]*d) > 1e-8*math.Abs(gamma) || math.Abs(tr.Loss[i]-loss[i]) > 1e-8*loss[i] {
				t.Errorf("L = %d, t = %g: γ = %.12g, loss %.12g; the reduction's %.12g, %.12g", layers, times[i], gamma, tr.Loss[i], eta[i]*d, loss[i])
			}
		}
	}
}

// TestIsotropicStackLimit: the exact finite-D reduction tends to the
// Marchenko–Pastur limit (theory.IsotropicGD) as D grows at α = N/D
// fixed, its least loss within 3/D of the limit's at D = 256 and 1024
// for L = 1, 2, 3 at α = 1 and 4 (the corrections are O(1/D)), and
// closer at 1024 than at 256.
func TestIsotropicStackLimit(t *testing.T) {
	for _, layers := range []int{1, 2, 3} {
		for _, alpha := range []int{1, 4} {
			_, limit, err := theory.IsotropicGD{Layers: layers, Alpha: float64(alpha)}.Optimum()
			if err != nil {
				t.Fatal(err)
			}
			var prev float64
			for _, d := range []int{256, 1024} {
				red, err := NewIsotropicStack(d, alpha*d, layers, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, l := red.Optimum()
				gap := math.Abs(l - limit)
				if gap > 3.0/float64(d) || (prev != 0 && !(gap < prev)) {
					t.Errorf("L = %d, α = %d, D = %d: least loss %.6g, limit %.6g (gap %.3g, at D/4 %.3g)", layers, alpha, d, l, limit, gap, prev)
				}
				prev = gap
			}
		}
	}
}
