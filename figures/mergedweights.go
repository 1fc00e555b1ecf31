package figures

import (
	"fmt"
	"math"

	"github.com/linattn/linattn/output"

	"gonum.org/v1/plot/vg"
)

// Network is the two-layer linear network on z (package mlp) beside a
// merged run: its exact flow from the run's initial weights (w₂ = v, the
// rows of W₁ the vec(U_i)ᵀ) at the run's output times, and the maps the
// paper's figure attnM-W compares the weights with, each vec'd (columns
// stacked) to D² entries.
type Network struct {
	Loss []float64   // at the run's output times
	W1   [][]float64 // per output time: H × D², row-major (row i: unit i)
	// EYZ is E[y z] = vec(Λ²), the direction the first layer takes on
	// the plateau; Solution is E[y z]ᵀE[z zᵀ]⁻¹ = vec(A⁻¹Λ), the
	// regression on z the network converges to; LambdaInv is vec(Λ⁻¹),
	// its limit N → ∞ (paper eq. attnM-converged).
	EYZ, Solution, LambdaInv []float64
}

// MergedWeights draws a merged run (linattn run -model merged) beside the
// network on z from the same start (paper figs. attnM, right, and
// attnM-W): the two loss curves, and at three times — on the plateau (half
// the drop time), at the drop and at the end — the attention's vec(U_i)ᵀ
// stacked as rows (its W₁) beside the network's W₁, with E[y zᵀ] beside
// the plateau's, the regression on z E[y zᵀ]E[z zᵀ]⁻¹ and vec(Λ⁻¹)ᵀ beside
// the end's. Each
// matrix is divided by its largest entry: the figure shows directions,
// the loss the scale.
func MergedWeights(run string, net Network) (*Figure, error) {
	f, rd, u, err := readMergedRun(run, net)
	if err != nil {
		return nil, err
	}
	s, d := len(rd.t), rd.d
	drop := rd.trans[0]
	snaps := []int{nearest(rd.t, drop/2), nearest(rd.t, drop), s - 1}
	fig := &Figure{Title: problemTitle(f, d, rd.h, 0, true) + ": attention and the network on z from the same start"}
	fig.Grid = [][]*Panel{{networkLossPanel(rd, net, snaps)}}
	refs := [][][]float64{{net.EYZ}, nil, {net.Solution, net.LambdaInv}}
	// One power per text: powerText raises what follows the "^".
	refNames := []string{"E[y zᵀ]", "", "regression on z, Λ^−1"}
	for k, i := range snaps {
		row := weightPanels(rd, u, net.W1[i], fmt.Sprintf("(%c) t = %s", 'a'+k, shortNumber(rd.t[i])), i)
		var ref *Panel
		if refs[k] != nil {
			ref = &Panel{Title: refNames[k], Heat: normalizedRows(refs[k])}
		}
		fig.Grid = append(fig.Grid, append(row, ref, nil))
	}
	fig.Grid[1][3] = &Panel{ColorBar: 1, YLabel: "entry / largest"}
	fig.Widths = []float64{1, 1, 1, barShare}
	fig.Heights = []float64{1.4, 1, 1, 1}
	fig.Width, fig.Height = pageWidth, 7.2*vg.Inch
	fig.MinWidth, fig.MinHeight = minPageWidth, 6*vg.Inch
	fig.Caption = "Each matrix is divided by its largest entry; the loss of the network (dashed) lies on the attention's. " +
		"The first layers are rank one, their rows parallel: along E[y zᵀ] on the plateau, and at the end along the regression on z (top row), close to vec of the inverse of Λ (bottom row; equal as N → ∞)."
	return fig, nil
}

