package reduced

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
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
func Chain(data *law.Data, tau float64, entry []float64) ([]Plateau, error) {
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
	wins, times := dropWindows(s, trans, T, points)
	tr, err := s.Run(ctx, y0, flow.RunSettings{T: T, Times: times})
	if err != nil {
		return nil, err
	}
	c := &comparer{s: s, tr: tr, threshold: threshold, used: make([]bool, s.Model.H), ye: make([]float64, s.Len())}
	out := make([]DropComparison, len(trans))
	for m, w := range wins {
		if out[m], err = c.drop(m, w, trans[m].T); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// window is the stretch of the run over which a drop is compared.
type window struct{ start, end float64 }

// dropWindows returns each drop's window [t_m, t_{m+1} + 10·τ/(3λ²v*)]
// (clipped at the next drop and at T) and the sorted sampling times, points
// in each window.
func dropWindows(s *flow.System, trans []flow.Transition, T float64, points int) ([]window, []float64) {
	data := s.Data
	lam, vStar := data.Lambda(), data.MapEigenvalues()
	wins := make([]window, len(trans))
	var times []float64
	for m := range trans {
		start := 0.0
		if m > 0 {
			start = trans[m-1].T
		}
		vs := math.Cbrt(vStar[m]) // v* of the head that learns e_m
		end := trans[m].T + 10*s.Model.Tau/(3*lam[m]*lam[m]*vs)
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
	return wins, dedupe(times)
}

// comparer compares the drops of the sampled run tr one by one.
type comparer struct {
	s         *flow.System
	tr        *flow.Trajectory
	threshold float64
	used      []bool    // heads already given to a drop
	ye        []float64 // scratch: a sample in eigen coordinates
}

func (c *comparer) eigenAt(i int) []float64 {
	n := c.s.Len()
	return c.s.ToEigen(c.ye, c.tr.States[i*n:(i+1)*n])
}

func (c *comparer) index(t float64) int { return sort.SearchFloat64s(c.tr.Times, t) }

// drop compares the (m+1)-th drop, observed at tObs, over window w.
func (c *comparer) drop(m int, w window, tObs float64) (DropComparison, error) {
	s, n := c.s, c.s.Len()
	head := learningHead(s, c.eigenAt(c.index(w.end)), m, c.used)
	if head < 0 {
		return DropComparison{}, fmt.Errorf("reduced: no free head for drop %d", m+1)
	}
	an, err := NewAnsatz(s.Data.Lambda()[m], s.Data.AEigenvalues()[m], s.Model.Tau)
	if err != nil {
		return DropComparison{}, err
	}
	d := DropComparison{M: m, Head: head, VStar: an.VStar(), ObservedT: tObs, TStart: w.start}
	i0 := c.index(w.start)
	d.Entry = math.Abs(c.tr.States[i0*n+head])
	d.PredictedFromStart = an.halfWayFrom(w.start, d.Entry)
	ia, err := c.aligned(&d, i0, w.end)
	if err != nil {
		return DropComparison{}, err
	}
	if !(d.EntryAligned < an.HalfWay()) {
		return DropComparison{}, fmt.Errorf("reduced: drop %d: head %d aligns only after the drop (v = %g); sample the window more finely", m+1, head, d.EntryAligned)
	}
	d.Predicted = d.TAligned + an.timeTo(d.EntryAligned, an.HalfWay())
	tr := c.tr
	for i := ia; i < len(tr.Times) && tr.Times[i] <= w.end; i++ {
		vr, err := an.VAt(d.EntryAligned, tr.Times[i]-d.TAligned)
		if err != nil {
			return DropComparison{}, err
		}
		vf := math.Abs(tr.States[i*n+head])
		d.MaxDeviation = math.Max(d.MaxDeviation, math.Abs(vf-vr)/d.VStar)
		d.Times = append(d.Times, tr.Times[i])
		d.VFull = append(d.VFull, vf)
		d.VReduced = append(d.VReduced, vr)
	}
	return d, nil
}

// aligned finds the first sample from i0 up to end at which the drop's head
// has key and query aligned with e_{M+1} to the threshold: it sets TAligned
// and EntryAligned and returns the sample's index.
func (c *comparer) aligned(d *DropComparison, i0 int, end float64) (int, error) {
	s, tr := c.s, c.tr
	h, dim, m := s.Model.H, s.Dim(), d.M
	kOff, qOff := h+d.Head*dim+m, h+h*dim+d.Head*dim+m
	for i := i0; i < len(tr.Times) && tr.Times[i] <= end; i++ {
		y := c.eigenAt(i)
		k, q := s.AlignmentEigen(y)
		if k[d.Head*dim+m] >= c.threshold && q[d.Head*dim+m] >= c.threshold {
			d.TAligned = tr.Times[i]
			d.EntryAligned = math.Cbrt(math.Abs(y[d.Head] * y[kOff] * y[qOff]))
			return i, nil
		}
	}
	return -1, fmt.Errorf("reduced: drop %d: head %d never reaches alignment %g with e_%d", m+1, d.Head, c.threshold, m+1)
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
