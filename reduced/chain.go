package reduced

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/linattn/linattn/flow"
)

// Plateau is the reduced prediction for the (m+1)-th plateau of the
// separate model, during which the model sits near M_m and one head learns
// e_{m+1} (paper section 4.3 and appendix "From M_m to M_{m+1}").
type Plateau struct {
	M      int     // m: the plateau before the (m+1)-th drop
	Level  float64 // L(M_m), the loss on the plateau
	Ansatz Ansatz  // λ_{m+1}, a_{m+1}, τ
	VStar  float64 // value weight (λ/a)^{1/3} of the head once it has learned e_{m+1}
	Entry  float64 // v_{m+1}(t_m), the head's value weight when the plateau starts
	// Duration is the paper's estimate t_{m+1} − t_m ≈ τ/(λ²_{m+1} v_{m+1}(t_m))
	// (eq. attnS-tm).
	Duration float64
	// ToDrop is the exact time, under the 1-D dynamics, from Entry until the
	// loss crosses half-way to L(M_{m+1}): the predicted t_{m+1} − t_m.
	ToDrop float64
}

// Chain returns the predictions for the D plateaus of the separate model on
// data, given for each m the value weight entry[m] > 0 with which the head
// that learns e_{m+1} enters its plateau.
func Chain(data *flow.Data, tau float64, entry []float64) ([]Plateau, error) {
	d := data.Dim()
	if len(entry) != d {
		return nil, fmt.Errorf("reduced: %d entry values, want D = %d", len(entry), d)
	}
	levels := data.PlateauLevels()
	a := data.AEigenvalues()
	out := make([]Plateau, d)
	for m := 0; m < d; m++ {
		an, err := NewAnsatz(data.Lambda()[m], a[m], tau)
		if err != nil {
			return nil, err
		}
		v0 := entry[m]
		if !(v0 > 0 && v0 < an.HalfWay()) {
			return nil, fmt.Errorf("reduced: entry[%d] = %g, want 0 < v < %g (the half-way value)", m, v0, an.HalfWay())
		}
		toDrop, err := an.TimeTo(v0, an.HalfWay())
		if err != nil {
			return nil, err
		}
		out[m] = Plateau{
			M: m, Level: levels[m], Ansatz: an, VStar: an.VStar(), Entry: v0,
			Duration: tau / (data.Lambda()[m] * data.Lambda()[m] * v0),
			ToDrop:   toDrop,
		}
	}
	return out, nil
}

// DropComparison compares the reduced dynamics with the full flow over one
// drop, the (M+1)-th, in which head Head learns e_{M+1}.
type DropComparison struct {
	M     int
	Head  int
	VStar float64

	// ObservedT is t_{M+1}: when the flow's loss crosses half-way from
	// L(M_M) to L(M_{M+1}).
	ObservedT float64

	// TStart is t_M (0 for M = 0), Entry = |v_Head(t_M)| and
	// PredictedFromStart = t_M + the 1-D time from Entry to the half-way
	// value: the prediction from the head's value weight when the plateau
	// starts. The ansatz k = q = v e_{M+1} does not hold yet then (the
	// dormant head is neither aligned nor balanced: ‖k‖² − v² is conserved
	// at O(w_init²)), so this is the paper's order-of-magnitude estimate.
	TStart, Entry, PredictedFromStart float64

	// TAligned is the first comparison time ≥ t_M at which the head's key
	// and query both have alignment ≥ the threshold with e_{M+1};
	// EntryAligned = |v k_e q_e|^{1/3} there (k_e = ⟨k, e_{M+1}⟩: the head's
	// share of M along e_{M+1} equals v³ in the ansatz), and Predicted is
	// TAligned + the 1-D time from EntryAligned to the half-way value.
	TAligned, EntryAligned, Predicted float64

	// MaxDeviation is max | |v_full(t)| − v_1D(t) | / v* over the drop
	// window from TAligned to t_{M+1} + 10·τ/(3λ²v*) (clipped at the next
	// drop), at the comparison times, with v_1D started from EntryAligned
	// at TAligned: the paper's Figure 3b as one number.
	MaxDeviation float64

	// Times, VFull and VReduced are the curves behind MaxDeviation: the
	// comparison times from TAligned to the end of the window, |v_Head| in
	// the flow and the 1-D solution there.
	Times, VFull, VReduced []float64
}

