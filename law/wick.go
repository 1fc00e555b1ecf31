package law

import (
	"fmt"
	"math"
)

// taskStats are the moments of a sequence's law over its task vector w
// that the feature moments need (docs/math.md, "The full layer"): with Σ̃
// the covariance of a context column x̃ = (x, y) given w,
//
//	es = E[Σ̃],  ess = E[Σ̃ ⊗ Σ̃],  esw = E[Σ̃ ⊗ w],  wbar = E[w],  ywy = E[y_q²],
//
// every index of Σ̃ in 0..D (D the label), row-major; all from the task
// moments (TaskMoments).
type taskStats struct {
	d, d1              int
	lam                []float64 // Λ, D×D
	es, ess, esw, wbar []float64
	ywy                float64
}

func newTaskStats(lam []float64, d int, m *TaskMoments) *taskStats {
	d1 := d + 1
	s := &taskStats{d: d, d1: d1, lam: lam,
		es: make([]float64, d1*d1), ess: make([]float64, d1*d1*d1*d1),
		esw: make([]float64, d1*d1*d), wbar: append([]float64(nil), m.Mean...)}
	lmu := mulVec(lam, m.Mean, d)
	lm := mulMat(lam, m.Second, d)
	lml := mulMat(lm, lam, d)
	lt := mulVec(lam, m.Third, d)
	for a := 0; a < d1; a++ {
		for b := 0; b < d1; b++ {
			ab := a*d1 + b
			s.es[ab] = s.sigma(m, lmu, a, b)
			for c := 0; c < d1; c++ {
				for e := 0; e < d1; e++ {
					s.ess[ab*d1*d1+c*d1+e] = s.pair(m, lmu, lml, lt, a, b, c, e)
				}
			}
			for k := 0; k < d; k++ {
				s.esw[ab*d+k] = s.sigmaW(m, lm, a, b, k)
			}
		}
	}
	s.ywy = m.Quad + m.Noise
	return s
}

// label reports whether index a of x̃ is the label.
func (s *taskStats) label(a int) bool { return a == s.d }

// essAt returns E[Σ̃_ab Σ̃_ce].
func (s *taskStats) essAt(a, b, c, e int) float64 {
	d1 := s.d1
	return s.ess[((a*d1+b)*d1+c)*d1+e]
}

// sigma is E[Σ̃_ab], Σ̃ the covariance of a context column x̃ = (x, y) given
// w: Λ_ab, (Λw)_i with one label index (0 for independent labels), and
// wᵀΛw + σ² (LabelVar) for the label's variance.
func (s *taskStats) sigma(m *TaskMoments, lmu []float64, a, b int) float64 {
	switch la, lb := s.label(a), s.label(b); {
	case !la && !lb:
		return s.lam[a*s.d+b]
	case la && lb && m.Independent:
		return m.LabelVar
	case la && lb:
		return m.Quad + m.Noise
	case m.Independent:
		return 0
	}
	return lmu[min(a, b)]
}

// pair is E[Σ̃_ab Σ̃_ce] by the number of label indices in each factor:
// Σ̃_ij = Λ_ij, Σ̃_iD = (Λw)_i, Σ̃_DD = wᵀΛw + σ²; for independent context
// labels Σ̃ is constant.
func (s *taskStats) pair(m *TaskMoments, lmu, lml, lt []float64, a, b, c, e int) float64 {
	if m.Independent {
		return s.sigma(m, lmu, a, b) * s.sigma(m, lmu, c, e)
	}
	d := s.d
	n1 := btoi(s.label(a)) + btoi(s.label(b))
	n2 := btoi(s.label(c)) + btoi(s.label(e))
	i, k := min(a, b), min(c, e)
	q := m.Quad + m.Noise
	switch {
	case n1 == 0 && n2 == 0:
		return s.lam[a*d+b] * s.lam[c*d+e]
	case n1 == 0 && n2 == 1:
		return s.lam[a*d+b] * lmu[k]
	case n1 == 1 && n2 == 0:
		return lmu[i] * s.lam[c*d+e]
	case n1 == 0 && n2 == 2:
		return s.lam[a*d+b] * q
	case n1 == 2 && n2 == 0:
		return q * s.lam[c*d+e]
	case n1 == 1 && n2 == 1: // E[(Λw)_i (Λw)_k] = (ΛE[wwᵀ]Λ)_ik
		return lml[i*d+k]
	case n1 == 1 && n2 == 2: // E[(Λw)_i (wᵀΛw + σ²)]
		return lt[i] + m.Noise*lmu[i]
	case n1 == 2 && n2 == 1:
		return lt[k] + m.Noise*lmu[k]
	}
	// E[(wᵀΛw + σ²)²]
	return m.Fourth + 2*m.Noise*m.Quad + m.Noise*m.Noise
}

