package flow

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/law"
)

// stackLaws are the laws the stack's tests run on: the paper's task with
// a non-diagonal Λ, and a task law with Ω ≠ I, fixed tasks and noise.
func stackLaws(t *testing.T, d, n int) map[string]*law.Data {
	t.Helper()
	lam := make([]float64, d)
	for i := range lam {
		lam[i] = 1 / float64(i+1)
	}
	paper, err := law.NewData(lam, law.RandomRotation(d, 4), law.Lengths{N: n})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	fixed := make([][]float64, 3)
	for k := range fixed {
		fixed[k] = make([]float64, d)
		for i := range fixed[k] {
			fixed[k][i] = rng.NormFloat64()
		}
	}
	omega := make([]float64, d)
	for i := range omega {
		omega[i] = 2 / float64(i+2)
	}
	rot := law.RandomRotation(d, 9)
	var cov mat.Dense
	cov.Mul(rot, mat.NewDiagDense(d, omega))
	cov.Mul(&cov, rot.T())
	tasks, err := paper.WithTasks(law.Tasks{ICL: 0.6, Fixed: fixed, Cov: &cov, Noise: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*law.Data{"paper": paper, "task law": tasks}
}

// TestStackOneLayerIsTheLayer: the stack's evaluation at one layer (the
// traces program of law.StackLoss, whitened, with its own chain rule) is
// the reduced layer's flow, loss and test losses, to rounding: the
// conventions (A = Mᵀ, the whitening, the factor −½ of the residual)
// agree with the paper's one layer.
func TestStackOneLayerIsTheLayer(t *testing.T) {
	for name, data := range stackLaws(t, 4, 7) {
		for _, m := range []Model{{Kind: Merged, H: 3}, {Kind: Separate, H: 2, R: 2, Tau: 0.7}} {
			s, err := NewSystem(data, m)
			if err != nil {
				t.Fatal(err)
			}
			st, err := newStack(s)
			if err != nil {
				t.Fatal(err)
			}
			y0, _ := s.Init(0.8, 5)
			y := s.ToEigen(nil, y0)
			n := s.Len()
			want, got := make([]float64, n), make([]float64, n)
			s.DerivEigen(want, y)
			st.deriv(got, y)
			if e := maxRelDiff(got, want); e > 1e-12 {
				t.Errorf("%s, %v: the one-layer stack's flow is %.3g off the layer's", name, m.Kind, e)
			}
			if l, w := st.loss(y), s.LossEigen(y); math.Abs(l-w) > 1e-13*math.Abs(w) {
				t.Errorf("%s, %v: loss %.15g, the layer's %.15g", name, m.Kind, l, w)
			}
			icl, iwl, idg := st.testLosses(y)
			wi, ww, wd := s.TestLossesEigen(y)
			for i, p := range [][2]float64{{icl, wi}, {iwl, ww}, {idg, wd}} {
				if !(math.Abs(p[0]-p[1]) <= 1e-12*math.Abs(p[1])) && !(math.IsNaN(p[0]) && math.IsNaN(p[1])) {
					t.Errorf("%s, %v: test loss %d is %.15g, the layer's %.15g", name, m.Kind, i, p[0], p[1])
				}
			}
		}
	}
}

func maxRelDiff(got, want []float64) float64 {
	var e, scale float64
	for i := range want {
		e = max(e, math.Abs(got[i]-want[i]))
		scale = max(scale, math.Abs(want[i]))
	}
	return e / scale
}

// TestStackGradientAndJacobian: at random points of two- and three-layer
// stacks (merged and separate R = 2, tied and untied, both laws) the flow
// is −1/(2τ) times the central difference of the loss, and the
// Jacobian–vector product the central difference of the flow (step 1e-6,
// error O(h²)); the Jacobian is symmetric (a gradient flow's).
func TestStackGradientAndJacobian(t *testing.T) {
	const h = 1e-6
	for name, data := range stackLaws(t, 3, 5) {
		for _, m := range []Model{
			{Kind: Merged, H: 2, Layers: 2},
			{Kind: Separate, H: 2, R: 2, Layers: 3, Tau: 1.4},
			{Kind: Merged, H: 1, Layers: 3, Tied: true},
			{Kind: Separate, H: 3, R: 1, Layers: 2, Tied: true},
		} {
			s, err := NewSystem(data, m)
			if err != nil {
				t.Fatal(err)
			}
			y0, _ := s.Init(1.2, 3)
			y := s.ToEigen(nil, y0)
			n := s.Len()
			f := make([]float64, n)
			s.DerivEigen(f, y)
			fd := make([]float64, n)
			for j := range y {
				orig := y[j]
				y[j] = orig + h
				up := s.LossEigen(y)
				y[j] = orig - h
				down := s.LossEigen(y)
				y[j] = orig
				fd[j] = -(up - down) / (2 * h) / (2 * m.Tau0())
			}
			if e := maxRelDiff(f, fd); e > 1e-7 {
				t.Errorf("%s, %+v: the flow is %.3g off −∇L/(2τ) by central differences", name, m, e)
			}
			jac, asym := jacobianOf(s, y)
			if asym > 1e-10 {
				t.Errorf("%s, %+v: Jacobian asymmetry %.3g", name, m, asym)
			}
			if rel := jacobianFDError(s, jac, y, h); rel > 1e-7 {
				t.Errorf("%s, %+v: the Jacobian is %.3g off central differences", name, m, rel)
			}
		}
	}
}

// Tau0 is τ with 0 read as 1.
func (m Model) Tau0() float64 {
	if m.Tau == 0 {
		return DefaultTau
	}
	return m.Tau
}
