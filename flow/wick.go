package flow

import (
	"fmt"
	"math"
)

// Sequences names a population of sequences whose feature moments
// Data.Moments forms (docs/math.md, "The full layer"; the test sets are
// those of docs/training.md, "Data").
type Sequences int

const (
	// Training is the law of the training sequences: Data.Tasks.
	Training Sequences = iota
	// InContextTest sequences each have a fresh w ~ N(0, I).
	InContextTest
	// InWeightTest sequences have their query labeled by a fixed task (one
	// of Tasks.Fixed, uniformly) and context labels independent of the
	// tokens, N(0, tr Λ): only weights that memorized the task predict it.
	InWeightTest
)

func (s Sequences) String() string {
	switch s {
	case Training:
		return "training"
	case InContextTest:
		return "in-context test"
	case InWeightTest:
		return "in-weight test"
	}
	return fmt.Sprintf("Sequences(%d)", int(s))
}

// taskStats are the moments of a sequence's law over its task vector w
// that the feature moments need (docs/math.md, "The full layer"): with Σ̃
// the covariance of a context column x̃ = (x, y) given w,
//
//	es = E[Σ̃],  ess = E[Σ̃ ⊗ Σ̃],  esw = E[Σ̃ ⊗ w],  wbar = E[w],  ywy = E[wᵀΛw],
//
// every index of Σ̃ in 0..D (D the label), row-major.
type taskStats struct {
	d, d1              int
	lam                []float64 // Λ, D×D
	es, ess, esw, wbar []float64
	ywy                float64
	trLam, trLam2      float64
	sigma, lamW        []float64 // scratch: Σ̃ of one task, Λw
}

func newTaskStats(lam []float64, d int, tasks Tasks, set Sequences) *taskStats {
	d1 := d + 1
	s := &taskStats{d: d, d1: d1, lam: lam,
		es: make([]float64, d1*d1), ess: make([]float64, d1*d1*d1*d1),
		esw: make([]float64, d1*d1*d), wbar: make([]float64, d),
		sigma: make([]float64, d1*d1), lamW: make([]float64, d)}
	for i := 0; i < d; i++ {
		s.trLam += lam[i*d+i]
		for j := 0; j < d; j++ {
			s.trLam2 += lam[i*d+j] * lam[j*d+i]
		}
	}
	switch set {
	case Training:
		s.addGaussian(tasks.ICL)
		for _, w := range tasks.Fixed {
			s.addFixed((1-tasks.ICL)/float64(len(tasks.Fixed)), w)
		}
	case InContextTest:
		s.addGaussian(1)
	case InWeightTest:
		for _, w := range tasks.Fixed {
			s.addInWeight(1/float64(len(tasks.Fixed)), w)
		}
	}
	return s
}

// label reports whether index a of x̃ is the label.
func (s *taskStats) label(a int) bool { return a == s.d }

// essAt returns E[Σ̃_ab Σ̃_ce].
func (s *taskStats) essAt(a, b, c, e int) float64 {
	d1 := s.d1
	return s.ess[((a*d1+b)*d1+c)*d1+e]
}

// addGaussian adds weight wt of w ~ N(0, I): Σ̃ = [[Λ, Λw], [wᵀΛ, wᵀΛw]],
// whose moments follow from E[w] = 0, E[wwᵀ] = I and Isserlis' theorem,
// E[(wᵀΛw)²] = (tr Λ)² + 2 tr Λ².
func (s *taskStats) addGaussian(wt float64) {
	if wt == 0 {
		return
	}
	d, d1 := s.d, s.d1
	for a := 0; a < d1; a++ {
		for b := 0; b < d1; b++ {
			s.es[a*d1+b] += wt * s.gaussSigma(a, b)
			for c := 0; c < d1; c++ {
				for e := 0; e < d1; e++ {
					s.ess[((a*d1+b)*d1+c)*d1+e] += wt * s.gaussPair(a, b, c, e)
				}
			}
			// E[Σ̃_ab w_m] is E[(Λw)_i w_m] = Λ_im when exactly one of a, b is
			// the label, with i the other; 0 otherwise (odd in w).
			if s.label(a) != s.label(b) {
				i := min(a, b)
				for m := 0; m < d; m++ {
					s.esw[(a*d1+b)*d+m] += wt * s.lam[i*d+m]
				}
			}
		}
	}
	s.ywy += wt * s.trLam
}

// gaussSigma is E[Σ̃_ab] for w ~ N(0, I): Λ_ab, tr Λ for the label's
// variance, 0 for the covariance of a token with its label.
func (s *taskStats) gaussSigma(a, b int) float64 {
	switch la, lb := s.label(a), s.label(b); {
	case !la && !lb:
		return s.lam[a*s.d+b]
	case la && lb:
		return s.trLam
	}
	return 0
}

