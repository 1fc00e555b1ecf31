// Command linattn integrates the exact population gradient flow of
// multi-head linear attention trained on in-context linear regression
// (Zhang, Singh, Latham & Saxe, "Training Dynamics of In-Context Learning in
// Linear Attention", ICML 2025), its reduced 1-D theory and its landscape of
// fixed points, and writes NumPy arrays with a JSON sidecar.
//
// Usage:
//
//	linattn run       [flags]   integrate the flow          → out/run.npz
//	linattn reduced   [flags]   the 1-D theory of each drop → out/reduced.npz
//	linattn landscape [flags]   all fixed points            → out/landscape.npz
//	linattn train     [flags]   train the layer on samples  → out/train.npz
//	linattn sweep -spec FILE.json [-command run|train|reduced|landscape] [-j N] [-shard I/N] [-o DIR]
//	                            many runs, resumable        → DIR/run-*.npz, DIR/index.{json,npz}
//	linattn sweep -merge DIR... combine the indexes of shards
//	linattn plot FILE.npz [-o FIGURE.png|.svg|.pdf]
//	                            draw any output             → FILE.png
//	linattn figures [NAME...]   the paper's figures         → out/figures/NAME.png
//
// With no flags, run integrates the paper's D = 4 separate key–query example
// (λ = 0.4, 0.3, 0.2, 0.1, N = 31, H = 4, R = 1, w_init = 0.01) until the
// loss has converged. Examples:
//
//	go run ./cmd/linattn run
//	go run ./cmd/linattn run -model merged -H 8
//	go run ./cmd/linattn run -spectrum power:1 -D 8 -H 9 -R 2 -winit 5e-3
//	go run ./cmd/linattn run -spec out/run.json -o again.npz
//
// Every flag is also a key of a JSON spec file given with -spec; flags on the
// command line override it. Each output FILE.npz has a sidecar FILE.json:
// the fully resolved spec plus a "meta" member (version, solver statistics,
// wall time, completeness), itself a valid -spec. In Python:
//
//	import numpy as np
//	d = np.load("out/run.npz")
//	d["t"], d["loss"]     # (S,), (S,)
//	d["K"], d["Q"]        # (S, H, R, D) separate model; d["U"] (S, H, D, D) merged
//	d["M"]                # (S, D, D) the effective map
//
// Run "linattn" (or "linattn help") for the commands and "linattn run -h"
// for the flags. -o creates the folders it names.
// Exit status: 0 done, 1 failed, 2 bad input (nothing written), 130
// interrupted (Ctrl-C; what was computed is written and marked incomplete;
// a second Ctrl-C says it is being written, a third stops at once).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/linattn/linattn/cmd/linattn/internal/cli"
)

// gcPercent is the heap growth between collections (GOGC) unless the
// environment sets one: a run's heap is mostly float64 arrays without
// pointers, which a collection hardly scans, and collecting at 1.5 times
// the live heap rather than Go's default 2 keeps the peak near the
// memory estimate. The merged full layer at D = H = 32 (linattn run
// -model merged -layer full -icl 0.5 -tasks 4 -D 32 -H 32 -spectrum
// power:1) peaked at 858 MB against 1007 MB under GOGC=100, its time
// 3:57 against 3:31 (one run each, measured when chosen).
const gcPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go interrupts(sig, cancel, os.Stderr, func() { os.Exit(cli.ExitInterrupted) })
	os.Exit(cli.Main(ctx, os.Stdout, os.Stderr, os.Args[1:]))
}

// interrupts cancels the command at the first interrupt, which then
// writes what it computed, marked incomplete. A second one (timeout -s INT
// sends one to the process and one to its group) only says so, since the
// command is already stopping; a third stops at once, with what was being
// written lost, and says that.
func interrupts(sig <-chan os.Signal, cancel func(), stderr io.Writer, exit func()) {
	<-sig
	cancel()
	<-sig
	fmt.Fprintln(stderr, "linattn: already stopping: writing what was computed (interrupt once more to stop at once, losing it)")
	<-sig
	fmt.Fprintln(stderr, "linattn: stopped at once: the output being written is lost (no partial file is left under its name)")
	exit()
}
