package ode

import (
	"fmt"
	"math"
	"testing"
)

// rootedTree is a rooted tree given by the indices of its children's
// subtrees in the list of all trees (non-decreasing, so each tree is
// generated once).
type rootedTree struct {
	order    int
	gamma    float64 // density γ(t) (HNW I, Definition II.2.10)
	children []int
}

// treesUpTo lists every rooted tree with at most p vertices: 1, 1, 2, 4, 9,
// 20, 48, 115 trees of orders 1..8 (HNW I, Table II.2.1).
func treesUpTo(p int) []rootedTree {
	trees := []rootedTree{{order: 1, gamma: 1}}
	for n := 2; n <= p; n++ {
		existing := len(trees)
		var rec func(start, remaining int, kids []int)
		rec = func(start, remaining int, kids []int) {
			if remaining == 0 {
				g := float64(n)
				for _, k := range kids {
					g *= trees[k].gamma
				}
				trees = append(trees, rootedTree{order: n, gamma: g, children: append([]int(nil), kids...)})
				return
			}
			for i := start; i < existing; i++ {
				if trees[i].order <= remaining {
					rec(i, remaining-trees[i].order, append(kids, i))
				}
			}
		}
		rec(0, n-1, nil)
	}
	return trees
}

func TestTreeCounts(t *testing.T) {
	// Number of rooted trees of order 1..8: OEIS A000081.
	want := []int{1, 1, 2, 4, 9, 20, 48, 115}
	got := make([]int, 8)
	for _, tr := range treesUpTo(8) {
		got[tr.order-1]++
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("order %d: %d trees, want %d", i+1, got[i], want[i])
		}
	}
}

// fullTableau returns the stage matrix over all stages (method, FSAL and
// extra) as dense rows.
func fullTableau(m *RK) [][]float64 {
	total := m.totalStages()
	a := make([][]float64, total)
	for i := range a {
		a[i] = make([]float64, total)
	}
	for i, row := range m.tab.A {
		copy(a[i], row)
	}
	copy(a[m.Stages()], m.tab.B)
	for k, row := range m.tab.ExtraA {
		copy(a[m.Stages()+1+k], row)
	}
	return a
}

// elementaryWeights returns Φ_i(t) for every tree and stage: the product over
// the children u of (A Φ(u))_i (HNW I, Definition II.2.9).
func elementaryWeights(a [][]float64, trees []rootedTree) [][]float64 {
	s := len(a)
	phi := make([][]float64, len(trees))
	for ti, tr := range trees {
		v := make([]float64, s)
		for i := range v {
			v[i] = 1
		}
		for _, k := range tr.children {
			for i := 0; i < s; i++ {
				var sum float64
				for j := 0; j < s; j++ {
					sum += a[i][j] * phi[k][j]
				}
				v[i] *= sum
			}
		}
		phi[ti] = v
	}
	return phi
}

// orderResiduals returns, per order, the largest |Σ b_i Φ_i(t) − θ^|t|/γ(t)|.
func orderResiduals(b []float64, phi [][]float64, trees []rootedTree, theta float64) map[int]float64 {
	res := map[int]float64{}
	for ti, tr := range trees {
		var sum float64
		for i, bi := range b {
			sum += bi * phi[ti][i]
		}
		r := math.Abs(sum - math.Pow(theta, float64(tr.order))/tr.gamma)
		if r > res[tr.order] {
			res[tr.order] = r
		}
	}
	return res
}

