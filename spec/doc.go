// Package spec is the job description of every linattn command: the table
// of its fields (Fields: name, group, usage, default, alternatives), from
// which the flags, the usage text, parsing and the JSON form of spec files,
// sidecars and sweeps are all derived (docs/cli.md, "Specifying a
// problem"); and resolution, from flags, spec files or an earlier output's
// sidecar, into the library objects that run it: the law of the data
// (package law), the flow's System and initial state, its run settings,
// and train's Config.
//
// Each default is written once: in the table, or, for the solver's fields
// (-T, -tol, -samples, -grid, -method, -rtol, -atol), in package flow,
// which fills them in (flow.RunSettings.Resolve) and reports what it ran
// with (flow.Trajectory.Resolved); Job.Record writes that into the spec
// that the sidecar holds. Every given field is checked, with errors that
// name the flag and its allowed range. The resolved spec, written back as
// a sidecar, repeats the job exactly, and a Go program reruns one
// (ReadFile, Resolve, Job.Run, Job.RunArrays).
package spec
