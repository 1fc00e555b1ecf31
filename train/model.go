package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/internal/choice"
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
// stored. Layer says which of the blocks that enter ŷ_q are trained: all
// (flow.FullLayer), those of the paper's reduction (flow.ReducedLayer), or
// those and the keys' label entries (flow.LabelKeyLayer).
//
// # Weights
//
// The weights are one flat vector θ = [flow state | extra blocks], package
// flow's layout (System, "State layout"): merged [v_1…v_H | U_1 … U_H],
// separate [v | K | Q], so a flow state is a reduced layer's weights as
// they are; the full layer appends, merged, [v_x (H×D) | u_y (H×D)],
// separate [v_x (H×D) | k_y (H×R)]: v_x is the token part of the value row
// (the paper's bold v_i), u_y the label row of W^KQ_i's first D columns
// (the paper's bold u_i), k_y the label entry of each key (the paper's
// scalar k_{i,r}).
//
// The flow's model (flow.Model: kind, heads, rank, layer, and the time
// constant τ of the flow that gradient descent follows, t/τ = 2η per step)
// is embedded, one description for the population flow and for training.
type Model struct {
	flow.Model
	D         int // token dimension
	Attention Attention
	// Unrestricted is the deep linear transformer with every block
	// trained: L = Depth() layers of the paper's full merged layer on a
	// residual stream, W^V_h and W^KQ_h full (D+1)×(D+1) matrices, no
	// masks (the query is a key, every token's update has the same sign),
	// so that training shows whether gradient descent finds the stack of
	// gradient-descent layers (docs/training.md, "Depth"). Its weights are
	// [layer][head][W^V | W^KQ], each row-major, not a flow state.
	Unrestricted bool
}

// flowModel is the flow's description of the layer.
func (m *Model) flowModel() flow.Model { return m.Model }

func (m *Model) validate() error {
	if m.D < 1 {
		return fmt.Errorf("train: D = %d, want D ≥ 1", m.D)
	}
	if m.H < 1 {
		return fmt.Errorf("train: H = %d heads, want H ≥ 1", m.H)
	}
	if !(m.Tau > 0) || math.IsInf(m.Tau, 0) {
		return fmt.Errorf("train: Tau = %g, want a finite τ > 0", m.Tau)
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
	if !slices.Contains(flow.Layers(), m.Layer) {
		return fmt.Errorf("train: Layer = %d, want flow.ReducedLayer, flow.FullLayer or flow.LabelKeyLayer", int(m.Layer))
	}
	return m.validateDepth()
}

// validateDepth checks a stack: of reduced layers (flow.Model's checks)
// with linear attention, whose stacking is gradient descent.
func (m *Model) validateDepth() error {
	if m.Unrestricted && (m.Kind != flow.Merged || m.Layer != flow.FullLayer || m.Attention != Linear) {
		return fmt.Errorf("train: the unrestricted transformer has the full merged layer's blocks with linear attention, not the %v %v layer with %v attention", m.Kind, m.Layer, m.Attention)
	}
	if m.Unrestricted && m.Tied {
		return fmt.Errorf("train: the unrestricted transformer's layers are untied")
	}
	if m.Depth() == 1 || m.Unrestricted {
		return nil
	}
	if m.Attention != Linear {
		return fmt.Errorf("train: a stack of %d layers is of linear attention, not %v", m.Depth(), m.Attention)
	}
	return m.Model.CheckDepth()
}

// hr returns the number of key–query pairs: H·R (separate) or H (merged,
// one matrix per head).
func (m *Model) hr() int {
	if m.Kind == flow.Merged {
		return m.H
	}
	return m.H * m.R
}

// FlowLen returns the length of the flow state (flow.Model.ReducedLen):
// H + H·D² (merged) or H + 2·H·R·D (separate), per set of heads of a
// stack; 0 for the unrestricted transformer, which has none.
func (m *Model) FlowLen() int {
	if m.Unrestricted {
		return 0
	}
	return m.flowModel().ReducedLen(m.D)
}

// Len returns the length of the weight vector θ (flow.Model.StateLen), or
// the unrestricted transformer's L·H·2(D+1)².
func (m *Model) Len() int {
	if m.Unrestricted {
		return m.Depth() * m.H * 2 * (m.D + 1) * (m.D + 1)
	}
	return m.flowModel().StateLen(m.D)
}

// TransformerWeights views the unrestricted transformer's weights theta:
// layer l's head h, its W^V and W^KQ, each (D+1)×(D+1) row-major.
func (m *Model) TransformerWeights(theta []float64, l, h int) (v, kq []float64) {
	return transformerWeights(theta, m.D+1, m.H, l, h)
}

// GDForm returns, for each layer of the unrestricted transformer at
// theta, the part of its squared weights in the blocks of the stack of
// gradient-descent layers (docs/math.md, "Depth"): W^V's label–label
// entry and W^KQ's token–token block, over all of W^V and W^KQ; 1 for a
// layer in that form, 0 for one with none of it.
func (m *Model) GDForm(theta []float64) []float64 {
	d1 := m.D + 1
	out := make([]float64, m.Depth())
	for l := range out {
		var in, all float64
		for h := 0; h < m.H; h++ {
			v, kq := transformerWeights(theta, d1, m.H, l, h)
			for i := 0; i < d1; i++ {
				for j := 0; j < d1; j++ {
					a, b := v[i*d1+j]*v[i*d1+j], kq[i*d1+j]*kq[i*d1+j]
					all += a + b
					if i == m.D && j == m.D {
						in += a
					}
					if i < m.D && j < m.D {
						in += b
					}
				}
			}
		}
		if all > 0 {
			out[l] = in / all
		}
	}
	return out
}

// InitUnrestricted draws the unrestricted transformer's small random
// start from a seeded PCG generator, as flow.System.Init draws the
// paper's: every entry of every W^V_h and W^KQ_h ~ N(0, w²/(H (D+1)²)).
func (m *Model) InitUnrestricted(wInit float64, seed uint64) ([]float64, error) {
	if !m.Unrestricted {
		return nil, fmt.Errorf("train: InitUnrestricted is for the unrestricted transformer")
	}
	if !(wInit >= 0) || math.IsInf(wInit, 0) {
		return nil, fmt.Errorf("train: w_init = %g, want a finite value ≥ 0", wInit)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))
	sd := wInit / math.Sqrt(float64(m.H)) / float64(m.D+1)
	theta := make([]float64, m.Len())
	for i := range theta {
		theta[i] = sd * rng.NormFloat64()
	}
	return theta, nil
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
// (H×D); separate v_x (H×D) then k_y (H×R). Empty for the reduced layer.
func (m *Model) Extras(theta []float64) []float64 { return theta[m.FlowLen():] }

// Attentions returns every activation, in the order of -attention's help.
func Attentions() []Attention { return []Attention{Linear, Softmax} }

// MarshalText writes the activation's name.
func (a Attention) MarshalText() ([]byte, error) { return choice.Text(a, "attention", Attentions()) }

// UnmarshalText parses an activation's name: linear or softmax.
func (a *Attention) UnmarshalText(text []byte) error {
	v, err := choice.Parse(text, "attention", Attentions())
	if err == nil {
		*a = v
	}
	return err
}
