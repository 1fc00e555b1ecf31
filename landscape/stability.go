package landscape

import (
	"fmt"
	"math"
	"sort"

	"github.com/linattn/linattn/flow"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Class is the kind of a fixed point.
type Class int

const (
	// Minimum: no positive Jacobian eigenvalue and no escape through a
	// dormant head (a local minimum up to third order; Stability.Global
	// says whether it is the global one).
	Minimum Class = iota
	// StrictSaddle: the Jacobian has a positive eigenvalue, so the point is
	// linearly unstable.
	StrictSaddle
	// HigherOrderSaddle: linearly marginal, but a dormant head escapes at
	// third order (docs/math.md "Fixed points": along (v, k, q) = ε(1, e_d, e_d),
	// d ∉ S, τ dv/dt ≈ λ_d² v²): the plateaus of saddle-to-saddle dynamics.
	HigherOrderSaddle
)

func (c Class) String() string {
	switch c {
	case Minimum:
		return "minimum"
	case StrictSaddle:
		return "strict saddle"
	case HigherOrderSaddle:
		return "higher-order saddle"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Escape is a third-order escape direction through a dormant head.
type Escape struct {
	Head  int     // an all-zero head
	Eigen int     // 0-based index d of the unlearned eigenvector e_{d+1}
	Rate  float64 // λ_d²/τ: τ dv/dt ≈ λ_d² v² along (v, k, q) = ε(1, e_d, e_d)
}

// Stability is the local analysis of a fixed point.
type Stability struct {
	// Residual is ‖dy/dt‖ at the configuration (≈ 0 at a fixed point).
	Residual float64
	// JacobianEigenvalues are the eigenvalues of the flow's Jacobian,
	// ascending; HessianEigenvalues those of ∇²L = −2τJ, ascending.
	JacobianEigenvalues []float64
	HessianEigenvalues  []float64
	// Positive, Zero and Negative count the Jacobian eigenvalues above Tol,
	// within ±Tol and below −Tol; Tol = 1e-8 · max(max|μ|, λ_1²/τ).
	Positive, Zero, Negative int
	Tol                      float64
	// UnstableRate is the largest Jacobian eigenvalue if positive, else 0.
	UnstableRate float64
	// MaxAsymmetry is the largest |J_ij − J_ji| before symmetrization.
	MaxAsymmetry float64
	Escapes      []Escape
	Class        Class
	// Global reports whether the loss equals the global minimum L*.
	Global bool
}

// Analyze computes the stability of the configuration y (original basis) of
// s, a fixed point whose learned eigenvectors (0-based) are `learned`; the
// set matters only for the escape directions of the separate model.
func Analyze(s *flow.System, y []float64, learned []int) (*Stability, error) {
	if len(y) != s.Len() {
		return nil, fmt.Errorf("landscape: state has length %d, want %d", len(y), s.Len())
	}
	ye := s.ToEigen(nil, y)
	st := &Stability{}
	dy := make([]float64, s.Len())
	s.DerivEigen(dy, ye)
	st.Residual = floats.Norm(dy, 2)
	jac, asym := Jacobian(s, ye)
	st.MaxAsymmetry = asym
	var eig mat.EigenSym
	if !eig.Factorize(jac, false) {
		return nil, fmt.Errorf("landscape: eigendecomposition of the Jacobian failed")
	}
	mu := eig.Values(nil)
	sort.Float64s(mu)
	st.JacobianEigenvalues = mu
	tau := s.Model.Tau
	st.HessianEigenvalues = make([]float64, len(mu))
	for i, m := range mu {
		st.HessianEigenvalues[len(mu)-1-i] = -2 * tau * m
	}
	scale := s.Data.Lambda()[0] * s.Data.Lambda()[0] / tau
	for _, m := range mu {
		scale = math.Max(scale, math.Abs(m))
	}
	st.Tol = 1e-8 * scale
	for _, m := range mu {
		switch {
		case m > st.Tol:
			st.Positive++
		case m < -st.Tol:
			st.Negative++
		default:
			st.Zero++
		}
	}
	if top := mu[len(mu)-1]; top > st.Tol {
		st.UnstableRate = top
	}
	if s.Model.Kind == flow.Separate {
		st.Escapes = escapes(s, ye, learned)
	}
	switch {
	case st.Positive > 0:
		st.Class = StrictSaddle
	case len(st.Escapes) > 0:
		st.Class = HigherOrderSaddle
	default:
		st.Class = Minimum
	}
	st.Global = math.Abs(s.LossEigen(ye)-s.Data.MinLoss()) <= 1e-12*math.Max(1, s.Data.MinLoss())
	return st, nil
}

// escapes lists, for every all-zero head and every eigenvector outside the
// learned set, the third-order escape rate λ_d²/τ.
func escapes(s *flow.System, ye []float64, learned []int) []Escape {
	in := map[int]bool{}
	for _, e := range learned {
		in[e] = true
	}
	h, r, d := s.Model.H, s.Model.R, s.Dim()
	hr := h * r
	var out []Escape
	for i := 0; i < h; i++ {
		dormant := ye[i] == 0
		for rr := 0; rr < r && dormant; rr++ {
			row := i*r + rr
			for _, off := range []int{h + row*d, h + hr*d + row*d} {
				for _, x := range ye[off : off+d] {
					if x != 0 {
						dormant = false
					}
				}
			}
		}
		if !dormant {
			continue
		}
		for e := 0; e < d; e++ {
			if !in[e] {
				l := s.Data.Lambda()[e]
				out = append(out, Escape{Head: i, Eigen: e, Rate: l * l / s.Model.Tau})
			}
		}
	}
	return out
}

// Point is a fixed point of the separate model with its analysis.
type Point struct {
	Subset
	Realization Realization
	State       []float64 // configuration, original basis
	Stability   *Stability
	// Alternatives are the other realizations of M(S) (Alternatives),
	// analyzed: with R > 1 the packed point training visits and the
	// one-per-head point can differ in stability.
	Alternatives []*Point
}

// AnalyzeSubset builds the configuration that training reaches for mask
// (Configuration, packed) and analyzes it, and each alternative
// realization.
func AnalyzeSubset(s *flow.System, mask uint64) (*Point, error) {
	p, err := analyzeRealization(s, mask, Packed)
	if err != nil {
		return nil, err
	}
	for _, how := range Alternatives(s, mask) {
		alt, err := analyzeRealization(s, mask, how)
		if err != nil {
			return nil, err
		}
		p.Alternatives = append(p.Alternatives, alt)
	}
	return p, nil
}

func analyzeRealization(s *flow.System, mask uint64, how Realization) (*Point, error) {
	sub, err := SubsetOf(s.Data, mask)
	if err != nil {
		return nil, err
	}
	y, err := Realize(s, mask, how)
	if err != nil {
		return nil, err
	}
	st, err := Analyze(s, y, Indices(mask))
	if err != nil {
		return nil, err
	}
	return &Point{Subset: sub, Realization: how, State: y, Stability: st}, nil
}
