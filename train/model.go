package train

import (
	"fmt"

	"github.com/linattn/linattn/flow"
)

// Attention is the attention activation.
type Attention int

const (
	// Linear attention: weights s_j/ρ with ρ = n, the context length of the
	// prediction (paper section "Multi-Head Self-Attention", ρ = N).
	Linear Attention = iota
	// Softmax attention: weights softmax_j(s_j/ρ) over the n context columns
	// and the query column, with ρ = 1 as in the paper's code; the weights
	// sum to one, which takes the place of the 1/N of linear attention.
	Softmax
)

func (a Attention) String() string {
	switch a {
	case Linear:
		return "linear"
	case Softmax:
		return "softmax"
	}
	return fmt.Sprintf("Attention(%d)", int(a))
}

// Blocks says which blocks of the attention weights are trained.
type Blocks int

const (
	// Full trains every block that enters the prediction ŷ_q: the whole last
	// row ṽ_i = (v_i, v_i) of W^V_i, and the first D columns of W^KQ_i
	// (U_i above u_iᵀ) or the whole rows k̃_{i,r} = (k_{i,r}, k_{i,r}) of
	// W^K_i and the first D entries q_{i,r} of the rows of W^Q_i.
	Full Blocks = iota
	// Reduced holds the blocks the paper's reduction removes (the value
	// row's token part, u_i, and the keys' label entries) at zero, so the
	// weights are exactly those of package flow: v and U, or v, K and Q.
	Reduced
)

func (b Blocks) String() string {
	switch b {
	case Full:
		return "full"
	case Reduced:
		return "reduced"
	}
	return fmt.Sprintf("Blocks(%d)", int(b))
}

// Model is the attention layer of the paper (section "Multi-Head
// Self-Attention"): for an input X ∈ R^{(D+1)×(n+1)} whose columns are the
// context tokens x̃_j = (x_j, y_j) and the query x̃_q = (x_q, 0),
//
//	ATTN(X) = X + Σ_i W^V_i X act(Xᵀ W^KQ_i X / ρ),   ŷ_q = ATTN(X)_{D+1, n+1},
//
// with W^KQ_i merged (ATTN_M) or W^KQ_i = W^K_iᵀ W^Q_i with rank-R keys and
// queries (ATTN_S). The residual X contributes X_{D+1,n+1} = 0 to ŷ_q. Only
// the last row of W^V_i and the part of W^KQ_i that multiplies x̃_q enter ŷ_q;
// the paper's other blocks (marked * there) get zero gradient and are not
// stored.
//
// # Weights
//
// The weights are one flat vector θ = [flow state | extra blocks]. The flow
// state is package flow's layout (System, "State layout"): merged
// [v_1…v_H | U_1 … U_H], separate [v | K | Q], so a flow state is a Reduced
// model's weights as they are. The Full model appends, merged,
// [v_x (H×D) | u_y (H×D)], separate [v_x (H×D) | k_y (H×R)]: v_x is the
// token part of the value row (the paper's bold v_i), u_y the label row of
// W^KQ_i's first D columns (the paper's bold u_i), k_y the label entry of
// each key (the paper's scalar k_{i,r}).
type Model struct {
	Kind      flow.Kind
	D, H, R   int // token dimension, heads, rank (separate; 0 for merged)
	Attention Attention
	Blocks    Blocks
}

func (m *Model) validate() error {
	if m.D < 1 {
		return fmt.Errorf("train: D = %d, want D ≥ 1", m.D)
	}
	if m.H < 1 {
		return fmt.Errorf("train: H = %d heads, want H ≥ 1", m.H)
	}
	switch m.Kind {
	case flow.Merged:
		if m.R != 0 {
			return fmt.Errorf("train: R = %d is meaningless for the merged model, want 0", m.R)
		}
	case flow.Separate:
		if m.R < 1 || m.R > m.D {
			return fmt.Errorf("train: R = %d, want 1 ≤ R ≤ D = %d", m.R, m.D)
		}
	default:
		return fmt.Errorf("train: Kind = %d, want flow.Merged or flow.Separate", int(m.Kind))
	}
	if m.Attention != Linear && m.Attention != Softmax {
		return fmt.Errorf("train: Attention = %d, want Linear or Softmax", int(m.Attention))
	}
	if m.Blocks != Full && m.Blocks != Reduced {
		return fmt.Errorf("train: Blocks = %d, want Full or Reduced", int(m.Blocks))
	}
	return nil
}

// hr returns the number of key–query pairs: H·R (separate) or H (merged,
// one matrix per head).
func (m *Model) hr() int {
	if m.Kind == flow.Merged {
		return m.H
	}
	return m.H * m.R
}

// FlowLen returns the length of the flow state: H + H·D² (merged) or
// H + 2·H·R·D (separate).
func (m *Model) FlowLen() int {
	if m.Kind == flow.Merged {
		return m.H + m.H*m.D*m.D
	}
	return m.H + 2*m.H*m.R*m.D
}

