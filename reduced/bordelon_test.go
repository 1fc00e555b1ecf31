package reduced

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/theory"
)

// bordelonFull runs TestBordelonTable's exact flows at D = 32 and 64 too
// (minutes): go test ./reduced -run BordelonTable -v -bordelon.full.
var bordelonFull = flag.Bool("bordelon.full", false, "TestBordelonTable: the exact flow at D = 8, 16, 32 and 64")

// TestBordelonTable holds the exact tied flow of the isotropic setting
// (Λ = I/D, w ~ N(0, I), noiseless, merged, one head started balanced and
// isotropic: flow.System.BalancedAligned) against Bordelon, Letey and
// Pehlevan's Marchenko–Pastur value of L steps of gradient descent with
// the best step (theory.IsotropicGD.Optimum; their Fig. 1c): for L = 1,
// 2, 3 at α = N/D = 1 and 4, the flow until converged ends at the finite-D
// reduction's least loss (to 10⁻⁶ relative), which tends to the limit as
// a power of D fitted between D = 8 and 1024 within [−1.2, −0.8] (the
// corrections to the moments of a Wishart matrix are O(1/D)). It logs the
// table docs/math.md quotes.
func TestBordelonTable(t *testing.T) {
	flows := []int{8, 16}
	if *bordelonFull {
		flows = append(flows, 32, 64)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-3s %-3s %-5s %-12s %-12s %-10s\n", "L", "α", "D", "flow", "limit", "gap")
	for _, layers := range []int{1, 2, 3} {
		for _, alpha := range []int{1, 4} {
			_, limit, err := theory.IsotropicGD{Layers: layers, Alpha: float64(alpha)}.Optimum()
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range flows {
				got := isotropicFlow(t, d, alpha*d, layers)
				red, err := NewIsotropicStack(d, alpha*d, layers, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, want := red.Optimum()
				if math.Abs(got-want) > 1e-6*want {
					t.Errorf("L = %d, α = %d, D = %d: the flow ends at %.10g, the reduction's least loss is %.10g", layers, alpha, d, got, want)
				}
				fmt.Fprintf(&table, "%-3d %-3d %-5d %-12.8f %-12.8f %-10.3g\n", layers, alpha, d, got, limit, got-limit)
			}
			small, _ := NewIsotropicStack(8, alpha*8, layers, 0)
			big, _ := NewIsotropicStack(1024, alpha*1024, layers, 0)
			_, l8 := small.Optimum()
			_, l1024 := big.Optimum()
			p := math.Log((l1024-limit)/(l8-limit)) / math.Log(1024.0/8)
			if !(p > -1.2 && p < -0.8) {
				t.Errorf("L = %d, α = %d: the gap to the limit falls as D^%.3f, want about D⁻¹", layers, alpha, p)
			}
			fmt.Fprintf(&table, "    fitted power of D (8 to 1024): %.3f\n", p)
		}
	}
	t.Log("\n" + table.String())
}

// isotropicFlow returns the final loss of the tied merged stack's flow
// until converged from a balanced isotropic start in the setting.
func isotropicFlow(t *testing.T, d, n, layers int) float64 {
	t.Helper()
	lam := make([]float64, d)
	for i := range lam {
		lam[i] = 1 / float64(d)
	}
	data, err := law.NewData(lam, nil, law.Lengths{N: n})
	if err != nil {
		t.Fatal(err)
	}
	m := flow.Model{Kind: flow.Merged, H: 1, Layers: layers, Tied: layers > 1}
	if layers == 1 {
		m.Layers = 0
	}
	s, err := flow.NewSystem(data, m)
	if err != nil {
		t.Fatal(err)
	}
	y0, err := s.BalancedAligned([]float64{0.1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Run(context.Background(), y0, flow.RunSettings{Tol: 1e-10, Samples: 50})
	if err != nil {
		t.Fatal(err)
	}
	return tr.FinalLoss
}
