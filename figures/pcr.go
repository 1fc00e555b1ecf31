package figures

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot/vg"
)

// pcrFigure draws, for a run, the function the model implements at each
// plateau beside principal component regression (paper eq. attnS-PCR):
// with β ≈ Λw the prediction βᵀMx_q ≈ wᵀ(ΛM)x_q, and on the plateau where
// m eigenvectors are learned ΛM = Σ_{d≤m} (λ_d²/a_d) e_d e_dᵀ, which tends
// to the projection P_m = Σ_{d≤m} e_d e_dᵀ as N → ∞. The top row shows ΛM
// at a time inside each plateau, the bottom row P_m, both in the original
// basis of the data.
func pcrFigure(f *file) (*Figure, error) {
	rd, err := readRun(f)
	if err != nil {
		return nil, err
	}
	d := rd.d
	if rd.layers > 1 || f.spec.Layers > 1 {
		return nil, fmt.Errorf("-view pcr: a stack of %d layers has a map per layer, and its prediction is not βᵀMx_q: principal component regression compares one layer's map; -view dynamics draws the run", f.spec.Layers)
	}
	if allEqual(rd.eigvals) {
		return nil, fmt.Errorf("-view pcr: Λ is white (every eigenvalue %g): any basis is its eigenbasis, so principal component regression has no first m components to project onto; -view dynamics draws the run", rd.eigvals[0])
	}
	times, plateaus := plateauSamples(rd)
	fig := &Figure{Title: problemTitle(f, d, rd.h, rd.r, rd.merged) + ": ΛM at each plateau and PCR"}
	if !paperTask(f) {
		fig.Caption = "Principal component regression is the paper's account of its task (in-context, w ~ N(0, I), no noise, the reduced layer); under this layer and law ΛM, the part of the prediction through β, is set beside it for comparison only."
		fig.addNote(fig.Caption)
	}
	scale := 1.0
	var top, bottom []*Panel
	for k, i := range times {
		m := plateaus[k]
		lm := product(rd.lambda, rd.m[i*d*d:(i+1)*d*d], d)
		pm := projection(rd.eigvecs, d, m)
		for _, x := range append(append([]float64{}, lm...), pm...) {
			scale = math.Max(scale, math.Abs(x))
		}
		title := fmt.Sprintf("m = %d, t = %s", m, shortNumber(rd.ts[i]))
		if len(times) > 6 {
			title = fmt.Sprintf("m = %d", m)
			fig.addNote(fmt.Sprintf("plateau m = %d drawn at t = %.4g", m, rd.ts[i]))
		}
		top = append(top, &Panel{Title: title, Heat: &Heat{Z: rows(lm, d)}})
		bottom = append(bottom, &Panel{Heat: &Heat{Z: rows(pm, d)}})
	}
	top[0].YLabel, bottom[0].YLabel = "ΛM(t)", "Σ eᵢeᵢᵀ, i ≤ m"
	for _, p := range append(append([]*Panel{}, top...), bottom...) {
		p.Heat.Max = scale
	}
	bar := &Panel{ColorBar: scale, YLabel: "matrix entry"}
	fig.Grid = [][]*Panel{append(top, bar), append(bottom, nil)}
	// Equal squares: the first column is wider by the room of the row
	// labels, the colour bar narrow.
	n := float64(len(top))
	cell := (pageWidth - colGap*vg.Length(n) - rowLabelRoom) / vg.Length(n+barShare)
	fig.Widths = make([]float64, len(top)+1)
	for i := range top {
		fig.Widths[i] = 1
	}
	fig.Widths[0] += float64(rowLabelRoom / cell)
	fig.Widths[len(top)] = barShare
	fig.Width = pageWidth
	fig.Height = 2*(cell+labelSize*1.6) + titleSize*1.5 + 24
	fig.MinWidth, fig.MinHeight = minPageWidth, 2.4*vg.Inch
	return fig, nil
}

// barShare is the colour bar's width, with its ticks and label, in heat
// maps.
const barShare = 0.8

// plateauSamples picks a sample inside each plateau the run reached, and
// the m of the plateau: the geometric middle of the times between two drops
// (from the first positive time before the first drop), and the last sample
// for the plateau after the last drop.
func plateauSamples(rd *runData) (idx, ms []int) {
	t := rd.ts // the times of the states
	start := sort.Search(len(t), func(i int) bool { return t[i] > 0 })
	if start == len(t) {
		start = len(t) - 1
	}
	prev := t[start]
	m := 0
	for k, tm := range rd.trans {
		if tm > prev && prev > 0 {
			idx = append(idx, nearest(t, math.Sqrt(prev*tm)))
			ms = append(ms, m)
		}
		prev, m = tm, int(rd.transM[k])
	}
	return append(idx, len(t)-1), append(ms, m)
}

// nearest is the index of the sample time closest to x.
func nearest(t []float64, x float64) int {
	i := sort.SearchFloat64s(t, x)
	if i == len(t) || i > 0 && x-t[i-1] < t[i]-x {
		i--
	}
	return i
}

// product is the D×D product a·b of C-order matrices.
func product(a, b []float64, d int) []float64 {
	out := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for k := 0; k < d; k++ {
			for j := 0; j < d; j++ {
				out[i*d+j] += a[i*d+k] * b[k*d+j]
			}
		}
	}
	return out
}

// projection is Σ_{d<m} e_d e_dᵀ, with e_d the columns of the C-order
// eigenvector matrix vecs.
func projection(vecs []float64, d, m int) []float64 {
	out := make([]float64, d*d)
	for e := 0; e < m; e++ {
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				out[i*d+j] += vecs[i*d+e] * vecs[j*d+e]
			}
		}
	}
	return out
}

// rows splits a C-order D×D matrix into its rows.
func rows(x []float64, d int) [][]float64 {
	out := make([][]float64, d)
	for i := range out {
		out[i] = x[i*d : (i+1)*d]
	}
	return out
}

// shortNumber writes x with three significant digits, powers of ten as
// ·10^n (drawn with the exponent raised, see powerText).
func shortNumber(x float64) string {
	s := fmt.Sprintf("%.3g", x)
	mant, exp, ok := strings.Cut(s, "e")
	if !ok {
		return s
	}
	n := 0
	fmt.Sscan(exp, &n)
	return mant + "·10^" + strings.Replace(fmt.Sprint(n), "-", "−", 1)
}

// allEqual reports whether the eigenvalues are all equal (to 10⁻¹² relative).
func allEqual(eigvals []float64) bool {
	for _, l := range eigvals {
		if math.Abs(l-eigvals[0]) > 1e-12*math.Abs(eigvals[0]) {
			return false
		}
	}
	return true
}
