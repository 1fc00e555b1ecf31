package flow

import (
	"math"
	"strings"
	"testing"
)

// TestFromArraysFullLayer: FromArrays and SetExtras assemble the state
// layout of System (v, then U or K and Q, then v_x and u_y or k_y; the
// label-key layer's u_y or k_y alone): a random state of each full- and
// label-key-layer case split into its arrays and put back together is the
// same state, bit for bit; without SetExtras the extra blocks are zero, as
// the paper's initialization has them (docs/math.md, "The full layer").
func TestFromArraysFullLayer(t *testing.T) {
	for _, tc := range fullCases {
		if tc.m.Layer == ReducedLayer {
			continue
		}
		s := newSys(t, lawData(t, tc, 2), tc.m)
		y := randomState(s, 0.3, 7)
		h, d := tc.m.H, s.Dim()
		nr := tc.m.ReducedLen(d)
		var u, k, q []float64
		if tc.m.Kind == Merged {
			u = y[h:nr]
		} else {
			hrd := h * tc.m.R * d
			k, q = y[h:h+hrd], y[h+hrd:nr]
		}
		got, err := s.FromArrays(y[:h], u, k, q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got) != s.Len() {
			t.Fatalf("%s: FromArrays gives %d weights, want Len = %d", tc.name, len(got), s.Len())
		}
		for i, x := range got[nr:] {
			if x != 0 {
				t.Fatalf("%s: extra weight %d is %v before SetExtras, want 0", tc.name, i, x)
			}
		}
		nx := tc.m.valueTokensLen(d) // H·D, or none in the label-key layer
		if err := s.SetExtras(got, y[nr:nr+nx], y[nr+nx:]); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range y {
			if got[i] != y[i] {
				t.Fatalf("%s: weight %d is %v, want %v", tc.name, i, got[i], y[i])
			}
		}
	}
}

// TestSetExtrasErrors: SetExtras refuses the reduced layer, blocks of the
// wrong length and non-finite weights, naming them.
func TestSetExtrasErrors(t *testing.T) {
	full := fullCases[0] // merged, D = 3, H = 2
	s := newSys(t, lawData(t, full, 2), full.m)
	red := full.m
	red.Layer = ReducedLayer
	sr := newSys(t, lawData(t, full, 2), red)
	six := make([]float64, 6)
	nan := []float64{0, 0, 0, 0, math.NaN(), 0}
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"reduced": {sr.SetExtras(make([]float64, sr.Len()), six, six), "reduced layer has no extra blocks"},
		"length":  {s.SetExtras(make([]float64, s.Len()), six, six[:2]), "u_y of length 6, got 6 and 2"},
		"NaN":     {s.SetExtras(make([]float64, s.Len()), six, nan), "initial weight 30 is NaN"}, // 2 + 2·9 + 6 + 4
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", name, c.err, c.want)
		}
	}
}
