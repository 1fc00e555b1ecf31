package cli_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linattn/linattn/figures"
	"github.com/linattn/linattn/theory"

	"gonum.org/v1/gonum/mat"
)

// taskRuns writes runs of Lu et al.'s layer (label-key, merged, H = 1)
// under K fixed tasks drawn N(0, I), every sequence labeled by one of them,
// at D = 4, Λ = I/4 (tr Λ = 1) and σ² = 0.04, for each N, K and data seed.
func taskRuns(t *testing.T, dir string, ns, ks, seeds []int) []string {
	t.Helper()
	var out []string
	for _, n := range ns {
		for _, k := range ks {
			for _, s := range seeds {
				path := filepath.Join(dir, fmt.Sprintf("run-%d-%d-%d.npz", n, k, s))
				linattn(t, 0, "run", "-model", "merged", "-layer", "labelkey", "-H", "1", "-white", "0.25", "-D", "4",
					"-N", fmt.Sprint(n), "-noise", "0.04", "-icl", "0", "-task-draw", "gaussian", "-tasks", fmt.Sprint(k),
					"-data-seed", fmt.Sprint(s), "-samples", "101", "-o", path)
				out = append(out, path)
			}
		}
	}
	return out
}

// last is the final value of array name of the output at path.
func last(t *testing.T, path, name string) float64 {
	t.Helper()
	y := arrays(t, path)[name].Float
	return y[len(y)-1]
}

// TestTaskDiversityFigure: a panel per α in the top row, whose points are
// the means over the task draws of the files' final e_ICL, e_IDG and their
// difference, with bars from the least to the largest draw and Lu et al.'s
// limit (theory.LuICL, LuIDG at α, ρ = σ²/tr Λ) as lines; below, the
// dynamics of the largest α, each curve ending at its file's final value.
func TestTaskDiversityFigure(t *testing.T) {
	t.Parallel()
	ns, ks, seeds := []int{4, 12}, []int{1, 4, 16}, []int{1, 2}
	paths := taskRuns(t, t.TempDir(), ns, ks, seeds)
	fig, err := figures.TaskDiversity(paths)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Grid) != 2 || len(fig.Grid[0]) != 2 || len(fig.Grid[1]) != 3 {
		t.Fatalf("grid %d rows: want 2 panels (α = 1, 3) above 3", len(fig.Grid))
	}
	for i, n := range ns {
		p := fig.Grid[0][i]
		if len(p.Points) != 3 || len(p.Curves) != 3 {
			t.Fatalf("α = %d/4: %d point sets, %d curves; want 3 and 3", n, len(p.Points), len(p.Curves))
		}
		for j, k := range ks {
			var icl, idg []float64
			for s := range seeds {
				path := paths[(i*len(ks)+j)*len(seeds)+s]
				icl, idg = append(icl, last(t, path, "test_icl")), append(idg, last(t, path, "test_idg"))
			}
			mean := func(v []float64) float64 { return (v[0] + v[1]) / 2 }
			want := []float64{mean(icl), mean(idg), mean(icl) - mean(idg)}
			for m, pts := range p.Points {
				if pts.X[j] != float64(k)/4 || math.Abs(pts.Y[j]-want[m]) > 1e-15 || pts.Lo[j] > pts.Y[j] || pts.Hi[j] < pts.Y[j] {
					t.Errorf("α = %d/4, K = %d, set %d: (%v, %v) in [%v, %v], want (%v, %v)", n, k, m, pts.X[j], pts.Y[j], pts.Lo[j], pts.Hi[j], float64(k)/4, want[m])
				}
			}
		}
		c := p.Curves[0]
		mid := len(c.X) / 2
		lp := theory.LuParams{Kappa: c.X[mid], Alpha: float64(n) / 4, Tau: math.Inf(1), Rho: 0.04}
		wantICL, _ := theory.LuICL(lp)
		wantIDG, _ := theory.LuIDG(lp)
		if math.Abs(c.Y[mid]-wantICL) > 1e-12 || math.Abs(p.Curves[1].Y[mid]-wantIDG) > 1e-12 {
			t.Errorf("α = %d/4, κ = %v: lines at %v, %v; LuICL, LuIDG %v, %v", n, c.X[mid], c.Y[mid], p.Curves[1].Y[mid], wantICL, wantIDG)
		}
	}
	dyn := fig.Grid[1][0].Curves
	if len(dyn) != 6 {
		t.Fatalf("dynamics: %d curves, want a curve and its limit for each of 3 K", len(dyn))
	}
	for i, k := range ks { // κ = 1/4, 1, 4: nearest 0.2, 1 and 5
		path := paths[(len(ks)+i)*len(seeds)] // α = 3, first draw
		if got, want := dyn[2*i].Y[len(dyn[2*i].Y)-1], last(t, path, "test_icl"); got != want || !strings.Contains(dyn[2*i].Label, fmt.Sprintf("K = %d", k)) {
			t.Errorf("dynamics %q ends at %v, %s's test_icl at %v", dyn[2*i].Label, got, path, want)
		}
	}
	if _, err := figures.TaskDiversity(nil); err == nil {
		t.Error("no runs: no error")
	}
}