func sub(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

// TestOrderConditions checks the Butcher order conditions of every formula
// of every method: the propagated solution, each embedded solution and the
// continuous extension at several θ. The next order must fail, so each
// order is exact. The coefficients are printed to 16–30 digits, hence the
// tolerance of a few hundred ulp.
func TestOrderConditions(t *testing.T) {
	const tol = 5e-14
	cases := []struct {
		m        *RK
		embedded map[string]int // name → order of b − E
	}{
		{DP5, map[string]int{"E": 4}},
		{Tsit5, map[string]int{"E": 4}},
		{DOP853, map[string]int{"E": 5, "E3": 3}},
	}
	for _, tc := range cases {
		m := tc.m
		t.Run(m.Name(), func(t *testing.T) {
			a := fullTableau(m)
			total := len(a)
			for i := range a {
				var sum float64
				for _, v := range a[i] {
					sum += v
				}
				if math.Abs(sum-m.cAll[i]) > tol {
					t.Errorf("row sum of stage %d = %.17g, c = %.17g", i, sum, m.cAll[i])
				}
			}
			trees := treesUpTo(m.tab.Order + 1)
			phi := elementaryWeights(a, trees)
			check := func(name string, b []float64, order int, theta float64) {
				res := orderResiduals(b, phi, trees, theta)
				for p := 1; p <= order; p++ {
					if res[p] > tol {
						t.Errorf("%s: order-%d conditions violated by %.3g", name, p, res[p])
					}
				}
				if res[order+1] < 1e-8 {
					t.Errorf("%s: order-%d conditions hold (residual %.3g); the order is higher than claimed", name, order+1, res[order+1])
				}
			}
			check("b", pad(m.tab.B, total), m.tab.Order, 1)
			ws := map[string][]float64{"E": m.tab.E, "E3": m.tab.E3}
			for name, order := range tc.embedded {
				check("b−"+name, sub(pad(m.tab.B, total), pad(ws[name], total)), order, 1)
			}
			for _, theta := range []float64{0.25, 0.5, 0.8, 1} {
				b := make([]float64, total)
				for j, row := range m.tab.Dense {
					ph := phi1(j+1, theta)
					for i, v := range row {
						b[i] += ph * v
					}
				}
				res := orderResiduals(b, phi, trees, theta)
				for p := 1; p <= m.tab.DenseOrder; p++ {
					if res[p] > tol {
						t.Errorf("dense θ=%g: order-%d conditions violated by %.3g", theta, p, res[p])
					}
				}
				if theta == 1 {
					for i := range b {
						if math.Abs(b[i]-pad(m.tab.B, total)[i]) > tol {
							t.Errorf("dense θ=1: weight %d = %.17g, want b = %.17g", i, b[i], pad(m.tab.B, total)[i])
						}
					}
				}
			}
		})
	}
}

func phi1(j int, theta float64) float64 {
	p := phi(j)
	var v float64
	for k := len(p) - 1; k >= 0; k-- {
		v = v*theta + p[k]
	}
	return v
}

func TestHairerFormRoundTrip(t *testing.T) {
	// Any polynomial with zero constant term of degree ≤ 4 is represented
	// exactly in the φ basis.
	poly := [][]float64{{0, 1, -2, 0.5, 3}, {0, 0, 0, 0, 1}, {0, -1}}
	dense := hairerForm(poly, 4)
	for i, p := range poly {
		for _, th := range []float64{0, 0.1, 0.5, 0.9, 1} {
			var want, got float64
			for k := len(p) - 1; k >= 0; k-- {
				want = want*th + p[k]
			}
			for j := range dense {
				got += phi1(j+1, th) * dense[j][i]
			}
			if math.Abs(got-want) > 1e-14 {
				t.Errorf("poly %d at θ=%g: %g, want %g", i, th, got, want)
			}
		}
	}
}

func ExampleMethod() {
	for _, m := range []*RK{DP5, Tsit5, DOP853} {
		fmt.Printf("%s: order %d, %d evaluations per step, dense order %d\n", m.Name(), m.tab.Order, m.Stages(), m.tab.DenseOrder)
	}
	// Output:
	// DP5: order 5, 6 evaluations per step, dense order 4
	// Tsit5: order 5, 6 evaluations per step, dense order 4
	// DOP853: order 8, 12 evaluations per step, dense order 7
}
