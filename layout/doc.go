// Package layout lays out what linattn writes from the library's values:
// the arrays of a run of package flow (Run: out/run.npz, byte for byte),
// of its law (Law), of the closed form beside a merged run with white
// covariance (ClosedForm), and the parts of a sidecar's meta that describe
// the problem, the solver and the run's end (Problem, Solver, RunMeta).
//
// Package output owns the files: the name, shape and unit of every array,
// the sidecar, writing them atomically and reading them back. It imports
// neither flow nor law; this package fills output's layout from them, so
// that neither flow nor law knows the files.
//
//	tr, err := s.Run(ctx, y0, flow.RunSettings{})
//	arrays := layout.Run(s, tr) // t, loss, v, K, Q, … as in out/run.npz
//	err = export.SaveNPZ("run.npz", arrays)
package layout
