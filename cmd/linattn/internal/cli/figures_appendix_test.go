package cli_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linattn/linattn/cmd/linattn/internal/cli"
	"github.com/linattn/linattn/figures"
)

// appendixData writes small versions of the data of the paper figures
// linattn figures adds to its first ones (figures_appendix.go): two sweeps
// of each kind that Sweeps draws side by side (initialization scales, the
// next-token loss, softmax training), the equal-eigenvalue and
// rank sweeps, three runs over R and a merged run. Sizes are small: the
// full figures are made by linattn figures.
func appendixData(t *testing.T, dir string) {
	t.Helper()
	p := func(name string) string { return filepath.Join(dir, name) }
	sweeps := map[string]string{
		"init-m":   `{"model": "merged", "H": 8, "winit": [0.01, 1], "samples": 200}`,
		"init-s":   `{"H": 4, "winit": [0.01, 1], "samples": 200}`,
		"ntp-m":    `{"model": "merged", "H": 8, "winit": 3e-5, "ntp-max": 7, "seed": [1, 2], "samples": 200}`,
		"ntp-s":    `{"H": 4, "ntp-max": 7, "seed": [1, 2], "samples": 200}`,
		"soft-m":   `{"model": "merged", "H": 4, "N": 7, "winit": 0.1, "attention": "softmax", "P": 100, "test": 0, "lr": 0.3, "steps": 200, "samples": 101, "seed": [1, 2]}`,
		"soft-s":   `{"H": 4, "N": 7, "winit": 0.1, "attention": "softmax", "P": 100, "test": 0, "lr": 0.3, "steps": 200, "samples": 101, "seed": [1, 2]}`,
		"eq":       `{"eigs": [0.35, 0.35, 0.15, 0.15], "H": 4, "R": [1, 2], "seed": [1, 2], "samples": 200}`,
		"rank":     `{"spectrum": "power:1", "D": 5, "H": 6, "R": [2, 3], "seed": [1, 2], "samples": 200}`,
		"rank-val": `{"H": 5, "R": [4, 2, 3], "samples": 300}`,
	}
	for name, sp := range sweeps {
		if err := os.WriteFile(p(name+".json"), []byte(sp), 0o644); err != nil {
			t.Fatal(err)
		}
		command := "run"
		if strings.HasPrefix(name, "soft") {
			command = "train"
		}
		linattn(t, 0, "sweep", "-command", command, "-spec", p(name+".json"), "-o", p(name))
	}
	linattn(t, 0, "run", "-model", "merged", "-H", "8", "-winit", "3e-5", "-samples", "300", "-o", p("merged.npz"))
}

// appendixFigures draws the figures of appendixData.
func appendixFigures(t *testing.T, dir string) map[string]*figures.Figure {
	t.Helper()
	p := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, n, "index.npz"))
		}
		return out
	}
	must := func(fig *figures.Figure, err error) *figures.Figure {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return fig
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "rank-val", "run-*.npz"))
	return map[string]*figures.Figure{
		"init-sweep":     must(figures.Sweeps(p("init-m", "init-s"), figures.Options{By: "winit"})),
		"varylen":        must(figures.Sweeps(p("ntp-m", "ntp-s"), figures.Options{})),
		"softmax":        must(figures.Sweeps(p("soft-m", "soft-s"), figures.Options{})),
		"equal-eigs":     load(t, p("eq")[0], figures.Options{By: "R", Panels: true}),
		"rank-supp":      load(t, p("rank")[0], figures.Options{By: "R", Panels: true}),
		"rank-values":    must(figures.RankValues(runs)),
		"merged-weights": must(cli.MergedWeightsFigure(filepath.Join(dir, "merged.npz"))),
	}
}

// TestAppendixFigures draws the paper figures of figures_appendix.go from
// small data once, and checks their layout and what they draw.
func TestAppendixFigures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	appendixData(t, dir)
	figs := appendixFigures(t, dir)
	t.Run("layout", func(t *testing.T) { checkAppendixLayout(t, figs) })
	t.Run("sweeps", func(t *testing.T) { checkSweepsFigures(t, dir, figs) })
	t.Run("rank-values", func(t *testing.T) { checkRankValuesFigure(t, dir, figs["rank-values"]) })
	t.Run("merged-weights", func(t *testing.T) { checkMergedWeightsFigure(t, figs["merged-weights"]) })
}

// checkAppendixLayout checks the figures as TestLayoutCoversNoData checks
// the others, at their default size and their smallest: every text and
// legend on the canvas, none over another or over the data, each label by
// its own line or point; and, further, at the default size, every panel's
// legend inside its panel's frame (at the smallest, where the curves fill
// the frame, the layout may put it above the frame, as it does for every
// figure).
func checkAppendixLayout(t *testing.T, figs map[string]*figures.Figure) {
	for name, fig := range figs {
		for k, s := range []figures.Size{{}, fig.MinSize()} {
			lay := fig.Layout(s)
			where := fmt.Sprintf("%s at %.3gx%.3g in", name, (lay.Canvas.Max.X-lay.Canvas.Min.X)/72, (lay.Canvas.Max.Y-lay.Canvas.Min.Y)/72)
			problems := append(layoutProblems(lay), labelProblems(lay)...)
			for i, pp := range lay.Panels {
				if r, ok := pp.LegendBox(); ok && k == 0 && !within(r, pp.Data(), 0.25) {
					problems = append(problems, fmt.Sprintf("the legend of panel %d at %v is outside its frame %v", i, r, pp.Data()))
				}
			}
			for _, problem := range problems {
				t.Errorf("%s: %s", where, problem)
			}
		}
	}
}

