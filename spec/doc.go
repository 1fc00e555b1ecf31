// Package spec resolves a job description — the fields of every linattn
// command, from flags, spec files or an earlier output's sidecar — into
// the library objects that run it: the law of the data (package law), the
// flow's System and initial state, the integrator and its settings, and
// train's Config (docs/cli.md, "Specifying a problem"). Every default is
// filled in and every field checked, with errors that name the flag and
// its allowed range; the resolved spec, written back as a sidecar, repeats
// the job exactly, and a Go program reruns one (ReadFile, Resolve,
// Job.RunSettings, Job.RunArrays).
package spec
