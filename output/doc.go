// Package output is what a linattn run produces and how to read it back:
// the names, shapes and units of the arrays of every command's FILE.npz
// (names.go), the sidecar FILE.json beside it (Sidecar: the resolved spec
// as JSON, which package spec decodes, and Meta), writing both atomically
// (Write, WriteIndex) and reading any output back (Open, ReadSidecar).
//
// An output is a NumPy .npz archive (package export) whose sidecar is the
// fully resolved specification of the job, a valid spec that repeats it
// bit for bit, plus a "meta" member: the program and version, whether the
// command completed and why not, the SHA-256 and the shapes of the arrays,
// the problem's derived quantities, the solver's statistics and the
// command's numbers (Meta.Result). A sweep writes one output per run and
// an index (Index) of them.
//
// It imports neither the flow, the law nor the integrators: package layout
// fills this layout from them (layout.Run lays out a flow.Trajectory
// exactly as linattn run writes it), so that a Go program reproduces
// out/run.npz through the library:
//
//	tr, _ := s.Run(ctx, y0, flow.RunSettings{})
//	arrays := layout.Run(s, tr) // t, loss, v, K, Q, … as in out/run.npz
//
// In Python:
//
//	import json, numpy as np
//	d, meta = np.load("out/run.npz"), json.load(open("out/run.json"))["meta"]
//	d["t"], d["loss"], d["K"].shape, meta["status"]
package output