// checkSweepsFigures: Sweeps draws one panel per sweep with every run's
// loss as the file holds it (and a training run's exact flow beside it,
// dashed), titled apart by what differs; the merged model's panel has the
// plateau lines of M = 0 and the global minimum only.
func checkSweepsFigures(t *testing.T, dir string, figs map[string]*figures.Figure) {
	soft := figs["softmax"]
	if len(soft.Grid) != 1 || len(soft.Grid[0]) != 2 || soft.Caption == "" {
		t.Fatalf("softmax: grid %v, caption %q: want one row of two panels and a caption", len(soft.Grid), soft.Caption)
	}
	for j, name := range []string{"soft-m", "soft-s"} {
		p := soft.Grid[0][j]
		if !strings.Contains(p.Title, []string{"merged", "separate"}[j]) || strings.Contains(soft.Title, "merged") {
			t.Errorf("panel %d titled %q under %q: want the model in the panel's title only", j, p.Title, soft.Title)
		}
		var solid, dashed int
		for _, c := range drawn(p) {
			if c.Dashed {
				dashed++
			} else {
				solid++
			}
		}
		for i := 0; i < 2; i++ {
			a := arrays(t, filepath.Join(dir, name, fmt.Sprintf("train-%d.npz", i)))
			loss, fl := a["loss"].Float, a["flow_loss"].Float
			found := 0
			for _, c := range drawn(p) {
				switch last := c.Y[len(c.Y)-1]; {
				case !c.Dashed && last == loss[len(loss)-1], c.Dashed && last == fl[len(fl)-1]:
					found++
				}
			}
			if found != 2 {
				t.Errorf("%s run %d: %d of its training and flow curves drawn, want 2", name, i, found)
			}
		}
		if solid != 2 || dashed != 2 {
			t.Errorf("%s: %d solid and %d dashed curves, want 2 and 2", name, solid, dashed)
		}
	}
	if ms := figs["init-sweep"].Grid[0][0].HLines; len(ms) != 2 {
		t.Errorf("init-sweep, merged: %d plateau lines, want m = 0 and m = D only", len(ms))
	}
}

// checkRankValuesFigure: RankValues draws a column per R in increasing
// order whose value curves are the files' v and whose title names the
// drops at which a head grew (from m = 0, R, 2R: t₁, t_{R+1}, …).
func checkRankValuesFigure(t *testing.T, dir string, rv *figures.Figure) {
	for j, r := range []int{2, 3, 4} {
		loss, values := rv.Grid[0][j], rv.Grid[1][j]
		if !strings.HasPrefix(loss.Title, fmt.Sprintf("R = %d", r)) {
			t.Fatalf("column %d titled %q, want R = %d", j, loss.Title, r)
		}
		// From small initialization a new head starts at the drops from
		// m = 0, R, 2R, … (paper section sec:attnS-lowrank).
		want := "t₁"
		if r < 4 {
			want += ", t" + string(rune('₁'+r))
		}
		if !strings.HasSuffix(loss.Title, "at "+want) {
			t.Errorf("R = %d: titled %q, want a new v at %s", r, loss.Title, want)
		}
		a := arrays(t, filepath.Join(dir, "rank-val", fmt.Sprintf("run-%d.npz", []int{1, 2, 0}[j])))
		v, ts := a["v"].Float, a["t"].Float
		for _, c := range drawn(values) {
			hit := false
			for h := 0; h < 5; h++ {
				col := column(v, 5, h, 1)
				hit = hit || (c.Y[len(c.Y)-1] == col[len(col)-1] && len(c.X) == len(ts)-1)
			}
			if !hit {
				t.Errorf("R = %d: a value curve ending at %g is no head's v", r, c.Y[len(c.Y)-1])
			}
		}
	}
}

// checkMergedWeightsFigure: MergedWeights draws the network's loss on the
// attention's (one trajectory, to the integrators' tolerance) and H × D²
// maps of both first layers.
func checkMergedWeightsFigure(t *testing.T, mw *figures.Figure) {
	cs := drawn(mw.Grid[0][0])
	if len(cs) != 2 {
		t.Fatalf("merged-weights: %d loss curves, want 2", len(cs))
	}
	for k := range cs[0].Y {
		if math.Abs(cs[0].Y[k]-cs[1].Y[k]) > 1e-6 {
			t.Fatalf("merged-weights: at t = %g the network's loss is %.10g, the attention's %.10g", cs[0].X[k], cs[1].Y[k], cs[0].Y[k])
		}
	}
	for i := 1; i < 4; i++ {
		for j := 0; j < 2; j++ {
			z := mw.Grid[i][j].Heat.Z
			if len(z) != 8 || len(z[0]) != 16 {
				t.Fatalf("merged-weights row %d, column %d: a %d×%d map, want H × D² = 8 × 16", i, j, len(z), len(z[0]))
			}
		}
	}
}
