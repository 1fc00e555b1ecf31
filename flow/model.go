package flow

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/flow/internal/gemm"
	"github.com/linattn/linattn/internal/choice"
	"github.com/linattn/linattn/law"
)

// Kind is the parametrization of the attention heads. Its zero value is
// no kind: NewSystem refuses it, naming the two.
type Kind int

const (
	// Merged is ATTN_M: ŷ = Σ_i v_i βᵀ U_i x_q (paper eq. M).
	Merged Kind = iota + 1
	// Separate is ATTN_S with rank-R keys and queries:
	// ŷ = Σ_i Σ_r v_i βᵀ k_{i,r} q_{i,r}ᵀ x_q (paper eq. S).
	Separate
)

// Kinds returns every kind, in the order of -model's help.
func Kinds() []Kind { return []Kind{Separate, Merged} }

func (k Kind) String() string {
	switch k {
	case Merged:
		return "merged"
	case Separate:
		return "separate"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// MarshalText writes the kind's name; the zero Kind has none.
func (k Kind) MarshalText() ([]byte, error) { return choice.Text(k, "model", Kinds()) }

// UnmarshalText parses a kind's name: separate or merged.
func (k *Kind) UnmarshalText(text []byte) error {
	v, err := choice.Parse(text, "model", Kinds())
	if err == nil {
		*k = v
	}
	return err
}

// Model describes the attention layer and the time constant of the flow.
type Model struct {
	Kind Kind
	H    int     // number of heads, ≥ 1
	R    int     // rank of keys and queries (Separate only), 1 ≤ R ≤ D
	Tau  float64 // time constant τ > 0 of τ dW/dt = −½ ∂L/∂W; 0 means 1
	// Layer is ReducedLayer (the zero value: the paper's reduction),
	// FullLayer (every block that enters the prediction) or LabelKeyLayer
	// (the reduction with keys that read the labels).
	Layer Layer
	// Layers is the depth L of a stack of reduced layers on a residual
	// stream, each one step of preconditioned gradient descent on the
	// context (docs/math.md, "Depth"): 0 or 1 is the one layer of the
	// paper, L ≥ 2 (up to law.MaxStackLayers) a stack, whose state holds
	// the heads of every layer one after the other.
	Layers int
	// Tied shares one set of heads between the L ≥ 2 layers (the looped
	// transformer): the state holds one layer's heads.
	Tied bool
}

// Depth returns the number of layers L ≥ 1.
func (m Model) Depth() int { return max(1, m.Layers) }

// HeadSets returns the number of sets of heads the state holds: one per
// layer, or one when they are tied.
func (m Model) HeadSets() int {
	if m.Tied {
		return 1
	}
	return m.Depth()
}

// System is the population gradient flow of one model on one task.
//
// # State layout
//
// The state is one flat vector. Merged (length H + H·D²):
//
//	[v_1 … v_H | U_1 | U_2 | … | U_H],  U_i row-major D×D.
//
// Separate (length H + 2·H·R·D):
//
//	[v_1 … v_H | k_{1,1} … k_{1,R} k_{2,1} … k_{H,R} | q_{1,1} … q_{H,R}],
//
// each k and q a D-vector; K and Q are (H·R)×D row-major with row i·R + r.
// This is numpy's C order for arrays of shape (H,), (H, D, D) or (H, R, D).
//
// # Coordinates
//
// The flow is integrated in the eigenbasis of Λ, where Λ and A are diagonal
// (docs/math.md, "Population loss and flow"): k' = Vᵀk, q' = Vᵀq, U' = VᵀUV,
// v' = v. The methods whose names end in Eigen take states in these eigen
// coordinates; ToEigen and FromEigen convert, and every user-facing input
// and output (Init, Run's trajectories, Loss, Map) is in the original basis.
type System struct {
	Data  *law.Data
	Model Model

	d, n int
	// ExpressivityLimited reports R·H < D for the separate model: the layer
	// cannot represent every map and the global minimum is not reachable.
	// Under fixed tasks the full layer is limited unless H ≥ D + 1 (and
	// R = D, separate): only then can it take any coefficients
	// (docs/math.md, "Least loss"), and its least loss is not known.
	ExpressivityLimited bool

	// lam, a and lam2 are λ_d, a_d (Data.AEigenvalues) and λ_d²; trace
	// is tr Λ.
	lam, a, lam2 []float64
	trace        float64
	scr          scratch
	law          taskLaw    // what the task law changes (tasklaw.go)
	rotTo        *mat.Dense // Vᵀ
	// vecs and vecsT are V and Vᵀ row-major (D × D), for rotate.
	vecs, vecsT []float64
	// outer is the full layer whose run from zero extra blocks this
	// reduced System integrates (reducedFor); nil otherwise.
	outer *System
	// stack is the flow of a stack of L ≥ 2 layers (stack.go); nil for
	// one layer.
	stack *stack
	plan  Plan
	// workers is the processors the evaluations of s may share their
	// work among, 0 for all of them: Run's RunSettings.Workers while it
	// runs (setWorkers).
	workers int
}

// NewSystem validates the model against the data.
func NewSystem(data *law.Data, m Model) (*System, error) {
	if data == nil {
		return nil, errors.New("flow: Data is nil")
	}
	d := data.Dim()
	if m.H < 1 {
		return nil, fmt.Errorf("flow: H = %d heads, want H ≥ 1", m.H)
	}
	if m.Tau == 0 {
		m.Tau = DefaultTau
	}
	if !(m.Tau > 0) || math.IsInf(m.Tau, 0) {
		return nil, fmt.Errorf("flow: Tau = %g, want a finite τ > 0 (0 for τ = 1)", m.Tau)
	}
	s := &System{Data: data, Model: m, d: d}
	switch m.Kind {
	case Merged:
		if m.R != 0 && m.R != 1 {
			return nil, fmt.Errorf("flow: R = %d is meaningless for the merged model, want 0", m.R)
		}
	case Separate:
		if m.R < 1 || m.R > d {
			return nil, fmt.Errorf("flow: R = %d, want 1 ≤ R ≤ D = %d", m.R, d)
		}
		s.ExpressivityLimited = m.R*m.H < d
	default:
		return nil, fmt.Errorf("flow: Kind = %d, want Merged or Separate", int(m.Kind))
	}
	if m.Layer != ReducedLayer && m.Layer != FullLayer && m.Layer != LabelKeyLayer {
		return nil, fmt.Errorf("flow: Layer = %d, want ReducedLayer, FullLayer or LabelKeyLayer", int(m.Layer))
	}
	if err := m.CheckDepth(); err != nil {
		return nil, err
	}
	s.n = m.flowLen(d) + m.extrasLen(d)
	s.lam, s.a, s.trace = data.Lambda(), data.AEigenvalues(), data.Trace()
	s.lam2 = square(s.lam)
	s.scr = newScratch(s)
	vecs := data.Vecs()
	s.rotTo = mat.DenseCopyOf(vecs.T())
	s.vecs = vecs.RawMatrix().Data
	s.vecsT = s.rotTo.RawMatrix().Data
	s.plan = PlanFor(m, data)
	if err := s.initTaskLaw(); err != nil {
		return nil, err
	}
	return s, nil
}

// Len returns the length of the state vector.
func (s *System) Len() int { return s.n }

// MinLoss returns the lowest loss the model can reach. For in-context
// data: L* for the merged model and for the separate model with R·H ≥ D,
// and L(M_{RH}) when R·H < D, as the layer's map has rank at most R·H and
// the best such fixed point learns the R·H leading eigenvectors (paper
// section sec:attnS-lowrank); the full layer's extra blocks cannot lower
// it (docs/math.md, "The full layer"). Under another task law: the least
// loss over every map of the layer (Moments.Minimum), NaN for an
// expressivity-limited reduced layer, whose least loss is not known.
func (s *System) MinLoss() float64 {
	if !s.plan.PaperTheory {
		return s.law.minLoss
	}
	lv := s.Data.PlateauLevels()
	if s.ExpressivityLimited {
		return lv[s.Model.R*s.Model.H]
	}
	return lv[s.d]
}

// Dim returns D.
func (s *System) Dim() int { return s.d }

// Values returns the value weights v_1..v_H, a view into y; for a stack,
// a copy of each layer's, layer after layer.
func (s *System) Values(y []float64) []float64 {
	h := s.Model.H
	if s.Model.HeadSets() == 1 {
		return y[:h]
	}
	size := s.Model.headsLen(s.d)
	out := make([]float64, 0, s.Model.HeadSets()*h)
	for off := 0; off < s.Model.flowLen(s.d); off += size {
		out = append(out, y[off:off+h]...)
	}
	return out
}

// HeadMatrix returns U_i as a D×D matrix viewing y (merged model).
func (s *System) HeadMatrix(y []float64, i int) *mat.Dense {
	s.must(Merged)
	off := s.Model.H + i*s.d*s.d
	return mat.NewDense(s.d, s.d, y[off:off+s.d*s.d])
}

// Keys returns K, the (H·R)×D matrix of key vectors viewing y (separate model).
func (s *System) Keys(y []float64) *mat.Dense {
	s.must(Separate)
	hr := s.Model.H * s.Model.R
	return mat.NewDense(hr, s.d, y[s.Model.H:s.Model.H+hr*s.d])
}

// Queries returns Q, the (H·R)×D matrix of query vectors viewing y.
func (s *System) Queries(y []float64) *mat.Dense {
	s.must(Separate)
	hr := s.Model.H * s.Model.R
	off := s.Model.H + hr*s.d
	return mat.NewDense(hr, s.d, y[off:off+hr*s.d])
}

func (s *System) must(k Kind) {
	if s.Model.Kind != k {
		panic(fmt.Sprintf("flow: %v view on a %v model", k, s.Model.Kind))
	}
}

func (s *System) checkLen(name string, y []float64) {
	if len(y) != s.n {
		panic(fmt.Sprintf("flow: len(%s) = %d, want %d", name, len(y), s.n))
	}
}

// ToEigen writes the eigen coordinates of the state y (original basis) into
// dst, which may be y itself.
func (s *System) ToEigen(dst, y []float64) []float64 { return s.rotate(dst, y, true) }

// FromEigen writes the original-basis state of y (eigen coordinates) into
// dst, which may be y itself.
func (s *System) FromEigen(dst, y []float64) []float64 { return s.rotate(dst, y, false) }

func (s *System) rotate(dst, y []float64, toEigen bool) []float64 {
	s.checkLen("y", y)
	if dst == nil {
		dst = make([]float64, s.n)
	}
	s.checkLen("dst", dst)
	h := s.Model.H
	in := s.scr.rot[:s.n]
	copy(in, y) // dst may be y
	// Rows x ↦ xV map original → eigen (x' = Vᵀx as a row: xᵀV); V is
	// orthogonal, so Vᵀ maps back.
	v, vt := s.vecs, s.vecsT
	if !toEigen {
		v, vt = vt, v
	}
	d, size := s.d, s.Model.headsLen(s.d)
	for off := 0; off < s.Model.flowLen(d); off += size {
		copy(dst[off:off+h], in[off:off+h])
		s.rotateHeads(dst[off+h:off+size], in[off+h:off+size], v, vt)
	}
	s.rotateExtras(dst, in[h:], v)
	return dst
}

// rotateHeads rotates one layer's keys and queries (separate) or U
// matrices (merged), without the value weights, from in into dst with V
// (the rows x ↦ xV) and vt = Vᵀ.
func (s *System) rotateHeads(dst, in, v, vt []float64) {
	d, h := s.d, s.Model.H
	switch s.Model.Kind {
	case Separate:
		gemm.Mul(2*h*s.Model.R, d, d, in, v, dst)
	case Merged: // U ↦ Vᵀ U V
		dd := d * d
		left := s.scr.m // not in use outside DerivEigen and LossEigen
		for i := 0; i < h; i++ {
			gemm.Mul(d, d, d, vt, in[i*dd:(i+1)*dd], left)
			gemm.Mul(d, d, d, left, v, dst[i*dd:(i+1)*dd])
		}
	}
}

// rotateExtras rotates the extra blocks of in (the state without its
// first H entries) into dst with the rows x ↦ xV: v_x (full layer), and
// u_y (merged); the separate keys' label entries k_y do not rotate.
func (s *System) rotateExtras(dst, in, v []float64) {
	if !s.Model.Layer.extra() {
		return
	}
	d, h := s.d, s.Model.H
	off := s.Model.flowLen(d)
	rows := s.Model.valueTokensLen(d) / d
	if s.Model.Kind == Merged {
		rows += h
	}
	if rows > 0 {
		gemm.Mul(rows, d, d, in[off-h:off-h+rows*d], v, dst[off:off+rows*d])
	}
	copy(dst[off+rows*d:], in[off-h+rows*d:])
}

// rotateVector returns Vᵀw, a vector of the original basis in eigen
// coordinates.
func (s *System) rotateVector(w []float64) []float64 {
	out := make([]float64, s.d)
	for k := range out {
		for r, x := range w {
			out[k] += s.vecs[r*s.d+k] * x
		}
	}
	return out
}

// The paper's initialization scale and the seed of its D = 4 example,
// Run's start for a nil y0 and linattn's defaults; the time constant τ of
// a Model whose Tau is 0.
const (
	DefaultWInit = 0.01
	DefaultSeed  = 3
	DefaultTau   = 1
)

// Init draws the paper's small random initialization (appendix
// "Initialization") in the original basis from a seeded PCG generator:
// v_i ~ N(0, w²/H); merged U_i entries ~ N(0, w²/(H D²)); separate k, q
// entries ~ N(0, w²/(H R D)); the full layer's extra blocks zero, as the
// paper initializes them. Draws follow the state layout, so the result
// depends only on (seed, model, D), not on GOMAXPROCS or the layer.
func (s *System) Init(wInit float64, seed uint64) ([]float64, error) {
	if !(wInit >= 0) || math.IsInf(wInit, 0) {
		return nil, fmt.Errorf("flow: w_init = %g, want a finite value ≥ 0", wInit)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))
	y := make([]float64, s.n)
	h := s.Model.H
	sdV := wInit / math.Sqrt(float64(h))
	var sdW float64
	if s.Model.Kind == Merged {
		sdW = wInit / math.Sqrt(float64(h*s.d*s.d))
	} else {
		sdW = wInit / math.Sqrt(float64(h*s.Model.R*s.d))
	}
	size := s.Model.headsLen(s.d) // a layer's heads: v first
	for i := range y[:s.Model.flowLen(s.d)] {
		sd := sdW
		if i%size < h {
			sd = sdV
		}
		y[i] = sd * rng.NormFloat64()
	}
	return y, nil
}

// FromArrays assembles a state in the original basis from value weights v
// (length H) and either merged matrices u (H·D·D, row-major U_i) or separate
// keys k and queries q (H·R·D each, row i·R + r). Unused arguments are nil.
// For a stack of L untied layers each array holds the layers' one after
// the other (v of length L·H: numpy's (L, H) in C order). The full
// layer's extra blocks are zero, as Init's are; SetExtras sets them.
func (s *System) FromArrays(v, u, k, q []float64) ([]float64, error) {
	h, d, sets := s.Model.H, s.d, s.Model.HeadSets()
	of := ""
	if sets > 1 {
		of = fmt.Sprintf(" for %d layers", sets)
	}
	if len(v) != sets*h {
		return nil, fmt.Errorf("flow: len(v) = %d, want H = %d%s", len(v), h, of)
	}
	y := make([]float64, 0, s.n)
	for l := 0; l < sets; l++ {
		y = append(y, v[l*h:(l+1)*h]...)
		switch s.Model.Kind {
		case Merged:
			if len(u) != sets*h*d*d || k != nil || q != nil {
				return nil, fmt.Errorf("flow: merged model wants U of length H·D² = %d%s (got %d) and no keys or queries", h*d*d, of, len(u))
			}
			y = append(y, u[l*h*d*d:(l+1)*h*d*d]...)
		case Separate:
			want := h * s.Model.R * d
			if len(k) != sets*want || len(q) != sets*want || u != nil {
				return nil, fmt.Errorf("flow: separate model wants K and Q of length H·R·D = %d%s (got %d and %d) and no U", want, of, len(k), len(q))
			}
			y = append(y, k[l*want:(l+1)*want]...)
			y = append(y, q[l*want:(l+1)*want]...)
		}
	}
	if err := checkFinite(y, 0); err != nil {
		return nil, err
	}
	return append(y, make([]float64, s.n-len(y))...), nil
}

// checkFinite returns an error naming the first entry of y that is NaN or
// infinite, counted from offset.
func checkFinite(y []float64, offset int) error {
	for i, x := range y {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("flow: initial weight %d is %g, want finite values", offset+i, x)
		}
	}
	return nil
}

