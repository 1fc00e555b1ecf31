package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/linattn/linattn/figures"
	"github.com/linattn/linattn/mlp"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

// The rest of the paper's figures: its discussion's and its appendix's
// (their parameters and time axes: docs/math.md, "The paper's figures").
// Unless a figure changes them, the settings of the paper's figure 1
// (merged, H = 8, w_init = 3·10⁻⁵: the paper code's initialization) and
// figure 3 (separate, H = 4, R = 1, w_init = 0.01, as linattn run) on the
// D = 4 example λ = 0.4, 0.3, 0.2, 0.1 with random eigenvectors, N = 31.
var appendixFigures = []paperFigure{
	{Name: "init-sweep", About: "merged (H = 8) and separate (H = 4, R = 1) attention on the D = 4 example (λ = 0.4, 0.3, 0.2, 0.1, N = 31) from w_init = 0.001 to 3: a larger initialization shortens every plateau, and at the largest the loss decays without one (paper fig. init-sweep)",
		Steps: []figureStep{sweepStep("run", "init-sweep-merged", `{"model": "merged", "H": 8, "winit": `+initScales+`}`),
			sweepStep("run", "init-sweep-separate", `{"H": 4, "winit": `+initScales+`}`)},
		Draw: func(data string) (*figures.Figure, error) {
			return figures.Sweeps(indexes(data, "init-sweep-merged", "init-sweep-separate"), figures.Options{By: "winit"})
		}},
	{Name: "varylen", About: "merged (H = 8, w_init = 3·10⁻⁵) and separate (H = 4) attention on the D = 4 example trained with the next-token loss over context lengths 1 … 31 (ν = H₃₁/31), six seeds each: the same dynamics, the plateaus at the levels of that ν (paper fig. varylen, eq. attnS-loss-varylen)",
		Steps: []figureStep{sweepStep("run", "varylen-merged", `{"model": "merged", "H": 8, "winit": 3e-5, "ntp-max": 31, "seed": `+sixSeeds+`}`),
			sweepStep("run", "varylen-separate", `{"H": 4, "ntp-max": 31, "seed": `+sixSeeds+`}`)},
		Draw: func(data string) (*figures.Figure, error) {
			return figures.Sweeps(indexes(data, "varylen-merged", "varylen-separate"), figures.Options{})
		}},
	{Name: "softmax", About: "softmax attention (ρ = 1, as the paper's code), merged (H = 8, w_init = 3·10⁻⁵) and separate (H = 4), on the D = 4 example, trained on P = 1000 sequences by gradient descent, six seeds each, beside the exact flow of linear attention from the same starts (dashed): one drop (merged), several (separate) (paper fig. softmax-attn; minutes of data)",
		Steps: []figureStep{sweepStep("train", "softmax-merged", `{"model": "merged", "H": 8, "winit": 3e-5, "attention": "softmax", "P": 1000, "test": 0, "lr": 0.1, "steps": 1500, "samples": 401, "seed": `+sixSeeds+`}`),
			sweepStep("train", "softmax-separate", `{"H": 4, "attention": "softmax", "P": 1000, "test": 0, "lr": 0.5, "steps": 3000, "samples": 401, "seed": `+sixSeeds+`}`)},
		Draw: func(data string) (*figures.Figure, error) {
			return figures.Sweeps(indexes(data, "softmax-merged", "softmax-separate"), figures.Options{})
		}, Slow: true},
	{Name: "equal-eigs", About: "separate attention, D = 4, λ = 0.35, 0.35, 0.15, 0.15, N = 31, H = 4, at R = 1, 2, 3, 4, six seeds each: plateaus between equal eigenvalues too, which some seeds skip (paper fig. attnS-loss-eqeig)",
		Steps: []figureStep{sweepStep("run", "equal-eigs", `{"eigs": [0.35, 0.35, 0.15, 0.15], "H": 4, "R": [1, 2, 3, 4], "seed": `+sixSeeds+`}`)},
		Data:  "equal-eigs/index.npz", Plot: figures.Options{By: "R", Panels: true}},
	{Name: "rank-values", About: "separate attention on the D = 4 example with H = 5 at R = 2, 3, 4: the loss and every head's value weight; a new value weight grows at the drops from the plateaus m = 0, R, 2R, … only (paper fig. attnS-lowrank-value)",
		Steps: []figureStep{sweepStep("run", "rank-values", `{"H": 5, "R": [2, 3, 4]}`)},
		Draw: func(data string) (*figures.Figure, error) {
			return figures.RankValues(glob(data, "rank-values/run-*.npz"))
		}},
	{Name: "rank-supp", About: "the rank figure at R = 3, 5, 6, 7: D = 8, N = 31, H = 9, λ_d ∝ 1/d with trace 1, six seeds each (paper fig. attnS-lowrank-supp)",
		Steps: []figureStep{sweepStep("run", "rank-supp", `{"spectrum": "power:1", "D": 8, "N": 31, "H": 9, "R": [3, 5, 6, 7], "seed": `+sixSeeds+`}`)},
		Data:  "rank-supp/index.npz", Plot: figures.Options{By: "R", Panels: true}},
	{Name: "merged-weights", About: "merged attention on the D = 4 example, H = 8, w_init = 3·10⁻⁵: its weights vec(U_i) at three times beside those of the two-layer linear network on z from the same start (its exact flow, package mlp, integrated when drawn), E[y zᵀ], E[y zᵀ]E[z zᵀ]⁻¹ and Λ⁻¹, and the two loss curves (paper figs. attnM, right, and attnM-W)",
		Steps: step("run", "-model", "merged", "-H", "8", "-winit", "3e-5", "-o", "DATA/merged-weights.npz"),
		Draw: func(data string) (*figures.Figure, error) {
			return mergedWeightsFigure(filepath.Join(data, "merged-weights.npz"))
		}},
}

