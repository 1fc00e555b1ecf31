package flow

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/law"
)

// ahnData is the paper's D = 4 example (λ = 0.4, 0.3, 0.2, 0.1, random
// eigenvectors, N = 31), with tasks w ~ N(0, Ω) for Ω = omega(Λ).
func ahnData(t *testing.T, omega func(float64) float64) *law.Data {
	t.Helper()
	lam, vecs := []float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1)
	data, err := law.NewData(lam, vecs, law.Lengths{N: 31})
	if err != nil {
		t.Fatal(err)
	}
	if omega == nil {
		return data
	}
	w := make([]float64, len(lam))
	for i, l := range lam {
		w[i] = omega(l)
	}
	var cov mat.Dense
	cov.Mul(vecs, mat.NewDiagDense(len(w), w))
	cov.Mul(&cov, vecs.T())
	if data, err = data.WithTasks(law.Tasks{ICL: 1, Cov: &cov}); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAhnTheoremOne: one layer's global minimum (Ahn, Cheng, Daneshmand,
// Sra, NeurIPS 2023, Theorem 1: x ~ N(0, Λ), w ~ N(0, I), the query not
// a key) is the preconditioner A* = ((N+1)/N Λ + tr(Λ)/N I)⁻¹: its loss
// is the flow's least loss L* to 1e-10, and the flow until converged at
// Tol = 10⁻¹⁰ ends with its map within 10⁻⁴ of A*.
func TestAhnTheoremOne(t *testing.T) {
	data := ahnData(t, nil)
	const n = 31.0
	lam := data.Covariance()
	var inv mat.Dense
	inv.Scale((n+1)/n, lam)
	for i := 0; i < 4; i++ {
		inv.Set(i, i, inv.At(i, i)+data.Trace()/n)
	}
	var astar mat.Dense
	if err := astar.Inverse(&inv); err != nil {
		t.Fatal(err)
	}
	one := newSys(t, data, Model{Kind: Merged, H: 1})
	y, err := one.FromArrays([]float64{1}, astar.RawMatrix().Data, nil, nil) // M = A* (symmetric)
	if err != nil {
		t.Fatal(err)
	}
	if l, lstar := one.Loss(y), one.MinLoss(); math.Abs(l-lstar) > 1e-10 {
		t.Errorf("the loss at A* is %.15g, the least loss %.15g", l, lstar)
	}
	s := newSys(t, data, Model{Kind: Merged, H: 4})
	tr, err := s.Run(context.Background(), nil, RunSettings{Tol: 1e-10})
	if err != nil {
		t.Fatal(err)
	}
	var diff mat.Dense
	diff.Sub(s.Map(tr.Final), &astar)
	if e := mat.Norm(&diff, 2) / mat.Norm(&astar, 2); e > 1e-4 {
		t.Errorf("the converged map is %.3g from A* (relative)", e)
	}
}

// TestAhnTheoremThree: with tasks w ~ N(0, Λ⁻¹) the whitened problem is
// isotropic, and every layer's preconditioner at the stack's critical
// points of Ahn et al.'s Theorem 3 is a multiple of Λ⁻¹: the flow of two
// and three untied layers from the paper's small start, until converged at
// Tol = 10⁻¹⁰, ends with every A_ℓΛ a multiple of I to 10⁻⁴ relative.
func TestAhnTheoremThree(t *testing.T) {
	data := ahnData(t, func(l float64) float64 { return 1 / l })
	lam := data.Covariance()
	for _, layers := range []int{2, 3} {
		s := newSys(t, data, Model{Kind: Merged, H: 1, Layers: layers})
		tr, err := s.Run(context.Background(), nil, RunSettings{Tol: 1e-10})
		if err != nil {
			t.Fatal(err)
		}
		maps := make([][]float64, layers)
		for l := range maps {
			maps[l] = make([]float64, 16)
		}
		s.Model.Maps(maps, tr.Final, 4)
		for l, m := range maps {
			var al mat.Dense // A_ℓΛ = M_ℓᵀΛ
			al.Mul(mat.NewDense(4, 4, m).T(), lam)
			c := mat.Trace(&al) / 4
			var dev mat.Dense
			dev.Sub(&al, scaledIdentity(4, c))
			if e := mat.Norm(&dev, 2) / math.Abs(c); e > 1e-4 {
				t.Errorf("L = %d: A_%dΛ is %.3g off %.6g·I (relative); status %v at t = %.4g", layers, l, e, c, tr.Status, tr.FinalT)
			} else {
				t.Logf("L = %d: A_%dΛ = %.8g·I within %.2g (t = %.4g, %v)", layers, l, c, e, tr.FinalT, tr.Status)
			}
		}
	}
}

func scaledIdentity(d int, c float64) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		m.Set(i, i, c)
	}
	return m
}
