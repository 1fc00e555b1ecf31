package mlp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/linattn/linattn/law"
	"gonum.org/v1/gonum/mat"
)

// testNet is a network of h units on D = 3 tokens with a rotated,
// non-white Λ and ν of the next-token loss over 1..7.
func testNet(t *testing.T, h int, tau float64) (*Net, *law.Data) {
	t.Helper()
	data, err := law.NewData([]float64{0.5, 0.3, 0.2}, law.RandomRotation(3, 2), law.Lengths{NTPMax: 7})
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(data, h, tau)
	if err != nil {
		t.Fatal(err)
	}
	return n, data
}

func randomState(n *Net, scale float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	y := make([]float64, n.Len())
	for i := range y {
		y[i] = scale * rng.NormFloat64()
	}
	return y
}

// TestLossIsAttentionLoss: the network's loss at a state is the
// population loss L(M) of the effective map M with vec(M) = W₁ᵀw₂
// (law.Data.LossOfMap, docs/math.md "Population loss and flow"), and its
// map is Σ_i v_i U_i of the attention FromAttention maps it from.
func TestLossIsAttentionLoss(t *testing.T) {
	n, data := testNet(t, 4, 1)
	y := randomState(n, 0.7, 1)
	c := n.Map(y)
	m := mat.NewDense(3, 3, nil)
	for a := 0; a < 3; a++ {
		for b := 0; b < 3; b++ {
			m.Set(a, b, c[b*3+a]) // vec stacks columns
		}
	}
	if got, want := n.Loss(y), data.LossOfMap(m); math.Abs(got-want) > 1e-14*math.Abs(want) {
		t.Errorf("Loss %.17g, L(M) %.17g", got, want)
	}
	v, u := ToAttention(y, 4, 3)
	for a := 0; a < 3; a++ {
		for b := 0; b < 3; b++ {
			var s float64
			for i := range v {
				s += v[i] * u[i*9+a*3+b]
			}
			if math.Abs(s-m.At(a, b)) > 1e-15 {
				t.Fatalf("M[%d][%d] = %g, Σ v_i U_i = %g", a, b, m.At(a, b), s)
			}
		}
	}
	back, err := FromAttention(v, u, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if back[i] != y[i] {
			t.Fatalf("FromAttention(ToAttention(y)) differs at %d", i)
		}
	}
}

// TestDerivIsGradient: τ dθ/dt = −½ ∂L/∂θ by central differences of Loss.
func TestDerivIsGradient(t *testing.T) {
	const tau = 2.5
	n, _ := testNet(t, 3, tau)
	y := randomState(n, 0.8, 2)
	dy := make([]float64, len(y))
	n.Deriv(dy, y)
	const h = 1e-6
	for i := range y {
		p, m := append([]float64(nil), y...), append([]float64(nil), y...)
		p[i] += h
		m[i] -= h
		want := -0.5 * (n.Loss(p) - n.Loss(m)) / (2 * h) / tau
		if math.Abs(dy[i]-want) > 1e-8 {
			t.Errorf("dθ_%d/dt = %.10g, −½∂L/∂θ/τ = %.10g", i, dy[i], want)
		}
	}
}

// TestWhiteClosedForm: on Λ = cI from the balanced, aligned start
// W₁(0) = w₂(0) mᵀ, m = vec(I)/√D, the network's map stays σ(t) vec(I)
// with the paper's closed form (eq. attnM-solution for any c, docs/math.md
// "Closed form for the merged model with white covariance"):
// s(t) = γe^{2γt} / (α(e^{2γt} − 1) + γ/s₀), σ = s/√D, γ = c²√D,
// α = c³(1 + ν(1 + D)), s₀ = ‖w₂(0)‖².
func TestWhiteClosedForm(t *testing.T) {
	const c, d, h, nN = 0.5, 3, 4, 15
	data, err := law.NewData(law.White(d, c), nil, law.Lengths{N: nN})
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(data, h, 0)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, n.Len())
	w2 := []float64{0.01, -0.02, 0.005, 0.015}
	var s0 float64
	for i, w := range w2 {
		y[i], s0 = w, s0+w*w
		for a := 0; a < d; a++ {
			y[h+i*d*d+a*d+a] = w / math.Sqrt(d)
		}
	}
	gamma, alpha := c*c*math.Sqrt(d), c*c*c*(1+(1+float64(d))/nN)
	times := []float64{0, 20, 40, 60, 80, 120}
	tr, err := n.Run(context.Background(), y, times, 1e-11, 1e-14)
	if err != nil {
		t.Fatal(err)
	}
	for k, tt := range times {
		e := math.Exp(2 * gamma * tt)
		sigma := gamma * e / (alpha*(e-1) + gamma/s0) / math.Sqrt(d)
		m := n.Map(tr.States[k])
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				want := 0.0
				if a == b {
					want = sigma
				}
				if math.Abs(m[b*d+a]-want) > 1e-8*math.Abs(sigma) {
					t.Fatalf("t = %g: M[%d][%d] = %.12g, closed form %.12g", tt, a, b, m[b*d+a], want)
				}
			}
		}
	}
	if l := tr.Loss[len(times)-1]; math.Abs(l-data.MinLoss()) > 1e-6 {
		t.Errorf("final loss %.10g, L* = %.10g: the drop is not inside the times", l, data.MinLoss())
	}
}

// TestConservation: the flow conserves w₂w₂ᵀ − W₁W₁ᵀ (paper eq.
// attnM-conservation) through the drop.
func TestConservation(t *testing.T) {
	n, data := testNet(t, 3, 1)
	y0 := randomState(n, 0.05, 3)
	tr, err := n.Run(context.Background(), y0, []float64{0, 100, 400, 2000}, 1e-10, 1e-13)
	if err != nil {
		t.Fatal(err)
	}
	b0 := n.Balance(y0)
	for k, y := range tr.States {
		for i, b := range n.Balance(y) {
			if math.Abs(b-b0[i]) > 1e-9 {
				t.Fatalf("t = %g: balance entry %d is %.3g, initially %.3g", tr.Times[k], i, b, b0[i])
			}
		}
	}
	if l := tr.Loss[3]; math.Abs(l-data.MinLoss()) > 1e-6 {
		t.Errorf("final loss %.10g, L* = %.10g", l, data.MinLoss())
	}
}

// TestBadInput: errors name the field and its range.
func TestBadInput(t *testing.T) {
	data, _ := law.NewData(law.White(2, 1), nil, law.Lengths{N: 3})
	for _, err := range []error{
		func() error { _, err := New(nil, 1, 0); return err }(),
		func() error { _, err := New(data, 0, 0); return err }(),
		func() error { _, err := New(data, 1, -1); return err }(),
		func() error { _, err := FromAttention([]float64{1}, []float64{1, 2, 3}, 2); return err }(),
		func() error {
			n, _ := New(data, 1, 0)
			_, err := n.Run(context.Background(), make([]float64, n.Len()), []float64{2, 1}, 1e-8, 1e-12)
			return err
		}(),
	} {
		if err == nil {
			t.Error("no error")
		}
	}
}
