package train

import "github.com/linattn/linattn/flow"

// Linear attention is a linear model in features of the sequence
// (docs/training.md, "Linear attention as a linear model"). For a
// prediction from n context tokens, let S = (Σ_{j≤n} x̃_j x̃_jᵀ + x̃_q x̃_qᵀ)/n
// (the paper's XXᵀ/N, a symmetric (D+1)×(D+1) matrix whose label row is
// β = (1/n) Σ_j y_j x_j, then (1/n)Σ_j y_j²). Then
//
//	ŷ_q = Σ_i ṽ_iᵀ S W^KQ_i x̃_q = Σ_{a,b,c} S_ab T_abc x_qc,
//
// with the three-way tensor T_abc = Σ_i ṽ_ia W̃_ibc (merged) or
// Σ_{i,r} ṽ_ia k̃_{i,r,b} q_{i,r,c} (separate), a, b ∈ 0..D (index D is the
// label), c ∈ 0..D−1. As S is symmetric, ŷ = uᵀ C x_q with
//
//	Full:    u = vech(S) (the pairs a ≤ b), C_{(a,b),c} = T_abc + T_bac (a < b), T_aac (a = b);
//	Reduced: u = β (the label row of S), C = M with M_bc = T_{D,b,c} = Σ_i v_i U_i or Σ_{i,r} v_i k q ᵀ,
//
// the second being the paper's ŷ = βᵀ M x_q = ⟨M, β x_qᵀ⟩ (docs/math.md,
// "Models"), exact when the extra blocks are zero.
type featureMap struct {
	m      *Model
	d, du  int      // D, and the length of u
	pairs  [][2]int // full: the pairs (a, b), a ≤ b, in the order of u
	pairOf []int    // full: pairOf[a*(D+1)+b] is the index of the pair {a, b}
}

func newFeatureMap(m *Model) *featureMap {
	d := m.D
	f := &featureMap{m: m, d: d}
	if m.Blocks == Reduced {
		f.du = d
		return f
	}
	d1 := d + 1
	f.pairOf = make([]int, d1*d1)
	for a := 0; a < d1; a++ {
		for b := a; b < d1; b++ {
			f.pairOf[a*d1+b], f.pairOf[b*d1+a] = len(f.pairs), len(f.pairs)
			f.pairs = append(f.pairs, [2]int{a, b})
		}
	}
	f.du = len(f.pairs)
	return f
}

// size returns the number of features u ⊗ x_q, the length of vec(C).
func (f *featureMap) size() int { return f.du * f.d }

// prefixes calls emit for each prediction of the sequence q with context
// lengths first..last: the features u (valid during the call), the query
// token and its label. acc is scratch of length du.
func (f *featureMap) prefixes(q *sequence, first, last int, acc, u []float64, emit func(u, xq []float64, y float64)) {
	d, d1 := f.d, f.d+1
	clear(acc)
	for j := 0; j < last; j++ {
		f.addToken(acc, q.tok[j*d1:(j+1)*d1])
		n := j + 1
		if n < first {
			continue
		}
		xq := q.tok[n*d1 : n*d1+d]
		copy(u, acc)
		if f.pairs != nil { // the query column x̃_q = (x_q, 0) of S
			for p, ab := range f.pairs {
				if ab[1] < d {
					u[p] += xq[ab[0]] * xq[ab[1]]
				}
			}
		}
		inv := 1 / float64(n)
		for p := range u {
			u[p] *= inv
		}
		emit(u, xq, q.yt[n])
	}
}

// addToken adds the context column x̃ = (x, y) to the running sums:
// vech(x̃x̃ᵀ) (full) or y·x (reduced).
func (f *featureMap) addToken(acc, col []float64) {
	d := f.d
	if f.pairs == nil {
		y := col[d]
		for b, xb := range col[:d] {
			acc[b] += y * xb
		}
		return
	}
	p := 0
	for a, ta := range col {
		for _, tb := range col[a:] {
			acc[p] += ta * tb
			p++
		}
	}
}

// tensorRange returns the value indices a ∈ [a0, D] and key indices
// b ∈ [0, b1) of T that the model's weights can make nonzero.
func (f *featureMap) tensorRange() (a0, b1 int) {
	if f.m.Blocks == Reduced {
		return f.d, f.d
	}
	return 0, f.d + 1
}

