package flow

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/linattn/linattn/law"
)

// TestDropsGrid: on a loss path that falls linearly from 1 to 0 between
// t = 40 and t = 60 (flat elsewhere, T = 100), DropsGrid(T, 11) gives 5
// equally spaced times and 6 at the loss levels 1 − k/7, which the linear
// path crosses at t = 40 + 20k/7: sorted, unique, from 0 to T.
func TestDropsGrid(t *testing.T) {
	path := LossPath{T: []float64{0, 40, 60, 100}, Loss: []float64{1, 1, 0, 0}}
	got := DropsGrid(100, 11, path)
	want := []float64{0, 25, 50, 75, 100}
	for k := 1; k <= 6; k++ {
		want = append(want, 40+20*float64(k)/7)
	}
	sort.Float64s(want)
	if len(got) != len(want) {
		t.Fatalf("grid %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("grid[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestDropsGridThirds: from S = 12 the grid is ⌊S/4⌋ times equally spaced,
// ⌊S/4⌋ log-spaced from t_f/10 and the rest at equally spaced losses. On
// the path of TestDropsGrid the loss has fallen by 1% at t_f = 40.2, so
// S = 16 gives 0, 33.3, 66.7, 100; 4.02·(100/4.02)^(k/4), k = 0..3 (the
// fifth is T); and 40 + 20k/9, k = 1..8.
func TestDropsGridThirds(t *testing.T) {
	path := LossPath{T: []float64{0, 40, 60, 100}, Loss: []float64{1, 1, 0, 0}}
	if tf := FirstPlateauEnd(path); math.Abs(tf-40.2) > 1e-12 {
		t.Errorf("FirstPlateauEnd = %v, want 40.2", tf)
	}
	got := DropsGrid(100, 16, path)
	want := []float64{0, 100.0 / 3, 200.0 / 3, 100}
	for k := 0; k < 4; k++ {
		want = append(want, 4.02*math.Pow(100/4.02, float64(k)/4))
	}
	for k := 1; k <= 8; k++ {
		want = append(want, 40+20*float64(k)/9)
	}
	sort.Float64s(want)
	if len(got) != len(want) {
		t.Fatalf("grid %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("grid[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestObservedPlateaus: a sampled staircase 1 → 0.5 → 0.2 with drops at
// t = 10 and t = 20 reads as the three levels.
func TestObservedPlateaus(t *testing.T) {
	times := []float64{0, 2, 4, 6, 8, 9.5, 10.5, 12, 14, 16, 18, 19.5, 20.5, 22, 24, 26}
	loss := []float64{1, 1, 1, 1, 1, 0.9, 0.6, 0.5, 0.5, 0.5, 0.5, 0.4, 0.3, 0.2, 0.2, 0.2}
	trans := []Transition{{M: 1, T: 10}, {M: 2, T: 20}}
	got := ObservedPlateaus(times, loss, trans, 26)
	want := []float64{1, 0.5, 0.2}
	if len(got) != len(want) {
		t.Fatalf("levels %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("level %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// longRun reruns TestDropsGridSamplesFirstPlateau's D = 32 run (about 10 s)
// and rewrites its loss path: go test ./flow -run FirstPlateau -grid.long.
var longRun = flag.Bool("grid.long", false, "TestDropsGridSamplesFirstPlateau: run D = 32 and rewrite testdata/d32_loss_path.txt")

// TestDropsGridSamplesFirstPlateau: the default grid (2001 samples) of a
// run until converged samples its first plateau, however short against
// the run: at least 100 output times before the first drop t₁, the first
// after 0 at most t₁/10, so a log time axis shows a decade of it, and no
// two of them in [t₁/10, t₁] further apart than 3% (log-spaced). Cases:
// the paper's D = 4 example (t₁/T ≈ 0.1), the separate full layer under
// fixed tasks (c = 0.5, K = 4: t₁/T ≈ 3·10⁻⁵), and λ_d ∝ 1/d at D = 32
// (t₁ = 12300, T = 8.3·10⁷: the linear half of the old grid had its first
// time at T/1000 = 83 000), the last from the loss path of its run at
// every accepted step, kept with its t₁ in testdata/d32_loss_path.txt.
func TestDropsGridSamplesFirstPlateau(t *testing.T) {
	paper := func(t *testing.T) (LossPath, float64) {
		data, _ := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{N: 31})
		return runPath(t, data, Model{Kind: Separate, H: 4, R: 1, Tau: 1})
	}
	full := func(t *testing.T) (LossPath, float64) {
		tc := lawCase{lam: []float64{0.4, 0.3, 0.2, 0.1}, n: 31, icl: 0.5, k: 4}
		data := lawData(t, tc, 3)
		return runPath(t, data, Model{Kind: Separate, H: 4, R: 1, Tau: 1, Layer: FullLayer})
	}
	d32 := func(t *testing.T) (LossPath, float64) {
		file := filepath.Join("testdata", "d32_loss_path.txt")
		if *longRun {
			lam := make([]float64, 32)
			var sum float64
			for d := range lam {
				lam[d] = 1 / float64(d+1)
				sum += lam[d]
			}
			for d := range lam {
				lam[d] /= sum
			}
			data, _ := law.NewData(lam, law.RandomRotation(32, 1), law.Lengths{N: 31})
			path, t1 := runPath(t, data, Model{Kind: Separate, H: 32, R: 1, Tau: 1})
			writePath(t, file, path, t1)
		}
		return readPath(t, file)
	}
	for name, get := range map[string]func(*testing.T) (LossPath, float64){"D = 4": paper, "full layer": full, "D = 32": d32} {
		path, t1 := get(t)
		T := path.T[len(path.T)-1]
		grid := DropsGrid(T, DefaultSamples, path)
		var before []float64
		for _, x := range grid {
			if x > 0 && x < t1 {
				before = append(before, x)
			}
		}
		if len(before) < 100 || before[0] > t1/10 {
			t.Errorf("%s: %d output times in (0, t₁ = %.6g), the first at %.4g: want ≥ 100 from t₁/10 or before", name, len(before), t1, before[0])
			continue
		}
		for i := 1; i < len(before); i++ {
			if before[i] > t1/10 && before[i] > 1.03*before[i-1] {
				t.Errorf("%s: output times %.6g and %.6g before t₁ = %.6g are more than 3%% apart", name, before[i-1], before[i], t1)
				break
			}
		}
		t.Logf("%s: t₁ = %.6g, T = %.4g: %d output times before t₁, from %.4g", name, t1, T, len(before), before[0])
	}
}

// runPath runs s until converged and returns its loss at every accepted
// step and its first drop t₁.
func runPath(t *testing.T, data *law.Data, m Model) (LossPath, float64) {
	t.Helper()
	s, err := NewSystem(data, m)
	if err != nil {
		t.Fatal(err)
	}
	y0, _ := s.Init(0.01, 3)
	path := LossPath{T: []float64{0}, Loss: []float64{s.Loss(y0)}}
	tr, err := s.Run(context.Background(), y0, RunSettings{Observer: func(tt float64, _ []float64, loss float64) error {
		path.T, path.Loss = append(path.T, tt), append(path.Loss, loss)
		return nil
	}})
	if err != nil || len(tr.Transitions) == 0 {
		t.Fatalf("run: %v, %d drops", err, len(tr.Transitions))
	}
	return path, tr.Transitions[0].T
}

// writePath writes a loss path and t₁ as text: "t1 T" on the first line,
// then "t loss" per accepted step, a step 1% later than the last kept
// (the grid interpolates linearly between them).
func writePath(t *testing.T, file string, p LossPath, t1 float64) {
	var b strings.Builder
	fmt.Fprintf(&b, "t1 %.17g\n", t1)
	last := -1.0
	for i := range p.T {
		if i == 0 || i == len(p.T)-1 || p.T[i] >= 1.01*last {
			fmt.Fprintf(&b, "%.17g %.17g\n", p.T[i], p.Loss[i])
			last = p.T[i]
		}
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readPath reads what writePath wrote.
func readPath(t *testing.T, file string) (LossPath, float64) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var t1 float64
	var p LossPath
	for i, line := range lines {
		var a, c float64
		if i == 0 {
			_, err = fmt.Sscanf(line, "t1 %g", &t1)
		} else {
			_, err = fmt.Sscanf(line, "%g %g", &a, &c)
			p.T, p.Loss = append(p.T, a), append(p.Loss, c)
		}
		if err != nil {
			t.Fatalf("%s line %d: %v", file, i+1, err)
		}
	}
	return p, t1
}
