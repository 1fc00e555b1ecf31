package flow

import (
	"context"
	"math"
	"testing"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/mlp"
)

// TestMergedIsNetworkOnZ: merged attention and the two-layer linear
// network on z (package mlp, which forms E[z zᵀ] and integrates the
// paper's eq. attnM-gd as written) from the same weights, w₂ = v and
// W₁'s rows vec(U_i)ᵀ, are one trajectory, as the paper's equivalence
// (eq. attnM-mlp) says they must be for any start: the weights agree to
// the integrators' tolerance on the plateau, through the drop and at
// convergence, on a rotated, non-white Λ from the paper's random start.
func TestMergedIsNetworkOnZ(t *testing.T) {
	data, err := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{N: 31})
	if err != nil {
		t.Fatal(err)
	}
	const h = 8
	s := newSys(t, data, Model{Kind: Merged, H: h})
	y0, _ := s.Init(1e-3, 3)
	times := []float64{0, 10, 20, 30, 40, 50, 60, 100, 300, 1000}
	tr, err := s.Run(context.Background(), y0, RunSettings{T: 1000, Times: times, RTol: 1e-11, ATol: 1e-15})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Loss[len(times)-1] > 1.001*data.MinLoss() || len(tr.Transitions) != 1 {
		t.Fatalf("the run ends at L = %g (L* = %g) after %d drops: want the drop inside the times", tr.Loss[len(times)-1], data.MinLoss(), len(tr.Transitions))
	}
	net, err := mlp.New(data, h, 0)
	if err != nil {
		t.Fatal(err)
	}
	z0, _ := mlp.FromAttention(y0[:h], y0[h:], 4)
	nt, err := net.Run(context.Background(), z0, times, 1e-11, 1e-15)
	if err != nil {
		t.Fatal(err)
	}
	for k, tt := range times {
		v, u := mlp.ToAttention(nt.States[k], h, 4)
		if e := relErr(append(v, u...), tr.States[k*s.Len():(k+1)*s.Len()]); e > 1e-7 {
			t.Errorf("t = %g: the network's weights differ from attention's by %.2g relative", tt, e)
		}
		if e := math.Abs(nt.Loss[k] - tr.Loss[k]); e > 1e-9 {
			t.Errorf("t = %g: loss %.12g (network), %.12g (attention)", tt, nt.Loss[k], tr.Loss[k])
		}
	}
}