// tensor writes T_abc (row-major (D+1)×(D+1)×D) for a ≥ a0, b < b1.
func (f *featureMap) tensor(w *weights, t []float64) {
	m, d, d1 := f.m, f.d, f.d+1
	a0, b1 := f.tensorRange()
	clear(t)
	for k := 0; k < m.hr(); k++ {
		i := k
		if m.Kind == flow.Separate {
			i = k / m.R
		}
		vi := w.vt[i*d1 : (i+1)*d1]
		for a := a0; a < d1; a++ {
			for b := 0; b < b1; b++ {
				row := t[(a*d1+b)*d : (a*d1+b+1)*d]
				if m.Kind == flow.Merged {
					wb := w.wt[(i*d1+b)*d : (i*d1+b+1)*d]
					for c := range row {
						row[c] += vi[a] * wb[c]
					}
					continue
				}
				vk := vi[a] * w.kt[k*d1+b]
				for c, qc := range w.q[k*d : (k+1)*d] {
					row[c] += vk * qc
				}
			}
		}
	}
}

// coeffs writes C (du × D, row-major) from T.
func (f *featureMap) coeffs(t, c []float64) {
	d, d1 := f.d, f.d+1
	if f.pairs == nil {
		copy(c, t[(d*d1)*d:(d*d1+d)*d]) // M_bc = T_{D,b,c}
		return
	}
	for p, ab := range f.pairs {
		a, b := ab[0], ab[1]
		row := c[p*d : (p+1)*d]
		copy(row, t[(a*d1+b)*d:(a*d1+b+1)*d])
		if a != b {
			for k, x := range t[(b*d1+a)*d : (b*d1+a+1)*d] {
				row[k] += x
			}
		}
	}
}

// gradTensor writes ∂L/∂T from ∂L/∂C: each T_abc enters the coefficient of
// the pair {a, b} once.
func (f *featureMap) gradTensor(dc, dt []float64) {
	d, d1 := f.d, f.d+1
	clear(dt)
	if f.pairs == nil {
		copy(dt[(d*d1)*d:(d*d1+d)*d], dc)
		return
	}
	for a := 0; a < d1; a++ {
		for b := 0; b < d1; b++ {
			p := f.pairOf[a*d1+b]
			copy(dt[(a*d1+b)*d:(a*d1+b+1)*d], dc[p*d:(p+1)*d])
		}
	}
}

// pullback adds to g the gradient with respect to the weights w of a loss
// whose gradient with respect to T is dt (the chain rule through the
// products that define T).
func (f *featureMap) pullback(w *weights, dt []float64, g *weights, fb []float64) {
	m, d, d1 := f.m, f.d, f.d+1
	a0, b1 := f.tensorRange()
	for k := 0; k < m.hr(); k++ {
		i := k
		if m.Kind == flow.Separate {
			i = k / m.R
		}
		vi, gv := w.vt[i*d1:(i+1)*d1], g.vt[i*d1:(i+1)*d1]
		if m.Kind == flow.Merged {
			wi, gw := w.wt[i*d1*d:(i+1)*d1*d], g.wt[i*d1*d:(i+1)*d1*d]
			for a := a0; a < d1; a++ {
				for b := 0; b < b1; b++ {
					dtab := dt[(a*d1+b)*d : (a*d1+b+1)*d]
					for c, x := range dtab {
						gv[a] += x * wi[b*d+c]
						gw[b*d+c] += vi[a] * x
					}
				}
			}
			continue
		}
		pullbackPair(w, g, k, vi, gv, dt, a0, b1, d, fb)
	}
}

// pullbackPair is the separate model's chain rule for the pair k = i·R + r:
// with E_ab = Σ_c ∂T_abc q_c and F_bc = Σ_a v_a ∂T_abc,
// ∂k̃_b = Σ_a v_a E_ab, ∂v_a = Σ_b E_ab k̃_b, ∂q_c = Σ_b k̃_b F_bc.
func pullbackPair(w, g *weights, k int, vi, gv, dt []float64, a0, b1, d int, fb []float64) {
	d1 := d + 1
	kk, gk := w.kt[k*d1:(k+1)*d1], g.kt[k*d1:(k+1)*d1]
	qq, gq := w.q[k*d:(k+1)*d], g.q[k*d:(k+1)*d]
	clear(fb)
	for a := a0; a < d1; a++ {
		for b := 0; b < b1; b++ {
			dtab := dt[(a*d1+b)*d : (a*d1+b+1)*d]
			var s float64
			for c, x := range dtab {
				s += x * qq[c]
				fb[b*d+c] += vi[a] * x
			}
			gk[b] += vi[a] * s
			gv[a] += s * kk[b]
		}
	}
	for b := 0; b < b1; b++ {
		for c := 0; c < d; c++ {
			gq[c] += kk[b] * fb[b*d+c]
		}
	}
}