// gaussPair is E[Σ̃_ab Σ̃_ce] for w ~ N(0, I), by the number of label
// indices in each factor: Σ̃_ij = Λ_ij, Σ̃_iD = (Λw)_i, Σ̃_DD = wᵀΛw.
func (s *taskStats) gaussPair(a, b, c, e int) float64 {
	d := s.d
	n1 := btoi(s.label(a)) + btoi(s.label(b))
	n2 := btoi(s.label(c)) + btoi(s.label(e))
	switch {
	case n1 == 0 && n2 == 0:
		return s.lam[a*d+b] * s.lam[c*d+e]
	case n1 == 0 && n2 == 2:
		return s.lam[a*d+b] * s.trLam
	case n1 == 2 && n2 == 0:
		return s.trLam * s.lam[c*d+e]
	case n1 == 1 && n2 == 1: // E[(Λw)_i (Λw)_k] = (Λ²)_ik
		i, k := min(a, b), min(c, e)
		var l2 float64
		for m := 0; m < d; m++ {
			l2 += s.lam[i*d+m] * s.lam[m*d+k]
		}
		return l2
	case n1 == 2 && n2 == 2:
		return s.trLam*s.trLam + 2*s.trLam2
	}
	return 0 // an odd power of w
}

// addFixed adds weight wt of the fixed task w: Σ̃ = [[Λ, Λw], [wᵀΛ, wᵀΛw]].
func (s *taskStats) addFixed(wt float64, w []float64) {
	d, d1 := s.d, s.d1
	lw := s.lamW
	var wlw float64
	for i := 0; i < d; i++ {
		lw[i] = 0
		for m := 0; m < d; m++ {
			lw[i] += s.lam[i*d+m] * w[m]
		}
		wlw += w[i] * lw[i]
	}
	sig := s.sigma
	for i := 0; i < d; i++ {
		copy(sig[i*d1:i*d1+d], s.lam[i*d:(i+1)*d])
		sig[i*d1+d], sig[d*d1+i] = lw[i], lw[i]
	}
	sig[d*d1+d] = wlw
	s.addPoint(wt, w, wlw)
}

// addInWeight adds weight wt of the in-weight test with the task w:
// context columns (x, ξ) with ξ ~ N(0, tr Λ) independent of x, so that
// Σ̃ = [[Λ, 0], [0, tr Λ]], and the query labeled y_q = wᵀx_q.
func (s *taskStats) addInWeight(wt float64, w []float64) {
	d, d1 := s.d, s.d1
	sig := s.sigma
	clear(sig)
	for i := 0; i < d; i++ {
		copy(sig[i*d1:i*d1+d], s.lam[i*d:(i+1)*d])
	}
	sig[d*d1+d] = s.trLam
	var wlw float64
	for i := 0; i < d; i++ {
		for m := 0; m < d; m++ {
			wlw += w[i] * s.lam[i*d+m] * w[m]
		}
	}
	s.addPoint(wt, w, wlw)
}

// addPoint adds weight wt of the deterministic Σ̃ in s.sigma with the
// query's task w and E[y_q²] = wᵀΛw.
func (s *taskStats) addPoint(wt float64, w []float64, wlw float64) {
	d, d1 := s.d, s.d1
	sig := s.sigma
	for ab, x := range sig {
		s.es[ab] += wt * x
		row := s.ess[ab*d1*d1 : (ab+1)*d1*d1]
		for ce, y := range sig {
			row[ce] += wt * x * y
		}
		for m, wm := range w {
			s.esw[ab*d+m] += wt * x * wm
		}
	}
	for m, wm := range w {
		s.wbar[m] += wt * wm
	}
	s.ywy += wt * wlw
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
func populationMoments(lam []float64, d int, nu, nu2 float64, tasks Tasks, set Sequences, pairs [][2]int) *Moments {
	w := &wick{taskStats: newTaskStats(lam, d, tasks, set), nu: nu, nu2: nu2}
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

// Moments returns the exact moments of the features of layer over the
// population set (docs/math.md, "The full layer"), in the original basis
// and the order of Coefficients: the quadratic form of the population loss
// (Training) or of a test loss in the coefficients c(θ). The full layer
// needs the context lengths themselves (WithLengths), not only ν.
func (d *Data) Moments(layer Layer, set Sequences) (*Moments, error) {
	if err := d.checkMoments(layer, set); err != nil {
		return nil, err
	}
	lam := d.Covariance().RawMatrix().Data
	return populationMoments(lam, d.Dim(), d.nu, d.nu2, d.tasks, set, layer.pairs(d.Dim())), nil
}

func (d *Data) checkMoments(layer Layer, set Sequences) error {
	switch {
	case layer != ReducedLayer && layer != FullLayer:
		return fmt.Errorf("flow: Layer = %d, want ReducedLayer or FullLayer", int(layer))
	case set < Training || set > InWeightTest:
		return fmt.Errorf("flow: Sequences = %d, want Training, InContextTest or InWeightTest", int(set))
	case layer == FullLayer && math.IsNaN(d.nu2):
		return fmt.Errorf("flow: the full layer's moments need E[1/N²], not only ν = %g: give the context lengths (Data.WithLengths)", d.nu)
	case set == InWeightTest && len(d.tasks.Fixed) == 0:
		return fmt.Errorf("flow: the in-weight test needs fixed task vectors (Data.WithTasks)")
	}
	return nil
}
