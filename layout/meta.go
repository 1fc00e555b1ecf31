package layout

import (
	"math"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
)

// Problem describes the problem of s for a sidecar.
func Problem(s *flow.System) output.ProblemMeta {
	p := output.ProblemMeta{
		Eigvals: s.Data.Lambda(), Nu: s.Data.Nu(), Plateaus: s.Data.PlateauLevels(),
		LStar: s.Data.MinLoss(), ExpressivityLimited: s.ExpressivityLimited, StateSize: s.Len(),
	}
	if l := s.MinLoss(); !math.IsNaN(l) {
		p.LMin = &l
	}
	return p
}

// Solver describes the run tr for a sidecar: the method and tolerances
// it resolved (Resolved; no method's name where there is none, as in a
// Trajectory not made by System.Run), the work it did (Stats) and where
// it ended.
func Solver(tr *flow.Trajectory) *output.SolverMeta {
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

// RunMeta is the meta of the sidecar of the run tr of s that returned err,
// as linattn run writes it and spec.RunFile keeps it: command run, complete
// when err is nil, the status (flow.Status's text, or, after an error,
// what the output holds: the output times reached, or the samples at
// accepted steps of the first pass) with the error's text, the problem
// (Problem) and the solver (Solver). The caller adds the program's
// version, the inputs, the wall time and the result.
func RunMeta(s *flow.System, tr *flow.Trajectory, err error) output.Meta {
	m := output.Meta{Program: output.Program, Command: "run", Complete: err == nil, Status: tr.Status.String(),
		Problem: Problem(s), Solver: Solver(tr)}
	if err != nil {
		what := "the output times reached"
		if tr.Sampling == flow.AtSteps {
			what = "samples at accepted steps of the first pass"
		}
		m.Status, m.Error = Incomplete(tr.Status == flow.Interrupted)+what, err.Error()
	}
	return m
}

// Incomplete begins the status of an output that holds part of its job:
// "interrupted: " when a signal or a deadline stopped it, else
// "incomplete: ".
func Incomplete(interrupted bool) string {
	if interrupted {
		return "interrupted: "
	}
	return "incomplete: "
}