// Compare runs the separate rank-one flow s from y0 (original basis) up to T
// and compares each drop with the reduced dynamics. The head that learns
// e_{m+1} is the free head whose key is best aligned with e_{m+1} at the end
// of the drop window. Each window [t_m, t_{m+1} + 10·τ/(3λ²v*)] is sampled
// at `points` times; threshold ∈ (0, 1) is the alignment from which the
// ansatz is taken to hold (0.9 is a good choice). A first run finds the
// transition times, a second samples the windows.
func Compare(ctx context.Context, s *flow.System, y0 []float64, T float64, points int, threshold float64) ([]DropComparison, error) {
	if s.Model.Kind != flow.Separate || s.Model.R != 1 {
		return nil, errors.New("reduced: Compare needs the separate model with R = 1, the setting of the ansatz")
	}
	if points < 2 {
		return nil, fmt.Errorf("reduced: points = %d, want ≥ 2", points)
	}
	if !(threshold > 0 && threshold < 1) {
		return nil, fmt.Errorf("reduced: threshold = %g, want a value in (0, 1)", threshold)
	}
	first, err := s.Run(ctx, y0, flow.RunSettings{T: T, Times: []float64{0}})
	if err != nil {
		return nil, err
	}
	trans := first.Transitions
	for i, tn := range trans {
		if tn.M != i+1 {
			return nil, fmt.Errorf("reduced: drops out of order: %+v", trans)
		}
	}
	data := s.Data
	a := data.AEigenvalues()
	type window struct{ start, end float64 }
	wins := make([]window, len(trans))
	var times []float64
	for m := range trans {
		start := 0.0
		if m > 0 {
			start = trans[m-1].T
		}
		vs := math.Cbrt(data.MapEigenvalues()[m]) // v* of the head that learns e_m
		end := trans[m].T + 10*s.Model.Tau/(3*data.Lambda()[m]*data.Lambda()[m]*vs)
		if m+1 < len(trans) {
			end = math.Min(end, trans[m+1].T)
		}
		end = math.Min(end, T)
		wins[m] = window{start, end}
		for _, t := range flow.LinearGrid(end-start, points) {
			times = append(times, start+t)
		}
		times[len(times)-points] = start
	}
	sort.Float64s(times)
	times = dedupe(times)
	tr, err := s.Run(ctx, y0, flow.RunSettings{T: T, Times: times})
	if err != nil {
		return nil, err
	}
	n, h, dim := s.Len(), s.Model.H, s.Dim()
	ye := make([]float64, n)
	eigenAt := func(i int) []float64 { return s.ToEigen(ye, tr.States[i*n:(i+1)*n]) }
	index := func(t float64) int { return sort.SearchFloat64s(tr.Times, t) }
	used := make([]bool, h)
	out := make([]DropComparison, len(trans))
	for m, w := range wins {
		head := learningHead(s, eigenAt(index(w.end)), m, used)
		if head < 0 {
			return nil, fmt.Errorf("reduced: no free head for drop %d", m+1)
		}
		an, err := NewAnsatz(data.Lambda()[m], a[m], s.Model.Tau)
		if err != nil {
			return nil, err
		}
		c := DropComparison{M: m, Head: head, VStar: an.VStar(), ObservedT: trans[m].T, TStart: w.start}
		i0 := index(w.start)
		c.Entry = math.Abs(tr.States[i0*n+head])
		c.PredictedFromStart = an.halfWayFrom(w.start, c.Entry)
		// The first time the ansatz holds.
		ia := -1
		kOff, qOff := h+head*dim+m, h+h*dim+head*dim+m
		for i := i0; i < len(tr.Times) && tr.Times[i] <= w.end; i++ {
			y := eigenAt(i)
			k, q := s.AlignmentEigen(y)
			if k[head*dim+m] >= threshold && q[head*dim+m] >= threshold {
				ia = i
				c.TAligned = tr.Times[i]
				c.EntryAligned = math.Cbrt(math.Abs(y[head] * y[kOff] * y[qOff]))
				break
			}
		}
		if ia < 0 {
			return nil, fmt.Errorf("reduced: drop %d: head %d never reaches alignment %g with e_%d", m+1, head, threshold, m+1)
		}
		if !(c.EntryAligned < an.HalfWay()) {
			return nil, fmt.Errorf("reduced: drop %d: head %d aligns only after the drop (v = %g); sample the window more finely", m+1, head, c.EntryAligned)
		}
		c.Predicted = c.TAligned + an.timeTo(c.EntryAligned, an.HalfWay())
		for i := ia; i < len(tr.Times) && tr.Times[i] <= w.end; i++ {
			vr, err := an.VAt(c.EntryAligned, tr.Times[i]-c.TAligned)
			if err != nil {
				return nil, err
			}
			vf := math.Abs(tr.States[i*n+head])
			c.MaxDeviation = math.Max(c.MaxDeviation, math.Abs(vf-vr)/c.VStar)
			c.Times = append(c.Times, tr.Times[i])
			c.VFull = append(c.VFull, vf)
			c.VReduced = append(c.VReduced, vr)
		}
		out[m] = c
	}
	return out, nil
}

func dedupe(x []float64) []float64 {
	out := x[:0]
	for i, v := range x {
		if i == 0 || v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}
