package flow

import (
	"math"
	"slices"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/output"
)

// What a run writes: the arrays and the sidecar's parts of linattn run
// (package output owns their names, shapes and files).

// RunArrays lays out the run tr of s as linattn run writes it (out/run.npz):
// Times, Loss, StateTimes (when the states are not kept at every output
// time: Trajectory.AllStates), Values, then Keys, Queries and
// KeyAlignment (separate model)
// or KeyQuery (merged), Map, the law (law.Data.Arrays), Transitions and
// TransitionM; then the full layer's extra blocks (ExtraArrays), the test
// losses when the run computed them (TestICL; TestIWL and TestIDG only
// with fixed tasks, which define those tests: without them the run has
// none, and the arrays are absent, never NaN), and the fixed tasks (Tasks)
// when they entered. Under a task law with fixed tasks Plateaus holds the plateaus
// read off the run (Trajectory.Plateaus), not the in-context
// L(M_m). tr.States holds s's states in the original basis, row-major.
func RunArrays(s *System, tr *Trajectory) []export.Array {
	n := s.Len()
	nt := len(tr.States) / n // the states kept: at every output time unless thinned
	ns := len(tr.Times)
	d, h, r := s.Dim(), s.Model.H, s.Model.R
	sets, size := s.Model.HeadSets(), s.Model.headsLen(d)
	hrd := h * r * d
	v := make([]float64, 0, nt*sets*h)
	mOrig := make([]float64, nt*sets*d*d)
	var u, k, q, ka []float64 // U (merged); K, Q, key alignment (separate)
	if s.Model.Kind == Merged {
		u = make([]float64, 0, nt*sets*(size-h))
	} else {
		k, q, ka = make([]float64, 0, nt*sets*hrd), make([]float64, 0, nt*sets*hrd), make([]float64, 0, nt*sets*hrd)
	}
	ye := make([]float64, n)
	for i := 0; i < nt; i++ {
		s.ToEigen(ye, tr.States[i*n:(i+1)*n]) // once per sample, for M and the alignment
		for l := 0; l < sets; l++ {
			y, yl := tr.States[i*n+l*size:i*n+(l+1)*size], ye[l*size:(l+1)*size]
			v = append(v, y[:h]...)
			s.setMapTo(mOrig[(i*sets+l)*d*d:(i*sets+l+1)*d*d], yl)
			if s.Model.Kind == Merged {
				u = append(u, y[h:]...)
				continue
			}
			k = append(k, y[h:h+hrd]...)
			q = append(q, y[h+hrd:]...)
			ka = append(ka, s.alignment(yl[h:h+hrd])...)
		}
	}
	// The head arrays' shape: a layer axis for the heads of an untied
	// stack's layers.
	shape := func(dims ...int) []int {
		if s.Model.Depth() > 1 && !s.Model.Tied {
			return append([]int{nt, sets}, dims...)
		}
		return append([]int{nt}, dims...)
	}
	ms := make([]int64, len(tr.Transitions))
	ts := make([]float64, len(tr.Transitions))
	for i, tn := range tr.Transitions {
		ms[i], ts[i] = int64(tn.M), tn.T
	}
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
	arrays = append(arrays, export.Floats(output.Values, v, shape(h)...))
	if s.Model.Kind == Merged {
		arrays = append(arrays, export.Floats(output.KeyQuery, u, shape(h, d, d)...))
	} else {
		arrays = append(arrays,
			export.Floats(output.Keys, k, shape(h, r, d)...),
			export.Floats(output.Queries, q, shape(h, r, d)...),
			export.Floats(output.KeyAlignment, ka, shape(h, r, d)...))
	}
	arrays = append(arrays, export.Floats(output.Map, mOrig, shape(d, d)...))
	data := s.Data.Arrays()
	if !s.plan.PaperTheory {
		data[len(data)-1] = export.Floats(output.Plateaus, tr.Plateaus, len(tr.Plateaus))
	}
	arrays = append(arrays, data...)
	arrays = append(arrays,
		export.Floats(output.Transitions, ts, len(ts)),
		export.Ints(output.TransitionM, ms, len(ms)))
	arrays = append(arrays, ExtraArrays(s.Model, d, tr.States, nt)...)
	if tr.TestICL != nil {
		arrays = append(arrays, export.Floats(output.TestICL, tr.TestICL, ns))
		if s.Data.HasFixed() {
			arrays = append(arrays, export.Floats(output.TestIWL, tr.TestIWL, ns), export.Floats(output.TestIDG, tr.TestIDG, ns))
		}
	}
	if tasks := s.Data.Tasks(); len(tasks.Fixed) > 0 && (!s.Data.InContext() || tr.TestIWL != nil) {
		arrays = append(arrays, export.Floats(output.Tasks, slices.Concat(tasks.Fixed...), len(tasks.Fixed), d))
	}
	return arrays
}

// ExtraArrays are the extra blocks of a layer in the nt states (model m
// at dimension d, System's layout): ValueX (nt, H, D, full layer),
// then LabelKQ (nt, H, D, merged) or KeyLabel (nt, H, R, separate); none
// for the reduced layer.
func ExtraArrays(m Model, d int, states []float64, nt int) []export.Array {
	if m.Layer == ReducedLayer {
		return nil
	}
	n, nr, h := m.StateLen(d), m.ReducedLen(d), m.H
	nx := 0 // the length of v_x
	if m.Layer == FullLayer {
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
	if m.Kind == Merged {
		return append(out, export.Floats(output.LabelKQ, other, nt, h, d))
	}
	return append(out, export.Floats(output.KeyLabel, other, nt, h, m.R))
}

// ProblemMeta describes the problem of s for a sidecar.
func (s *System) ProblemMeta() output.ProblemMeta {
	p := output.ProblemMeta{
		Eigvals: s.Data.Lambda(), Nu: s.Data.Nu(), Plateaus: s.Data.PlateauLevels(),
		LStar: s.Data.MinLoss(), ExpressivityLimited: s.ExpressivityLimited, StateSize: s.Len(),
	}
	if l := s.MinLoss(); !math.IsNaN(l) {
		p.LMin = &l
	}
	return p
}

// SolverMeta describes the run for a sidecar: the method and tolerances
// it resolved (Resolved; no method's name where there is none, as in a
// Trajectory not made by Run), the work it did (Stats) and where it ended.
func (tr *Trajectory) SolverMeta() *output.SolverMeta {
	r, st := tr.Resolved, tr.Stats
	by := make([]output.MethodMeta, len(st.PerMethod))
	for i, pm := range st.PerMethod {
		by[i] = output.MethodMeta{Method: pm.Name, Steps: pm.Steps, Rejected: pm.Rejected, FuncEvals: pm.FuncEvals}
	}
	method := ""
	if r.Method != nil {
		method = r.Method.Name()
	}
	return &output.SolverMeta{Method: method, RTol: r.RTol, ATol: r.ATol, Steps: st.Steps, FuncEvals: st.FuncEvals,
		Rejected: st.Rejected, TEnd: tr.FinalT, ByMethod: by, Switches: st.Switches}
}