// BalancedAligned returns the merged model's balanced, aligned state
// W₁ = w₂ mᵀ with m = vec(I)/√D, that is U_i = v_i I/√D, in the original
// basis (and in eigen coordinates, as VᵀIV = I). With white Λ the flow from
// it has the closed form of docs/math.md ("Closed form for the merged model with
// white covariance"), with s₀ = Σ v_i². For a stack v holds the value
// weights of each set of heads (L·H untied), and a tied stack's flow
// stays isotropic from there (reduced.IsotropicStack).
func (s *System) BalancedAligned(v []float64) ([]float64, error) {
	if s.Model.Kind != Merged {
		return nil, fmt.Errorf("flow: BalancedAligned is for the merged model, not %v", s.Model.Kind)
	}
	d, h := s.d, s.Model.H
	if sets := s.Model.HeadSets(); len(v) != sets*h {
		if sets > 1 {
			return nil, fmt.Errorf("flow: len(v) = %d, want H = %d for each of %d layers", len(v), h, sets)
		}
		return nil, fmt.Errorf("flow: len(v) = %d, want H = %d", len(v), h)
	}
	u := make([]float64, len(v)*d*d)
	for i, vi := range v {
		for a := 0; a < d; a++ {
			u[i*d*d+a*d+a] = vi / math.Sqrt(float64(d))
		}
	}
	return s.FromArrays(v, u, nil, nil)
}

func square(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * v
	}
	return out
}
