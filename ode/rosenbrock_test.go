package ode

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// hnwForm converts a Rosenbrock tableau from the transformed form it is
// stored in (W k = f + Σ (C_ij/h) k_j, stage inputs Σ a_ij k_j) to the
// original form of HNW II, eq. 7.4 (α, Γ and weights b), by HNW II,
// eq. 7.25: Γ⁻¹ = I/γ − C, α = a Γ, b = m Γ where m are the transformed
// weights (the last row of a plus the last stage); the embedded weights are
// the last row of a alone (ŷ = y₁ − k_s).
func hnwForm(tab *rosenbrockTableau) (alpha, beta *mat.Dense, b, bHat []float64) {
	s := len(tab.nodes)
	ginv := mat.NewDense(s, s, nil)
	a := mat.NewDense(s, s, nil)
	for i := 0; i < s; i++ {
		ginv.Set(i, i, 1/tab.gamma)
		for j, c := range tab.c[i] {
			ginv.Set(i, j, -c)
		}
		for j, v := range tab.a[i] {
			a.Set(i, j, v)
		}
	}
	var g mat.Dense
	if err := g.Inverse(ginv); err != nil {
		panic(err)
	}
	alpha = new(mat.Dense)
	alpha.Mul(a, &g)
	beta = new(mat.Dense)
	beta.Add(alpha, &g)
	m := append(append([]float64{}, tab.a[s-1]...), 1)
	mHat := append(append([]float64{}, tab.a[s-1]...), 0)
	weights := func(w []float64) []float64 {
		var out mat.VecDense
		out.MulVec(g.T(), mat.NewVecDense(s, w))
		return out.RawVector().Data
	}
	return alpha, beta, weights(m), weights(mHat)
}

// rosenbrockWeights returns the elementary weights Φ_i(t) of a Rosenbrock
// method (HNW II, IV.7, Theorem 7.3 and Table 7.1): a vertex with one child
// contributes Σ_j β_ij Φ_j (β = α + Γ, diagonal γ included, because the
// Jacobian acts on it linearly), a vertex with several children the product
// over them of Σ_j α_ij Φ_j.
func rosenbrockWeights(alpha, beta *mat.Dense, trees []rootedTree) [][]float64 {
	s, _ := alpha.Dims()
	phi := make([][]float64, len(trees))
	for ti, tr := range trees {
		v := make([]float64, s)
		for i := range v {
			v[i] = 1
		}
		w := alpha
		if len(tr.children) == 1 {
			w = beta
		}
		for _, k := range tr.children {
			for i := 0; i < s; i++ {
				var sum float64
				for j := 0; j < s; j++ {
					sum += w.At(i, j) * phi[k][j]
				}
				v[i] *= sum
			}
		}
		phi[ti] = v
	}
	return phi
}

// TestRosenbrockOrderConditions checks Rodas5P's tableau: Σ b_i Φ_i(t) =
// 1/γ(t) for every tree up to order 5 and not all of order 6; the embedded
// formula to order 4 and not 5; the nodes c_i = Σ_j α_ij and d_i = Σ_j γ_ij;
// and that the continuous extension ends at y₁ (θ = 1) and starts at y₀.
func TestRosenbrockOrderConditions(t *testing.T) {
	tab := &rodas5P
	alpha, beta, b, bHat := hnwForm(tab)
	trees := treesUpTo(6)
	phi := rosenbrockWeights(alpha, beta, trees)
	for _, tc := range []struct {
		name  string
		w     []float64
		order int
	}{{"b", b, tab.order}, {"b̂", bHat, tab.errorOrder}} {
		res := orderResiduals(tc.w, phi, trees, 1)
		for p := 1; p <= tc.order; p++ {
			if res[p] > 1e-10 {
				t.Errorf("%s: order-%d residual %.3g", tc.name, p, res[p])
			}
		}
		if res[tc.order+1] < 1e-6 {
			t.Errorf("%s: order-%d conditions hold too (residual %.3g): order is wrong", tc.name, tc.order+1, res[tc.order+1])
		}
	}
	s := len(tab.nodes)
	for i := 0; i < s; i++ {
		var rowA, rowG float64
		for j := 0; j < s; j++ {
			rowA += alpha.At(i, j)
			rowG += beta.At(i, j) - alpha.At(i, j)
		}
		if math.Abs(rowA-tab.nodes[i]) > 1e-12 || math.Abs(rowG-tab.d[i]) > 1e-12 {
			t.Errorf("stage %d: Σα = %.17g (c = %.17g), Σγ = %.17g (d = %.17g)", i, rowA, tab.nodes[i], rowG, tab.d[i])
		}
	}
}