// initScales are the initialization scales of init-sweep; sixSeeds the
// seeds of the figures that draw six runs, as the paper's do.
const (
	initScales = `[0.001, 0.01, 0.1, 1, 3]`
	sixSeeds   = `[1, 2, 3, 4, 5, 6]`
)

// paperFigures are all the figures linattn figures makes, in the order
// -h lists them.
var paperFigures = append(append(mainFigures[:len(mainFigures):len(mainFigures)], appendixFigures...), depthFigure)

// indexes are the index files of the sweeps under data with the given
// names.
func indexes(data string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(data, n, "index.npz")
	}
	return out
}

// mergedWeightsFigure draws the merged run at path beside the two-layer
// linear network on z (package mlp) from the run's initial weights: the
// network's exact flow is integrated here, at the run's output times, on
// the run's problem (its sidecar's spec).
func mergedWeightsFigure(path string) (*figures.Figure, error) {
	of, err := output.Open(path)
	if err != nil {
		return nil, err
	}
	sp, err := spec.Parse(of.Sidecar.Spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	job, err := spec.Resolve(sp, spec.RunGroups()...) // a run's sidecar
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	times, _, err := of.Floats(output.Times, -1)
	if err != nil {
		return nil, err
	}
	h, d := sp.H, job.Data.Dim()
	net, err := mlp.New(job.Data, h, sp.Tau)
	if err != nil {
		return nil, err
	}
	z0, err := mlp.FromAttention(job.Y0[:h], job.Y0[h:], d)
	if err != nil {
		return nil, err
	}
	tr, err := net.Run(context.Background(), z0, times, 1e-10, 1e-14)
	if err != nil {
		return nil, err
	}
	nw := figures.Network{Loss: tr.Loss, EYZ: job.Data.EYZ()}
	for _, y := range tr.States {
		nw.W1 = append(nw.W1, y[h:])
	}
	nw.Solution = job.Data.VecFromEigen(job.Data.MapEigenvalues())
	inv := job.Data.Lambda()
	for i, l := range inv {
		inv[i] = 1 / l
	}
	nw.LambdaInv = job.Data.VecFromEigen(inv)
	return figures.MergedWeights(path, nw)
}