// Len returns the length of the weight vector θ.
func (m *Model) Len() int {
	if m.Blocks == Reduced {
		return m.FlowLen()
	}
	if m.Kind == flow.Merged {
		return m.FlowLen() + 2*m.H*m.D
	}
	return m.FlowLen() + m.H*m.D + m.H*m.R
}

// FromFlow returns the weights θ whose flow state is y (original basis) and
// whose extra blocks are zero: the state of a flow run, or of the paper's
// initialization, which sets the extra blocks to zero.
func (m *Model) FromFlow(y []float64) ([]float64, error) {
	if len(y) != m.FlowLen() {
		return nil, fmt.Errorf("train: flow state has length %d, want %d", len(y), m.FlowLen())
	}
	theta := make([]float64, m.Len())
	copy(theta, y)
	return theta, nil
}

// Flow returns the flow-state part of θ, a view.
func (m *Model) Flow(theta []float64) []float64 { return theta[:m.FlowLen()] }

// Extras returns the extra blocks of θ, a view: merged v_x (H×D) then u_y
// (H×D); separate v_x (H×D) then k_y (H×R). Empty for a Reduced model.
func (m *Model) Extras(theta []float64) []float64 { return theta[m.FlowLen():] }

// weights are θ expanded to the blocks of the paper's matrices:
//
//	vt[i]    = ṽ_i ∈ R^{D+1}, the last row of W^V_i (token part, then label);
//	wt[i]    ∈ R^{(D+1)×D}, the first D columns of W^KQ_i (merged; U_i above u_iᵀ);
//	kt[i·R+r] = k̃_{i,r} ∈ R^{D+1}, a row of W^K_i (separate);
//	q[i·R+r]  = q_{i,r} ∈ R^D, the first D entries of a row of W^Q_i (separate).
//
// All row-major in one buffer.
type weights struct {
	buf            []float64
	vt, wt, kt, q  []float64
	d, h, r, pairs int
}

func newWeights(m *Model) *weights {
	d1 := m.D + 1
	w := &weights{d: m.D, h: m.H, r: m.R, pairs: m.hr()}
	nv := m.H * d1
	var nw, nk, nq int
	if m.Kind == flow.Merged {
		nw = m.H * d1 * m.D
	} else {
		nk, nq = m.H*m.R*d1, m.H*m.R*m.D
	}
	w.buf = make([]float64, nv+nw+nk+nq)
	w.vt = w.buf[:nv]
	w.wt = w.buf[nv : nv+nw]
	w.kt = w.buf[nv+nw : nv+nw+nk]
	w.q = w.buf[nv+nw+nk:]
	return w
}

func (w *weights) zero() { clear(w.buf) }

// add sets w += o.
func (w *weights) add(o *weights) {
	for i, x := range o.buf {
		w.buf[i] += x
	}
}

// expand writes θ into w (the blocks θ lacks are zero).
func (m *Model) expand(w *weights, theta []float64) {
	m.transfer(w, theta, true)
}

// pack writes the gradient blocks of w that θ holds into g (len Len()).
func (m *Model) pack(g []float64, w *weights) {
	m.transfer(w, g, false)
}

// transfer copies between the flat layout and the expanded blocks, in the
// direction toW.
func (m *Model) transfer(w *weights, flat []float64, toW bool) {
	if toW {
		w.zero()
	}
	d, h, d1 := m.D, m.H, m.D+1
	mv := func(wp, fp *float64) { // one entry, in the direction toW
		if toW {
			*wp = *fp
		} else {
			*fp = *wp
		}
	}
	for i := 0; i < h; i++ {
		mv(&w.vt[i*d1+d], &flat[i])
	}
	off := h
	if m.Kind == flow.Merged {
		for i := 0; i < h; i++ {
			for b := 0; b < d; b++ {
				for c := 0; c < d; c++ {
					mv(&w.wt[(i*d1+b)*d+c], &flat[off])
					off++
				}
			}
		}
	} else {
		hr := h * m.R
		for k := 0; k < hr; k++ {
			for b := 0; b < d; b++ {
				mv(&w.kt[k*d1+b], &flat[off+k*d+b])
				mv(&w.q[k*d+b], &flat[off+hr*d+k*d+b])
			}
		}
		off += 2 * hr * d
	}
	if m.Blocks == Reduced {
		return
	}
	for i := 0; i < h; i++ {
		for a := 0; a < d; a++ {
			mv(&w.vt[i*d1+a], &flat[off])
			off++
		}
	}
	if m.Kind == flow.Merged {
		for i := 0; i < h; i++ {
			for c := 0; c < d; c++ {
				mv(&w.wt[(i*d1+d)*d+c], &flat[off])
				off++
			}
		}
		return
	}
	for k := 0; k < h*m.R; k++ {
		mv(&w.kt[k*d1+d], &flat[off])
		off++
	}
}
