package layout

import (
	"slices"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
)

// Run lays out the run tr of s as linattn run writes it (out/run.npz):
// Times, Loss, StateTimes (when the states are not kept at every output
// time: Trajectory.AllStates), Values, then Keys, Queries and
// KeyAlignment (separate model) or KeyQuery (merged), Map (each with a
// layer axis after the time for an untied stack), the law (Law),
// Transitions and TransitionM; then the full layer's extra blocks
// (Extras), the test losses when the run computed them (TestICL; TestIWL
// and TestIDG only with fixed tasks, which define those tests: without
// them the run has none, and the arrays are absent, never NaN), and the
// fixed tasks (Tasks) when they entered. Where the paper's plateau theory
// does not apply (flow.Plan.PaperTheory) Plateaus holds the plateaus read
// off the run (Trajectory.Plateaus), not the in-context L(M_m). tr.States
// holds s's states in the original basis, row-major.
func Run(s *flow.System, tr *flow.Trajectory) []export.Array {
	n, nt, ns := s.Len(), len(tr.States)/s.Len(), len(tr.Times) // nt states kept: at every output time unless thinned
	arrays := []export.Array{
		export.Floats(output.Times, tr.Times, ns),
		export.Floats(output.Loss, tr.Loss, ns),
	}
	if !tr.AllStates() {
		st := make([]float64, nt)
		for i := range st {
			st[i] = tr.StateTime(i)
		}
		arrays = append(arrays, export.Floats(output.StateTimes, st, len(st)))
	}
	arrays = append(arrays, heads(s, tr.States[:nt*n], nt)...)
	if s.Plan().PaperTheory {
		arrays = append(arrays, Law(s.Data)...)
	} else {
		arrays = append(arrays, LawWithPlateaus(s.Data, tr.Plateaus)...)
	}
	arrays = append(arrays, Transitions(tr.Transitions)...)
	arrays = append(arrays, Extras(s.Model, s.Dim(), tr.States, nt)...)
	if tr.TestICL != nil {
		arrays = append(arrays, export.Floats(output.TestICL, tr.TestICL, ns))
		if s.Data.HasFixed() {
			arrays = append(arrays, export.Floats(output.TestIWL, tr.TestIWL, ns), export.Floats(output.TestIDG, tr.TestIDG, ns))
		}
	}
	if tasks := s.Data.Tasks(); len(tasks.Fixed) > 0 && (!s.Data.InContext() || tr.TestIWL != nil) {
		arrays = append(arrays, export.Floats(output.Tasks, slices.Concat(tasks.Fixed...), len(tasks.Fixed), s.Dim()))
	}
	return arrays
}

// heads lays out the heads of the nt states (original basis, row-major):
// Values, then KeyQuery (merged) or Keys, Queries and KeyAlignment
// (separate), then Map, with a layer axis after the time for the head sets
// of an untied stack (flow.Model.HeadSets).
func heads(s *flow.System, states []float64, nt int) []export.Array {
	m, d, n := s.Model, s.Dim(), s.Len()
	h, r, sets := m.H, m.R, m.HeadSets()
	size, hrd := m.ReducedLen(d)/sets, h*r*d
	// The arrays at their final capacity: appended to without growing,
	// which at D = 32 took a tenth of a run's time in copies.
	v := make([]float64, 0, nt*sets*h)
	var u, k, q, ka []float64
	if m.Kind == flow.Merged {
		u = make([]float64, 0, nt*sets*(size-h))
	} else {
		k, q, ka = make([]float64, 0, nt*sets*hrd), make([]float64, 0, nt*sets*(size-h-hrd)), make([]float64, 0, nt*sets*hrd)
	}
	maps := make([]float64, nt*sets*d*d)
	ye := make([]float64, n)
	for i := range nt {
		y := states[i*n : (i+1)*n]
		s.ToEigen(ye, y) // once per state, for M and the alignment
		s.MapsOfEigenTo(maps[i*sets*d*d:(i+1)*sets*d*d], ye)
		if m.Kind == flow.Separate {
			keys, _ := s.AlignmentEigen(ye)
			ka = append(ka, keys...)
		}
		for l := range sets {
			set := y[l*size : (l+1)*size]
			v = append(v, set[:h]...)
			if m.Kind == flow.Merged {
				u = append(u, set[h:]...)
				continue
			}
			k = append(k, set[h:h+hrd]...)
			q = append(q, set[h+hrd:]...)
		}
	}
	shape := func(dims ...int) []int {
		if m.Depth() > 1 && !m.Tied {
			return append([]int{nt, sets}, dims...)
		}
		return append([]int{nt}, dims...)
	}
	arrays := []export.Array{export.Floats(output.Values, v, shape(h)...)}
	if m.Kind == flow.Merged {
		arrays = append(arrays, export.Floats(output.KeyQuery, u, shape(h, d, d)...))
	} else {
		arrays = append(arrays,
			export.Floats(output.Keys, k, shape(h, r, d)...),
			export.Floats(output.Queries, q, shape(h, r, d)...),
			export.Floats(output.KeyAlignment, ka, shape(h, r, d)...))
	}
	return append(arrays, export.Floats(output.Map, maps, shape(d, d)...))
}

// Transitions lays out the drops read off a run: Transitions (their
// times) and TransitionM (the plateau each reaches).
func Transitions(tns []flow.Transition) []export.Array {
	ms := make([]int64, len(tns))
	ts := make([]float64, len(tns))
	for i, tn := range tns {
		ms[i], ts[i] = int64(tn.M), tn.T
	}
	return []export.Array{export.Floats(output.Transitions, ts, len(ts)), export.Ints(output.TransitionM, ms, len(ms))}
}

// Extras are the extra blocks of a layer in the nt states (model m
// at dimension d, System's layout): ValueX (nt, H, D, full layer),
// then LabelKQ (nt, H, D, merged) or KeyLabel (nt, H, R, separate); none
// for the reduced layer.
func Extras(m flow.Model, d int, states []float64, nt int) []export.Array {
	if m.Layer == flow.ReducedLayer {
		return nil
	}
	n, nr, h := m.StateLen(d), m.ReducedLen(d), m.H
	nx := 0 // the length of v_x
	if m.Layer == flow.FullLayer {
		nx = h * d
	}
	vx := make([]float64, 0, nt*nx)
	other := make([]float64, 0, nt*(n-nr-nx))
	for i := 0; i < nt; i++ {
		y := states[i*n : (i+1)*n]
		vx = append(vx, y[nr:nr+nx]...)
		other = append(other, y[nr+nx:]...)
	}
	var out []export.Array
	if nx > 0 {
		out = append(out, export.Floats(output.ValueX, vx, nt, h, d))
	}
	if m.Kind == flow.Merged {
		return append(out, export.Floats(output.LabelKQ, other, nt, h, d))
	}
	return append(out, export.Floats(output.KeyLabel, other, nt, h, m.R))
}
