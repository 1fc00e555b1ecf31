package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/linattn/linattn/figures"
)

// iclRuns writes small runs of the in-context against in-weight problem
// (merged, D = 3, H = 4, N = 7, the full layer) at the given fractions c
// and numbers of fixed tasks K: the exact flow, and with train, a short
// training run beside it.
func iclRuns(t *testing.T, dir string, cs []string, ks []string, train bool) (exact, trained []string) {
	t.Helper()
	base := []string{"-model", "merged", "-white", "0.3", "-D", "3", "-N", "7", "-H", "4", "-layer", "full", "-winit", "0.01", "-samples", "101"}
	for _, k := range ks {
		for _, c := range cs {
			out := filepath.Join(dir, "run-"+k+"-"+c+".npz")
			linattn(t, 0, append(append([]string{"run"}, base...), "-icl", c, "-tasks", k, "-o", out)...)
			exact = append(exact, out)
			if train {
				out := filepath.Join(dir, "train-"+k+"-"+c+".npz")
				linattn(t, 0, append(append([]string{"train"}, base...), "-icl", c, "-tasks", k, "-P", "500", "-test", "200", "-lr", "0.05", "-steps", "400", "-o", out)...)
				trained = append(trained, out)
			}
		}
	}
	return exact, trained
}

// TestInContextInWeightFigure: a panel per c, from c = 1 down, each with
// the exact run's training, in-context and in-weight test losses as the
// files hold them (thick) and the training run's (thin), and a line at the
// training's end.
func TestInContextInWeightFigure(t *testing.T) {
	t.Parallel()
	exact, trained := iclRuns(t, t.TempDir(), []string{"1", "0.5", "0"}, []string{"1"}, true)
	fig, err := figures.InContextInWeight(exact, trained)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Grid) != 1 || len(fig.Grid[0]) != 3 || fig.Caption == "" {
		t.Fatalf("grid %d rows, caption %q: want one row of 3 panels and a caption", len(fig.Grid), fig.Caption)
	}
	for i, c := range []string{"1", "0.5", "0"} {
		p := fig.Grid[0][i]
		cs := drawn(p)
		if len(cs) != 6 || len(p.VLines) != 1 {
			t.Fatalf("c = %s: %d curves, %d lines; want 6 and 1", c, len(cs), len(p.VLines))
		}
		for k, name := range []string{"loss", "test_icl", "test_iwl"} {
			for j, src := range []string{exact[i], trained[i]} {
				a := arrays(t, src)
				ts, want := a["t"].Float, a[name].Float
				got := cs[3*j+k]
				if got.Thin != (j == 1) || len(got.X) != len(ts)-1 || got.Y[len(got.Y)-1] != want[len(want)-1] || got.X[0] != ts[1] {
					t.Errorf("c = %s, %s of %s: drawn %d points ending at %v, file %d ending at %v", c, name, src, len(got.X), got.Y[len(got.Y)-1], len(ts)-1, want[len(want)-1])
				}
			}
		}
		if last := arrays(t, trained[i])["t"].Float; p.VLines[0].Value != last[len(last)-1] {
			t.Errorf("c = %s: line at %g, the training ends at %g", c, p.VLines[0].Value, last[len(last)-1])
		}
	}
	if _, err := figures.InContextInWeight(trained, nil); err == nil {
		t.Error("training runs given as the exact flow: no error")
	}
}

// TestTransientICLFigure: a panel per K, a curve per c with the in-context
// test loss the file holds, and below it the rise above its running
// minimum since its first drop, positive where drawn.
func TestTransientICLFigure(t *testing.T) {
	t.Parallel()
	exact, _ := iclRuns(t, t.TempDir(), []string{"0.3", "0.7"}, []string{"1", "4"}, false)
	fig, err := figures.TransientICL(exact)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Grid) != 2 || len(fig.Grid[0]) != 2 {
		t.Fatalf("grid %d×%d, want 2×2", len(fig.Grid), len(fig.Grid[0]))
	}
	for j := range fig.Grid[0] {
		loss, rise := drawn(fig.Grid[0][j]), drawn(fig.Grid[1][j])
		if len(loss) != 2 {
			t.Fatalf("panel %d: %d curves, want 2", j, len(loss))
		}
		for i, c := range loss {
			a := arrays(t, exact[2*j+i])
			want := a["test_icl"].Float
			if c.Y[len(c.Y)-1] != want[len(want)-1] {
				t.Errorf("panel %d curve %d ends at %v, the file's test_icl at %v", j, i, c.Y[len(c.Y)-1], want[len(want)-1])
			}
		}
		for _, c := range rise {
			for _, y := range c.Y {
				if !(y > 0) {
					t.Fatalf("panel %d: a rise of %v drawn on a log axis", j, y)
				}
			}
		}
	}
}

// TestICLLayoutCoversNoData checks the two figures of the in-context
// against in-weight runs as TestLayoutCoversNoData checks the others: at
// the default size and the smallest, no text or legend covers another or
// the data, and all lie on the canvas. Also the run and training figures
// of those runs, with their test-loss panel.
func TestICLLayoutCoversNoData(t *testing.T) {
	t.Parallel()
	exact, trained := iclRuns(t, t.TempDir(), []string{"1", "0.5", "0"}, []string{"1", "4"}, true)
	iwl, err := figures.InContextInWeight(exact[:3], trained[:3])
	if err != nil {
		t.Fatal(err)
	}
	transient, err := figures.TransientICL(exact)
	if err != nil {
		t.Fatal(err)
	}
	figs := map[string]*figures.Figure{"icl-iwl": iwl, "icl-transient": transient,
		"run c = 0.5": load(t, exact[1], figures.Options{}), "train c = 0.5": load(t, trained[1], figures.Options{})}
	for name, fig := range figs {
		for _, s := range []figures.Size{{}, fig.MinSize()} {
			for _, problem := range layoutProblems(fig.Layout(s)) {
				t.Errorf("%s at %v: %s", name, s, problem)
			}
		}
	}
}