// sigmaW is E[Σ̃_ab w_k]: Λ_ab E[w_k], (ΛE[wwᵀ])_ik with one label index,
// E[(wᵀΛw) w_k] + σ² E[w_k] for the label's variance; for independent
// context labels Σ̃_ab E[w_k].
func (s *taskStats) sigmaW(m *TaskMoments, lm []float64, a, b, k int) float64 {
	if m.Independent {
		return s.sigma(m, nil, a, b) * m.Mean[k]
	}
	switch la, lb := s.label(a), s.label(b); {
	case !la && !lb:
		return s.lam[a*s.d+b] * m.Mean[k]
	case la && lb:
		return m.Third[k] + m.Noise*m.Mean[k]
	}
	return lm[min(a, b)*s.d+k]
}

// mulMat returns the product of the d×d matrices x and y, row-major.
func mulMat(x, y []float64, d int) []float64 {
	out := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for k := 0; k < d; k++ {
			var s float64
			for n := 0; n < d; n++ {
				s += x[i*d+n] * y[n*d+k]
			}
			out[i*d+k] = s
		}
	}
	return out
}

// mulVec returns the product of the d×d matrix x and the vector v.
func mulVec(x, v []float64, d int) []float64 {
	out := make([]float64, d)
	for i := range out {
		for n, vn := range v {
			out[i] += x[i*d+n] * vn
		}
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// perfectMatchings6 lists the 15 ways to pair six indices, for Isserlis'
// theorem: E[x_1 ⋯ x_6] = Σ over matchings of the product of covariances.
var perfectMatchings6 = matchings([]int{0, 1, 2, 3, 4, 5})

func matchings(idx []int) [][][2]int {
	if len(idx) == 0 {
		return [][][2]int{nil}
	}
	var out [][][2]int
	for j := 1; j < len(idx); j++ {
		rest := append(append([]int(nil), idx[1:j]...), idx[j+1:]...)
		for _, m := range matchings(rest) {
			out = append(out, append([][2]int{{idx[0], idx[j]}}, m...))
		}
	}
	return out
}

// wick forms the feature moments of one population from its task
// statistics: the query x̃_q = (x_q, 0) is a Gaussian with covariance Γ,
// Γ_ab = Λ_ab for token indices and 0 with the label.
type wick struct {
	*taskStats
	nu, nu2 float64
}

// gamma is Γ_ab = E[x̃_qa x̃_qb].
func (w *wick) gamma(a, b int) float64 {
	if a == w.d || b == w.d {
		return 0
	}
	return w.lam[a*w.d+b]
}

// q4 is E[x̃_qa x̃_qb x_qc x_qe] (Isserlis).
func (w *wick) q4(a, b, c, e int) float64 {
	return w.gamma(a, b)*w.gamma(c, e) + w.gamma(a, c)*w.gamma(b, e) + w.gamma(a, e)*w.gamma(b, c)
}

// q6 is E[x̃_qi₁ ⋯ x̃_qi₆] (Isserlis: fifteen matchings).
func (w *wick) q6(idx *[6]int) float64 {
	var sum float64
	for _, m := range perfectMatchings6 {
		p := 1.0
		for _, pr := range m {
			if p *= w.gamma(idx[pr[0]], idx[pr[1]]); p == 0 {
				break
			}
		}
		sum += p
	}
	return sum
}

// zz is E[S_ab S_ce x_qf x_qg] (docs/math.md, eq. (F1)): with
// S = P + Q/n, P = (1/n) Σ_j x̃_j x̃_jᵀ the context part (Wishart given w:
// E[P] = Σ̃, Cov(P_ab, P_ce) = (Σ̃_ac Σ̃_be + Σ̃_ae Σ̃_bc)/n) and Q = x̃_q x̃_qᵀ,
//
//	(E[Σ̃_ab Σ̃_ce] + ν(E[Σ̃_ac Σ̃_be] + E[Σ̃_ae Σ̃_bc])) Λ_fg
//	+ ν (E[Σ̃_ab] q4(c,e,f,g) + E[Σ̃_ce] q4(a,b,f,g)) + ν₂ q6(a,b,c,e,f,g).
func (w *wick) zz(a, b, c, e, f, g int) float64 {
	v := (w.essAt(a, b, c, e) + w.nu*(w.essAt(a, c, b, e)+w.essAt(a, e, b, c))) * w.lam[f*w.d+g]
	v += w.nu * (w.es[a*w.d1+b]*w.q4(c, e, f, g) + w.es[c*w.d1+e]*w.q4(a, b, f, g))
	if w.nu2 != 0 && !w.label(a) && !w.label(b) && !w.label(c) && !w.label(e) {
		v += w.nu2 * w.q6(&[6]int{a, b, c, e, f, g})
	}
	return v
}

// yz is E[y_q S_ab x_qc] with y_q = wᵀx_q (docs/math.md, eq. (F2)):
// Σ_m Λ_cm E[Σ̃_ab w_m] + ν(Γ_bc (Λw̄)_a + Γ_ac (Λw̄)_b + Γ_ab (Λw̄)_c),
// with w̄ = E[w] and (Λw̄)_D = 0.
func (w *wick) yz(a, b, c int, lwbar []float64) float64 {
	d := w.d
	var v float64
	for m := 0; m < d; m++ {
		v += w.lam[c*d+m] * w.esw[(a*w.d1+b)*d+m]
	}
	lw := func(i int) float64 {
		if i == d {
			return 0
		}
		return lwbar[i]
	}
	return v + w.nu*(w.gamma(b, c)*lw(a)+w.gamma(a, c)*lw(b)+w.gamma(a, b)*lw(c))
}

// populationMoments returns the exact moments of the features
// z = u ⊗ x_q of a layer over a population (docs/math.md, "The full
// layer"), in the basis in which Λ (lam, D×D row-major) and the tasks are
// given. pairs are the entries (a, b) of S that u holds.
func populationMoments(lam []float64, d int, nu, nu2 float64, tm *TaskMoments, pairs [][2]int) *Moments {
	w := &wick{taskStats: newTaskStats(lam, d, tm), nu: nu, nu2: nu2}
	if math.IsNaN(nu2) {
		w.nu2 = 0 // only the reduced layer's features, whose q6 terms vanish
	}
	np := len(pairs)
	f := np * d
	mo := NewMoments(f)
	lwbar := make([]float64, d)
	for i := 0; i < d; i++ {
		for m := 0; m < d; m++ {
			lwbar[i] += lam[i*d+m] * w.wbar[m]
		}
	}
	for p, ab := range pairs {
		for c := 0; c < d; c++ {
			i := p*d + c
			mo.YZ[i] = w.yz(ab[0], ab[1], c, lwbar)
			for p2 := p; p2 < np; p2++ {
				ce := pairs[p2]
				for g := 0; g < d; g++ {
					j := p2*d + g
					if j < i {
						continue
					}
					v := w.zz(ab[0], ab[1], ce[0], ce[1], c, g)
					mo.ZZ[i*f+j], mo.ZZ[j*f+i] = v, v
				}
			}
		}
	}
	mo.YY = w.ywy
	return mo
}

// checkFeatures checks a population and the entries pairs of S whose
// products with x_q are the features (Moments, Operator).
func (d *Data) checkFeatures(pairs [][2]int, set Sequences) error {
	if err := d.checkSet(set); err != nil {
		return err
	}
	n := d.Dim()
	for _, p := range pairs {
		if p[0] < 0 || p[1] < 0 || p[0] > n || p[1] > n {
			return fmt.Errorf("law: feature pair (%d, %d) out of range 0..D = %d", p[0], p[1], n)
		}
		if math.IsNaN(d.nu2) && p[0] != n && p[1] != n {
			return fmt.Errorf("law: the features of S's token block need E[1/N²], not only ν = %g: give the context lengths (Data.WithLengths)", d.nu)
		}
	}
	return nil
}

// Moments returns the exact moments of the features z = u ⊗ x_q over the
// population set (docs/math.md, "The full layer"), u the entries pairs of
// S = XXᵀ/n (index D the label; a layer's Pairs), in the eigenbasis of Λ
// (eigen) or the original basis, in the order of pairs: the quadratic
// form of the population loss (Training) or of a test loss in the
// coefficients of a linear model ŷ = cᵀz. Features with an entry of S
// other than the label column need the context lengths themselves
// (WithLengths), not only ν.
func (d *Data) Moments(pairs [][2]int, set Sequences, eigen bool) (*Moments, error) {
	if err := d.checkFeatures(pairs, set); err != nil {
		return nil, err
	}
	n := d.Dim()
	lam := d.basisLambda(eigen)
	mo := populationMoments(lam, n, d.nu, d.nu2, d.taskMoments(set, lam, eigen), pairs)
	if eigen {
		mo.Compress()
	}
	return mo, nil
}