// readMergedRun reads the merged run beside which the network is drawn:
// its data, its key–query matrices U (S, H, D, D), and checks that the
// network matches it.
func readMergedRun(run string, net Network) (*file, *runData, []float64, error) {
	f, err := open(run)
	if err != nil {
		return nil, nil, nil, err
	}
	if f.kind != "run" || f.trained {
		return nil, nil, nil, fmt.Errorf("%s: want the output of linattn run -model merged", run)
	}
	rd, err := readRun(f)
	if err != nil {
		return nil, nil, nil, err
	}
	s, h, d := len(rd.t), rd.h, rd.d
	switch {
	case !rd.merged:
		return nil, nil, nil, fmt.Errorf("%s: a separate run; the network on z is merged attention's", run)
	case len(rd.ts) != s:
		return nil, nil, nil, fmt.Errorf("%s keeps its states at %d of its %d times; want every time (-state-every 1)", run, len(rd.ts), s)
	case len(rd.trans) == 0:
		return nil, nil, nil, fmt.Errorf("%s: the run has no drop", run)
	case len(net.Loss) != s || len(net.W1) != s:
		return nil, nil, nil, fmt.Errorf("figures: the network has %d losses and %d weights for the run's %d times", len(net.Loss), len(net.W1), s)
	}
	for _, x := range [][]float64{net.EYZ, net.Solution, net.LambdaInv} {
		if len(x) != d*d {
			return nil, nil, nil, fmt.Errorf("figures: a reference map of %d entries, want D² = %d", len(x), d*d)
		}
	}
	for _, w := range net.W1 {
		if len(w) != h*d*d {
			return nil, nil, nil, fmt.Errorf("figures: the network's first layer has %d weights, want H·D² = %d", len(w), h*d*d)
		}
	}
	u, _, err := f.Floats(output.KeyQuery, s, h, d, d)
	return f, rd, u, err
}

// networkLossPanel: the two losses on a linear time axis, the times of
// the weights drawn below marked a, b, c.
func networkLossPanel(rd *runData, net Network, snaps []int) *Panel {
	p := &Panel{XLabel: "t / τ", YLabel: "loss", XRange: timeRange(rd.t, false, false), Legend: TopRight}
	p.Curves = []Curve{{Label: "ATTN_M (exact flow)", X: rd.t, Y: rd.loss, Color: black},
		{Label: "MLP(z) (exact flow)", X: rd.t, Y: net.Loss, Color: okabeIto[0], Dashed: true}}
	p.HLines = plateauLines(rd.levels, []int{0, rd.d})
	marks := Points{Color: okabeIto[1]}
	for k, i := range snaps {
		marks.X, marks.Y = append(marks.X, rd.t[i]), append(marks.Y, rd.loss[i])
		marks.Text = append(marks.Text, string(rune('a'+k)))
	}
	p.Points = []Points{marks}
	return p
}

// weightPanels are the first layers at output time i: the attention's
// vec(U_i)ᵀ as rows beside the network's W₁ (H × D², row-major).
func weightPanels(rd *runData, u, w1 []float64, label string, i int) []*Panel {
	h, dd := rd.h, rd.d*rd.d
	attn, mlp := make([][]float64, h), make([][]float64, h)
	for j := range attn {
		attn[j] = vecOf(u[(i*h+j)*dd:(i*h+j+1)*dd], rd.d)
		mlp[j] = w1[j*dd : (j+1)*dd]
	}
	return []*Panel{
		{Title: label + ": ATTN_M, vec(Uᵢ)ᵀ", YLabel: "head i", Heat: normalized(attn)},
		{Title: "MLP(z), W₁", YLabel: "unit i", Heat: normalized(mlp)},
	}
}

// vecOf is vec(U) of a D×D matrix stored row-major: its columns stacked.
func vecOf(u []float64, d int) []float64 {
	out := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			out[b*d+a] = u[a*d+b]
		}
	}
	return out
}

// normalized is the heat map of the rows divided by their largest entry.
func normalized(rows [][]float64) *Heat {
	big := 0.0
	for _, r := range rows {
		for _, x := range r {
			big = math.Max(big, math.Abs(x))
		}
	}
	z := make([][]float64, len(rows))
	for i, r := range rows {
		z[i] = make([]float64, len(r))
		for j, x := range r {
			if big > 0 {
				z[i][j] = x / big
			}
		}
	}
	return &Heat{Z: z, Max: 1}
}

// normalizedRows is the heat map of rows each divided by its own largest
// entry.
func normalizedRows(rows [][]float64) *Heat {
	z := make([][]float64, len(rows))
	for i, r := range rows {
		z[i] = normalized([][]float64{r}).Z[0]
	}
	return &Heat{Z: z, Max: 1}
}
