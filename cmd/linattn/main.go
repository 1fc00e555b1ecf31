// Command linattn integrates the exact population gradient flow of
// multi-head linear attention trained on in-context linear regression
// (Zhang, Singh, Latham & Saxe, ICML 2025) and writes the results as NumPy
// arrays.
//
// Usage:
//
//	linattn [command] [flags]
//
// With no command it runs "run" on the paper's D = 4 separate key–query
// example (λ = 0.4, 0.3, 0.2, 0.1, N = 31, H = 4, R = 1, w_init = 0.01):
//
//	go run ./cmd/linattn
//	go run ./cmd/linattn run -model merged -heads 8
//	go run ./cmd/linattn run -powerlaw 1 -dim 8 -heads 9 -rank 2 -winit 5e-3
//
// run writes out/trajectory.npz and out/metadata.json. In Python:
//
//	import numpy as np
//	d = np.load("out/trajectory.npz")
//	d["t"], d["loss"]            # (T,), (T,)
//	d["v"]                       # (T, H) value weights
//	d["keys"], d["queries"]      # (T, H, R, D), original basis (separate)
//	d["key_alignment"]           # (T, H, R, D): |<k, e_d>| / |k|
//	d["U"]                       # (T, H, D, D) (merged)
//	d["plateau_levels"]          # (D+1,) L(M_m)
//	d["transition_m"], d["transition_t"]  # drops: loss crosses the half-way levels
//	d["lambda"], d["eigenvectors"]        # eigenvectors[:, d] is e_d
//
// Run "linattn help" for the commands and "linattn run -h" for the flags.
// The exit code is 0 on success, 1 when the computation failed and 2 for a
// usage error.
package main

import (
	"os"

	"github.com/linattn/linattn/internal/cli"
)

func main() { os.Exit(cli.Main(os.Stdout, os.Stderr, os.Args[1:])) }
