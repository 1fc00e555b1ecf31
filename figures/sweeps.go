package figures

import (
	"fmt"
	"slices"
	"strings"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"

	"gonum.org/v1/plot/vg"
)

// Sweeps draws sweeps side by side, one loss panel each, as linattn plot
// draws a sweep's runs on one panel: coloured by the field opt.By where a
// sweep varies it (the runs of other fields, seeds, alike in black), the
// plateau levels L(M_m) where its runs share them (for the merged model
// those of M = 0 and the global minimum, the only two it visits),
// converged runs held to the end of the axis. Runs of linattn train are
// drawn with the exact population flow from their start beside them,
// dashed and thin (the training output's flow_loss). Each panel is titled
// with what its sweep holds fixed that the others do not; the figure with
// what they share. It draws the paper's figures of one setting under
// several models: init-sweep, varylen and softmax-attn (cmd/linattn's
// figures).
func Sweeps(paths []string, opt Options) (*Figure, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("figures: no sweep to draw")
	}
	fig := &Figure{Width: pageWidth, Height: 3 * vg.Inch, MinWidth: minPageWidth, MinHeight: minHeight(1)}
	if len(paths) == 1 {
		fig.Width, fig.MinWidth = columnWidth, minWidth
	}
	var row []*Panel
	var parts [][]string
	trained := false
	for i, path := range paths {
		p, ps, tr, err := sweepsPanel(path, opt, fig)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			p.YLabel = ""
		}
		row, parts, trained = append(row, p), append(parts, ps), trained || tr
	}
	fig.Grid = [][]*Panel{row}
	common := sharedParts(parts)
	for i, p := range row {
		var own []string
		for _, s := range parts[i] {
			if !slices.Contains(common, s) {
				own = append(own, s)
			}
		}
		p.Title = strings.Join(own, ", ")
	}
	fig.Title = strings.Join(common, ", ")
	if trained {
		fig.Caption = "Solid: training on sampled sequences, one run per seed. Dashed, thin: the exact population flow of linear attention from the same start."
	}
	return fig, nil
}

// sweepsPanel is the loss panel of the sweep whose index is at path, the
// parts of its problem's description, and whether its runs are training
// runs drawn beside their exact flow.
func sweepsPanel(path string, opt Options, fig *Figure) (*Panel, []string, bool, error) {
	f, err := open(path)
	if err != nil {
		return nil, nil, false, err
	}
	if f.kind != "index" {
		return nil, nil, false, fmt.Errorf("%s is the output of linattn %s: want a sweep's index.npz", path, f.command())
	}
	sd, err := readSweep(f, Options{})
	if err != nil {
		return nil, nil, false, err
	}
	if len(sd.runs) == 0 {
		return nil, nil, false, fmt.Errorf("%s: no run of the sweep has output to draw", path)
	}
	if n := len(f.idx.Rows) - len(sd.runs); n > 0 {
		fig.addNote(fmt.Sprintf("%s: %d of %d runs not drawn: failed or not run (their errors are in index.json)", path, n, len(f.idx.Rows)))
	}
	sd.panel, sd.style, sd.hue = "", "", ""
	if slices.Contains(sd.swept, opt.By) {
		sd.hue = opt.By
	}
	p := sweepLossPanels(sd, opt.XScale != "lin", fig)[0]
	p.Legend = TopRight
	first := sd.runs[0].file
	merged := first.spec.Model == flow.Merged
	if merged && len(p.HLines) > 2 {
		p.HLines = []RefLine{p.HLines[0], p.HLines[len(p.HLines)-1]}
	}
	trained := flowCurves(p, sd, opt.XScale != "lin")
	parts := append(problemParts(first, first.spec.D, first.spec.H, first.spec.R, merged, f.idx.Swept), sweepExtras(first)...)
	return p, parts, trained, nil
}

// flowCurves adds, for each training run of the panel, the exact
// population flow from its start (the run's flow_loss), dashed and thin in
// the run's colour, with two grey legend entries for the kinds of line; it
// reports whether there were any.
func flowCurves(p *Panel, sd *sweepData, log bool) bool {
	drawn := false
	for _, r := range sd.runs {
		if !r.file.trained || !r.file.Has(output.FlowLoss) {
			continue
		}
		fl, _, err := r.file.Floats(output.FlowLoss, len(r.t))
		if err != nil {
			continue
		}
		t, y, _ := onAxis(r.t, fl, log)
		c := sd.hueColor(sd.level(sd.hue, r))
		c.X, c.Y, c.Dashed, c.Thin = t, y, true, true
		p.Curves = append(p.Curves, c)
		drawn = true
	}
	if drawn {
		p.Curves = append(p.Curves, Curve{Label: fmt.Sprintf("%s, P = %d", sd.runs[0].file.spec.Attention, sd.runs[0].file.spec.P), Color: refGray},
			Curve{Label: "linear, exact flow", Color: refGray, Dashed: true, Thin: true})
	}
	return drawn
}

// sweepExtras are the parts of a sweep's problem that problemParts leaves
// out and the paper's appendix figures vary: the next-token loss and the
// attention of a training run.
func sweepExtras(f *file) []string {
	var out []string
	if f.spec.Given("ntp-max") {
		out = append(out, fmt.Sprintf("next-token loss, Nmax = %d", f.spec.NTPMax))
	}
	if f.trained {
		out = append(out, f.spec.Attention.String()+" attention")
	}
	return out
}

// sharedParts are the parts every list holds, in the first list's order;
// none for a single list, whose parts then title its panel.
func sharedParts(parts [][]string) []string {
	if len(parts) < 2 {
		return nil
	}
	var out []string
	for _, s := range parts[0] {
		all := true
		for _, ps := range parts[1:] {
			all = all && slices.Contains(ps, s)
		}
		if all {
			out = append(out, s)
		}
	}
	return out
}
