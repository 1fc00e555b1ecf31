package output

import (
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// RunArrays lays out the run tr of s as linattn run writes it (out/run.npz):
// Times, Loss, StateTimes (when the states are kept at some of the times
// only: flow.Trajectory.StateIndex), Values, then Keys, Queries and KeyAlignment (separate model)
// or KeyQuery (merged), Map, the task (DataArrays), Transitions and
// TransitionM; then the full layer's extra blocks (ExtraArrays), the test
// losses when the run computed them, and the fixed tasks (Tasks) when they
// entered. Under a task law with fixed tasks Plateaus holds the plateaus
// read off the run (flow.Trajectory.Plateaus), not the in-context
// L(M_m). tr.States holds s's states in the original basis, row-major.
func RunArrays(s *flow.System, tr *flow.Trajectory) []export.Array {
	n := s.Len()
	nt := len(tr.States) / n // the states kept: at every output time unless StateIndex
	ns := len(tr.Times)
	d, h, r := s.Dim(), s.Model.H, s.Model.R
	nr := s.Model.ReducedLen(d)
	hrd := h * r * d
	v := make([]float64, 0, nt*h)
	mOrig := make([]float64, nt*d*d)
	var u, k, q, ka []float64 // U (merged); K, Q, key alignment (separate)
	if s.Model.Kind == flow.Merged {
		u = make([]float64, 0, nt*(nr-h))
	} else {
		k, q, ka = make([]float64, 0, nt*hrd), make([]float64, 0, nt*hrd), make([]float64, 0, nt*hrd)
	}
	ye := make([]float64, n)
	for i := 0; i < nt; i++ {
		y := tr.States[i*n : (i+1)*n]
		v = append(v, y[:h]...)
		s.ToEigen(ye, y) // once per sample, for M and the alignment
		s.MapOfEigenTo(mOrig[i*d*d:(i+1)*d*d], ye)
		if s.Model.Kind == flow.Merged {
			u = append(u, y[h:nr]...)
			continue
		}
		k = append(k, y[h:h+hrd]...)
		q = append(q, y[h+hrd:nr]...)
		keys, _ := s.AlignmentEigen(ye)
		ka = append(ka, keys...)
	}
	ms := make([]int64, len(tr.Transitions))
	ts := make([]float64, len(tr.Transitions))
	for i, tn := range tr.Transitions {
		ms[i], ts[i] = int64(tn.M), tn.T
	}
	arrays := []export.Array{
		export.Floats(Times, tr.Times, ns),
		export.Floats(Loss, tr.Loss, ns),
	}
	if tr.StateIndex != nil {
		st := make([]float64, len(tr.StateIndex))
		for i, k := range tr.StateIndex {
			st[i] = tr.Times[k]
		}
		arrays = append(arrays, export.Floats(StateTimes, st, len(st)))
	}
	arrays = append(arrays, export.Floats(Values, v, nt, h))
	if s.Model.Kind == flow.Merged {
		arrays = append(arrays, export.Floats(KeyQuery, u, nt, h, d, d))
	} else {
		arrays = append(arrays,
			export.Floats(Keys, k, nt, h, r, d),
			export.Floats(Queries, q, nt, h, r, d),
			export.Floats(KeyAlignment, ka, nt, h, r, d))
	}
	arrays = append(arrays, export.Floats(Map, mOrig, nt, d, d))
	data := DataArrays(s.Data)
	if !s.Data.Standard() {
		data[len(data)-1] = export.Floats(Plateaus, tr.Plateaus, len(tr.Plateaus))
	}
	arrays = append(arrays, data...)
	arrays = append(arrays,
		export.Floats(Transitions, ts, len(ts)),
		export.Ints(TransitionM, ms, len(ms)))
	arrays = append(arrays, ExtraArrays(s.Model, d, tr.States, nt)...)
	if tr.TestICL != nil {
		arrays = append(arrays, export.Floats(TestICL, tr.TestICL, ns), export.Floats(TestIWL, tr.TestIWL, ns))
		if s.Data.HasFixed() {
			arrays = append(arrays, export.Floats(TestIDG, tr.TestIDG, ns))
		}
	}
	if tasks := s.Data.Tasks(); len(tasks.Fixed) > 0 && (!s.Data.InContext() || tr.TestIWL != nil) {
		arrays = append(arrays, export.Floats(Tasks, slices.Concat(tasks.Fixed...), len(tasks.Fixed), d))
	}
	return arrays
}

// ExtraArrays are the extra blocks of a layer in the nt states (model m
// at dimension d, flow.System's layout): ValueX (nt, H, D, full layer),
// then LabelKQ (nt, H, D, merged) or KeyLabel (nt, H, R, separate); none
// for the reduced layer.
func ExtraArrays(m flow.Model, d int, states []float64, nt int) []export.Array {
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
		out = append(out, export.Floats(ValueX, vx, nt, h, d))
	}
	if m.Kind == flow.Merged {
		return append(out, export.Floats(LabelKQ, other, nt, h, d))
	}
	return append(out, export.Floats(KeyLabel, other, nt, h, m.R))
}

// DataArrays are the arrays that describe the task, in every output but a
// sweep's index: Covariance (D, D), Eigvals (D), Eigvecs (D, D) with
// column d the eigenvector e_d, and Plateaus (D+1) = L(M_m).
func DataArrays(data *law.Data) []export.Array {
	d := data.Dim()
	return []export.Array{
		export.Floats(Covariance, rowMajor(data.Covariance()), d, d),
		export.Floats(Eigvals, data.Lambda(), d),
		export.Floats(Eigvecs, rowMajor(data.Vecs()), d, d),
		export.Floats(Plateaus, data.PlateauLevels(), d+1),
	}
}

// rowMajor returns m's elements in C order.
func rowMajor(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out = append(out, m.At(i, j))
		}
	}
	return out
}
