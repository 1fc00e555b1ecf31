package flow

import (
	"fmt"

	"github.com/linattn/linattn/internal/choice"
)

// Layer says which blocks of the attention weights a model has
// (docs/math.md, "The full layer").
type Layer int

const (
	// ReducedLayer is the paper's reduction: only the blocks that stay
	// nonzero under the flow of the in-context task, v and U (merged) or v,
	// K and Q (separate).
	ReducedLayer Layer = iota
	// FullLayer has every block that enters the prediction ŷ_q: besides
	// those, the token part v_x of each value row (the paper's bold v_i)
	// and the label row u_y of the merged W^KQ_i's first D columns (bold
	// u_i), or the label entry k_y of each separate key (the paper's scalar
	// k_{i,r}). It learns in weight when some tasks are fixed
	// (Tasks.ICL < 1; paper eq. attnM-icliwl).
	FullLayer
	// LabelKeyLayer is the reduced layer whose key–query also reads the
	// context labels: besides v and U (or v, K and Q), the label row u_y
	// of the merged W^KQ_i (or the label entry k_y of each separate key),
	// with no v_x. It predicts ŷ = x_qᵀ Γ [β; (1/N) Σ_n y_n²] with
	// Γ = Σ_i v_i [U_i; u_yᵢᵀ]ᵀ: the linear attention of Lu, Letey,
	// Zavatone-Veth, Maiti and Pehlevan (PNAS 2025), whose asymptotic
	// errors package theory gives.
	LabelKeyLayer
)

// Layers returns every layer, in the order of -layer's help.
func Layers() []Layer { return []Layer{FullLayer, ReducedLayer, LabelKeyLayer} }

// MarshalText writes the layer's name.
func (l Layer) MarshalText() ([]byte, error) { return choice.Text(l, "layer", Layers()) }

// UnmarshalText parses a layer's name: reduced, full or labelkey.
func (l *Layer) UnmarshalText(text []byte) error {
	v, err := choice.Parse(text, "layer", Layers())
	if err == nil {
		*l = v
	}
	return err
}

// extra reports whether the layer has blocks beyond the reduced layer's,
// whose features carry the moments of the task law (law.Data.Moments).
func (l Layer) extra() bool { return l != ReducedLayer }

func (l Layer) String() string {
	switch l {
	case ReducedLayer:
		return "reduced"
	case FullLayer:
		return "full"
	case LabelKeyLayer:
		return "labelkey"
	}
	return fmt.Sprintf("Layer(%d)", int(l))
}

// StateLen returns the length of the state of the model at dimension d:
// ReducedLen(d) and the full layer's extra blocks.
func (m Model) StateLen(d int) int { return m.flowLen(d) + m.extrasLen(d) }

// ReducedLen returns the length of the reduced layer's state, the first
// part of the full layer's: H + H·D² (merged) or H + 2·H·R·D (separate).
func (m Model) ReducedLen(d int) int { return m.flowLen(d) }

func (m Model) flowLen(d int) int { return m.HeadSets() * m.headsLen(d) }

// headsLen returns the length of one layer's heads: H + H·D² (merged) or
// H + 2·H·R·D (separate).
func (m Model) headsLen(d int) int {
	if m.Kind == Merged {
		return m.H + m.H*d*d
	}
	return m.H + 2*m.H*m.R*d
}

// extrasLen returns the length of the layer's extra blocks: the full
// layer's v_x and u_y (2·H·D, merged) or v_x and k_y (H·D + H·R,
// separate); the label-key layer's u_y (H·D) or k_y (H·R).
func (m Model) extrasLen(d int) int {
	return m.valueTokensLen(d) + m.keyLabelsLen(d)
}

// valueTokensLen is the length of v_x: H·D in the full layer.
func (m Model) valueTokensLen(d int) int {
	if m.Layer != FullLayer {
		return 0
	}
	return m.H * d
}

// keyLabelsLen is the length of u_y (H·D, merged) or k_y (H·R,
// separate), in the full and the label-key layer.
func (m Model) keyLabelsLen(d int) int {
	switch {
	case !m.Layer.extra():
		return 0
	case m.Kind == Merged:
		return m.H * d
	}
	return m.H * m.R
}

// Pairs returns the entries (a, b) of S = XXᵀ/n whose products with x_q
// are the layer's features, in the order of z = u ⊗ x_q: for the reduced
// layer the label column (b, D), b < D, that is u = β; for the label-key
// layer the whole label column, u = (β, S_DD); for the full layer every
// a ≤ b in 0..D, a outer (u = vech S; docs/training.md, "The exact fast
// path").
func (l Layer) Pairs(d int) [][2]int {
	var out [][2]int
	if l != FullLayer {
		for b := 0; b < d; b++ {
			out = append(out, [2]int{b, d})
		}
		if l == LabelKeyLayer {
			out = append(out, [2]int{d, d})
		}
		return out
	}
	for a := 0; a <= d; a++ {
		for b := a; b <= d; b++ {
			out = append(out, [2]int{a, b})
		}
	}
	return out
}

// SetExtras writes the layer's extra blocks into the state y (original
// basis, of length Len): vx (H·D, row i the token part v_x of head i's
// value row; the full layer's, empty for the label-key layer, which has
// none) and label, the merged label rows u_y (H·D) or the separate keys'
// label entries k_y (H·R, row i·R + r), in the layout of System's state
// (docs/math.md, "The full layer"). A reduced layer has no extra blocks.
func (s *System) SetExtras(y, vx, label []float64) error {
	s.checkLen("y", y)
	if !s.Model.Layer.extra() {
		return fmt.Errorf("flow: the %v layer has no extra blocks v_x, u_y, k_y", s.Model.Layer)
	}
	d := s.d
	nx, nLabel, name := s.Model.valueTokensLen(d), s.Model.keyLabelsLen(d), "u_y"
	if s.Model.Kind == Separate {
		name = "k_y"
	}
	if len(vx) != nx || len(label) != nLabel {
		if nx == 0 {
			return fmt.Errorf("flow: the %v %v layer wants no v_x and %s of length %d, got %d and %d",
				s.Model.Layer, s.Model.Kind, name, nLabel, len(vx), len(label))
		}
		return fmt.Errorf("flow: the %v %v layer wants v_x of length H·D = %d and %s of length %d, got %d and %d",
			s.Model.Layer, s.Model.Kind, nx, name, nLabel, len(vx), len(label))
	}
	off := s.Model.flowLen(d)
	if err := checkFinite(vx, off); err != nil {
		return err
	}
	if err := checkFinite(label, off+nx); err != nil {
		return err
	}
	copy(y[off:], vx)
	copy(y[off+nx:], label)
	return nil
}
