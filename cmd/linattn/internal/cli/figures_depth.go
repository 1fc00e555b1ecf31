package cli

import (
	"github.com/linattn/linattn/figures"
)

// depthFigure is the figure of depth (issue 44; docs/math.md, "Depth"):
// (a) Bordelon, Letey and Pehlevan's isotropic setting at D = 16
// (x ~ N(0, I/D): -white 1/16, w ~ N(0, I), noiseless, α = N/D from 0.5
// to 8) for L = 1 to 4, untied and tied, merged with one head (any map);
// (b) the paper's D = 4 example with 1, 2 and 3 separate layers; (c)
// Raventós et al.'s setting (raventosSpec's problem) with the stack of
// reduced layers, K = 2^0 … 2^20 tasks drawn N(0, I) and on fresh tasks,
// L = 1 to 4. Four layers take some 30 times three layers' work an
// evaluation (docs/math.md), most of the figure's ten minutes.
var depthFigure = paperFigure{Name: "depth",
	About: "depth: (a) the converged in-context loss of the exact flow of L = 1 to 4 layers against α = N/D in Bordelon et al.'s isotropic setting (D = 16, x ~ N(0, I/D)), beside their D → ∞ loss of L steps of gradient descent with the best step; (b) the loss curves of the paper's D = 4 example with 1, 2 and 3 separate layers; (c) the converged in-context error against K in Raventós et al.'s setting by depth (L = 1 to 4), beside ridge and dMMSE (docs/math.md, \"Depth\")",
	Steps: []figureStep{
		sweepStep("run", "depth-iso", depthIsoSpec+`, "layers": [1, 2, 3, 4]}`),
		sweepStep("run", "depth-iso-tied", depthIsoSpec+`, "layers": [2, 3, 4], "tie": true}`),
		sweepStep("run", "depth-curves", `{"layers": [1, 2, 3]}`),
		sweepStep("run", "depth-tasks", depthTasksSpec+`, "icl": 0, "task-draw": "gaussian", "tasks": [`+powersOfTwo(20)+`], "layers": [1, 2, 3, 4]}`),
		sweepStep("run", "depth-fresh", depthTasksSpec+`, "layers": [1, 2, 3, 4]}`),
	},
	Draw: func(data string) (*figures.Figure, error) {
		return figures.Depth(figures.DepthRuns{
			Iso:    append(glob(data, "depth-iso/run-*.npz"), glob(data, "depth-iso-tied/run-*.npz")...),
			Curves: glob(data, "depth-curves/run-*.npz"),
			Tasks:  glob(data, "depth-tasks/run-*.npz"),
			Fresh:  glob(data, "depth-fresh/run-*.npz"),
		}, figures.ReferenceMC{Samples: 4000, MinSamples: 200, Seed: 1})
	}, Slow: true}

// depthIsoSpec is the isotropic setting of the depth figure without its
// closing brace; depthTasksSpec Raventós et al.'s for the stack of reduced
// layers.
const (
	depthIsoSpec   = `{"model": "merged", "H": 1, "white": 0.0625, "D": 16, "N": [8, 16, 32, 64, 128], "samples": 200`
	depthTasksSpec = `{"model": "merged", "H": 1, "white": 1, "D": 8, "N": 16, "noise": 0.25, "samples": 200`
)