// TestTaskDiversityRaventosFigure: the flow's final errors against K, ridge
// and dMMSE as theory.ExpectedError estimates them with the figure's
// seed (dMMSE of the tasks the file holds), and the caption's verdict on
// how close the flow comes to ridge.
func TestTaskDiversityRaventosFigure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	paths := taskRuns(t, dir, []int{8}, []int{1, 2, 8}, []int{1})
	fresh := filepath.Join(dir, "fresh.npz")
	linattn(t, 0, "run", "-model", "merged", "-layer", "labelkey", "-H", "1", "-white", "0.25", "-D", "4", "-N", "8", "-noise", "0.04", "-samples", "101", "-o", fresh)
	mc := figures.ReferenceMC{Samples: 400, MinSamples: 100, Seed: 7}
	fig, err := figures.TaskDiversityRaventos(paths, fresh, mc)
	if err != nil {
		t.Fatal(err)
	}
	p := fig.Grid[0][0]
	s := theory.Setting{D: 4, N: 8, TokenVar: 0.25, NoiseVar: 0.04}
	ridge, _ := theory.NewRidge(0.04)
	ref, err := theory.ExpectedError(s, ridge, nil, 400, 7)
	if err != nil {
		t.Fatal(err)
	}
	if p.Curves[0].Y[0] != ref.Mean || p.Curves[1].Y[0] != last(t, fresh, "test_icl") {
		t.Errorf("lines at %v, %v: want ridge %v and the fresh run's %v", p.Curves[0].Y[0], p.Curves[1].Y[0], ref.Mean, last(t, fresh, "test_icl"))
	}
	for i, path := range paths {
		w := arrays(t, path)["w0"].Float
		dm, _ := theory.NewDMMSE(mat.NewDense(len(w)/4, 4, w), 0.04)
		want, err := theory.ExpectedError(s, dm, nil, 400, 7)
		if err != nil {
			t.Fatal(err)
		}
		if p.Points[0].Y[i] != last(t, path, "test_icl") || p.Points[1].Y[i] != last(t, path, "test_idg") || p.Points[2].Y[i] != want.Mean {
			t.Errorf("K = %v: points %v, %v, %v; want the file's %v, %v and dMMSE %v", p.Points[0].X[i], p.Points[0].Y[i], p.Points[1].Y[i], p.Points[2].Y[i],
				last(t, path, "test_icl"), last(t, path, "test_idg"), want.Mean)
		}
	}
	// Linear attention cannot invert the context's Gram matrix: at N = 2D
	// it stays well above ridge.
	if !strings.Contains(fig.Caption, "never comes within 10% of ridge") {
		t.Errorf("caption %q: want the flow never within 10%% of ridge", fig.Caption)
	}
	if _, err := figures.TaskDiversityRaventos(paths, paths[0], mc); err == nil {
		t.Error("a fixed-task run as the fresh-task run: no error")
	}
}

// TestTaskDiversityLayoutCoversNoData checks both task-diversity figures
// as TestLayoutCoversNoData checks the others, at the default size and the
// smallest.
func TestTaskDiversityLayoutCoversNoData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	paths := taskRuns(t, dir, []int{4, 12, 40}, []int{1, 4, 16}, []int{1})
	lu, err := figures.TaskDiversity(paths)
	if err != nil {
		t.Fatal(err)
	}
	rav, err := figures.TaskDiversityRaventos(paths[:3], "", figures.ReferenceMC{Samples: 50, MinSamples: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, fig := range map[string]*figures.Figure{"task-diversity": lu, "task-diversity-raventos": rav} {
		for _, s := range []figures.Size{{}, fig.MinSize()} {
			for _, problem := range layoutProblems(fig.Layout(s)) {
				t.Errorf("%s at %v: %s", name, s, problem)
			}
		}
	}
}
