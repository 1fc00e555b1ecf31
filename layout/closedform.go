package layout

import (
	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/reduced"
)

// ClosedForm is, for the merged model with white Λ on the paper's
// task, the closed-form loss σ(t) at the times (reduced.MergedWhite, with
// s₀ = ‖v(0)‖² of the first state; docs/math.md, "Closed form for the
// merged model with white covariance"); none otherwise.
func ClosedForm(s *flow.System, times, states []float64) []export.Array {
	data, h := s.Data, s.Model.H
	if s.Model.Kind != flow.Merged || !data.IsWhite() || !data.Standard() {
		return nil
	}
	var s0 float64
	for _, v := range states[:h] {
		s0 += v * v
	}
	mw := reduced.MergedWhite{C: data.Lambda()[0], Nu: data.Nu(), Tau: s.Model.Tau, D: data.Dim(), S0: s0}
	cf := make([]float64, len(times))
	for i, t := range times {
		var err error
		if cf[i], err = mw.Loss(t); err != nil {
			return nil
		}
	}
	return []export.Array{export.Floats(output.LossClosedForm, cf, len(cf))}
}
