package cli_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/linattn/linattn/cmd/linattn/internal/cli"
	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/figures"
)

// updating reports the -update flag of the package's internal tests
// (cli_test.go), which this external test package shares a binary with.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// linattn runs the command line in-process, as the other packages' tests
// do, and fails the test unless it exits with want.
func linattn(t *testing.T, want int, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main(context.Background(), &out, &errb, append(args[:1:1], append([]string{"-q"}, args[1:]...)...)); code != want {
		t.Fatalf("linattn %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errb.String())
	}
	return out.String()
}

// arrays reads every array of an output file.
func arrays(t *testing.T, path string) map[string]export.Array {
	t.Helper()
	z, err := export.LoadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]export.Array{}
	for _, name := range z.Names() {
		if out[name], err = z.Read(name); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func load(t *testing.T, path string, opt figures.Options) *figures.Figure {
	t.Helper()
	fig, err := figures.Load(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	return fig
}

// drawn are the curves of the panel that draw data of the file: without
// the held final states (dotted) and the legend's entries (no points).
func drawn(p *figures.Panel) []figures.Curve {
	var out []figures.Curve
	for _, c := range p.Curves {
		if !c.Dotted && len(c.X) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// column j of a C-order matrix with cols columns, from row first on.
func column(x []float64, cols, j, first int) []float64 {
	var out []float64
	for i := first; i < len(x)/cols; i++ {
		out = append(out, x[i*cols+j])
	}
	return out
}

// TestRunFigureDrawsTheFile: the panels of the default run draw the file's
// arrays: the loss against t (without t = 0 on the log axis, with a note;
// all of it on a linear one), the plateau levels at the stored L(M_m), the
// drops at the stored t_m on the curve, each head's v, and for each head its
// key alignment with the eigenvector it learned, which ends at 1.
func TestRunFigureDrawsTheFile(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run.npz")
	linattn(t, 0, "run", "-o", out)
	a := arrays(t, out)
	tt, loss, v, plateaus := a["t"].Float, a["loss"].Float, a["v"].Float, a["plateaus"].Float
	if tt[0] != 0 || tt[1] <= 0 {
		t.Fatalf("the run should start at t = 0: t[:2] = %v", tt[:2])
	}

	fig := load(t, out, figures.Options{})
	if len(fig.Grid) != 3 {
		t.Fatalf("%d panels, want loss, value weights and key alignment", len(fig.Grid))
	}
	lossPanel := fig.Grid[0][0]
	if c := lossPanel.Curves[0]; !slices.Equal(c.X, tt[1:]) || !slices.Equal(c.Y, loss[1:]) || !lossPanel.XLog {
		t.Errorf("loss curve: %d points, want the %d with t > 0 of the file", len(c.X), len(tt)-1)
	}
	if len(fig.Notes) != 2 || !strings.Contains(fig.Notes[0], "1 sample(s) at t ≤ 0") {
		t.Errorf("notes %q, want one saying the t = 0 sample is not drawn", fig.Notes)
	}
	if len(lossPanel.HLines) != len(plateaus) {
		t.Fatalf("%d plateau lines, want %d", len(lossPanel.HLines), len(plateaus))
	}
	for m, l := range lossPanel.HLines {
		if l.Value != plateaus[m] || l.Label != fmt.Sprintf("m = %d", m) {
			t.Errorf("plateau line %d: %v, want L(M_%d) = %v", m, l, m, plateaus[m])
		}
	}
	drops := lossPanel.Points[0]
	if !slices.Equal(drops.X, a["transitions"].Float) || len(drops.Text) != 4 || drops.Text[0] != "t₁" {
		t.Errorf("drops at %v %q, want the file's transitions %v", drops.X, drops.Text, a["transitions"].Float)
	}
	for k, y := range drops.Y {
		// A drop is where the loss crosses half-way between its plateaus
		// (README, "Reading the output"): the mark is on the curve there.
		if half := (plateaus[k] + plateaus[k+1]) / 2; math.Abs(y-half) > 1e-3*(plateaus[k]-plateaus[k+1]) {
			t.Errorf("drop %d marked at loss %v, want the half-way level %v", k+1, y, half)
		}
	}

	h := a["v"].Shape[1]
	vPanel, alignPanel := fig.Grid[1][0], fig.Grid[2][0]
	if len(drawn(vPanel)) != h || len(drawn(alignPanel)) != h {
		t.Fatalf("%d value and %d alignment curves, want one per head (%d)", len(drawn(vPanel)), len(drawn(alignPanel)), h)
	}
	seen := map[int]bool{}
	for _, c := range drawn(vPanel) {
		var head, e int
		// Heads are numbered from 1 in the legend, as the paper does.
		if _, err := fmt.Sscanf(strings.NewReplacer("₁", "1", "₂", "2", "₃", "3", "₄", "4").Replace(c.Label), "e%d: head %d", &e, &head); err != nil {
			t.Fatalf("label %q: %v", c.Label, err)
		}
		head--
		seen[head] = true
		if !slices.Equal(c.Y, column(v, h, head, 1)) {
			t.Errorf("curve %q is not v[:, %d] of the file", c.Label, head)
		}
		// The key of the head that learned e is aligned with it at the end.
		ka := a["key_alignment"].Float
		s, d := len(tt), a["eigvals"].Shape[0]
		if got := ka[((s-1)*h+head)*d+e-1]; got < 0.999 {
			t.Errorf("head %d labelled with e%d, but its final alignment with it is %v", head, e, got)
		}
	}
	if len(seen) != h {
		t.Errorf("heads drawn %v, want all %d", seen, h)
	}
	for _, c := range drawn(alignPanel) {
		if last := c.Y[len(c.Y)-1]; math.Abs(last-1) > 1e-3 {
			t.Errorf("a learning head's key alignment ends at %v, want 1", last)
		}
	}

	lin := load(t, out, figures.Options{XScale: "lin"})
	if c := lin.Grid[0][0].Curves[0]; !slices.Equal(c.X, tt) || lin.Grid[0][0].XLog || strings.Contains(strings.Join(lin.Notes, ""), "t ≤ 0") {
		t.Errorf("-xscale lin: %d points, log %v, notes %q; want all %d, linear, no note", len(c.X), lin.Grid[0][0].XLog, lin.Notes, len(tt))
	}
}

// TestMergedRunClosedForm: for the merged model with white Λ from the
// balanced start the figure adds the closed form (paper eq. attnM-solution),
// which is exact there: it agrees with the integrated loss to the
// integration tolerance. Only the two plateaus the merged model visits are
// drawn.
func TestMergedRunClosedForm(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "merged.npz")
	linattn(t, 0, "run", "-model", "merged", "-white", "0.5", "-D", "3", "-H", "2", "-N", "10", "-balanced", "-samples", "300", "-o", out)
	fig := load(t, out, figures.Options{})
	p := fig.Grid[0][0]
	curves := drawn(p)
	if len(curves) != 2 || !strings.Contains(curves[1].Label, "closed form") {
		t.Fatalf("curves %d, want the loss and the closed form", len(curves))
	}
	flow, cf := curves[0], curves[1]
	worst := 0.0
	for i := range flow.Y {
		worst = math.Max(worst, math.Abs(flow.Y[i]-cf.Y[i]))
	}
	// The default tolerances rtol 1e-8, atol 1e-12 give the loss to ~1e-7.
	if worst > 1e-6 {
		t.Errorf("closed form and flow differ by %g, want ≤ 1e-6 from a balanced start", worst)
	}
	if len(p.HLines) != 2 || p.HLines[1].Label != "m = 3" {
		t.Errorf("plateau lines %v, want m = 0 and m = D = 3", p.HLines)
	}
}

// TestSweepFigure: every run of a sweep is drawn once, with the loss of its
// own file, coloured by the -by field (one legend entry per value); with
// -panels each value has a panel holding its runs; the drop panel has
// every transition of the index; a failed run is left out with a note; a
// field that was not swept is refused.
func TestSweepFigure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "sweep.json")
	os.WriteFile(spec, []byte(`{"eigs": [0.3, 0.1], "R": [1, 2], "seed": [1, 2, 3], "H": [0, 2], "samples": 60}`), 0o644)
	linattn(t, 1, "sweep", "-spec", spec, "-o", dir) // the H = 0 runs fail
	index := filepath.Join(dir, "index.npz")
	idx := arrays(t, index)
	complete := 0
	for _, s := range idx["status"].Int {
		if s == 0 {
			complete++
		}
	}
	if complete != 6 {
		t.Fatalf("%d complete runs, want 6", complete)
	}

	fig := load(t, index, figures.Options{By: "R"})
	curves := drawn(fig.Grid[0][0])
	if len(curves) != complete {
		t.Fatalf("%d curves, want one per complete run (%d)", len(curves), complete)
	}
	// Each curve is the loss of exactly one run file.
	used := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "run-*.npz"))
	for _, c := range curves {
		match := ""
		for _, f := range files {
			r := arrays(t, f)
			if slices.Equal(c.Y, r["loss"].Float[1:]) && slices.Equal(c.X, r["t"].Float[1:]) {
				match = f
			}
		}
		if match == "" || used[match] {
			t.Errorf("curve %q is not the loss of a run not drawn yet (%q)", c.Label, match)
		}
		used[match] = true
	}
	var labels []string
	for _, c := range fig.Grid[0][0].Curves {
		if c.Label != "" {
			labels = append(labels, c.Label)
		}
	}
	sort.Strings(labels)
	if strings.Join(labels, ",") != "R = 1,R = 2,seed = 1, 2, 3: drawn alike" {
		t.Errorf("legend %q, want one entry per value of R, and the seeds named (issue 45: a legend names every swept field)", labels)
	}
	if !strings.Contains(strings.Join(fig.Notes, "\n"), "6 of 12 runs not drawn") {
		t.Errorf("notes %q, want the failed runs counted", fig.Notes)
	}
	ndrops := 0
	for _, pts := range fig.Grid[1][0].Points {
		ndrops += len(pts.X)
	}
	var want int64
	for _, n := range idx["n_transitions"].Int {
		want += n
	}
	if int64(ndrops) != want {
		t.Errorf("%d drops drawn, the index has %d", ndrops, want)
	}
	// The categories R = 1, 2 of the drop panel are set apart by a line
	// between them, at 0.5 (issue 45: a marker set off from its tick read
	// as a value between two).
	if v := fig.Grid[1][0].VLines; len(v) != 1 || v[0].Value != 0.5 {
		t.Errorf("drop panel lines %v, want one between the two categories", v)
	}

	split := load(t, index, figures.Options{By: "R", Panels: true})
	if len(split.Grid) != 1 || len(split.Grid[0]) != 3 || split.Grid[0][0].Title != "R = 1" || split.Grid[0][2].Title != "drop times" {
		t.Fatalf("-panels: %d rows, want one: the two values of R, then the drop times", len(split.Grid))
	}
	for _, p := range split.Grid[0][:2] {
		if len(drawn(p)) != 3 {
			t.Errorf("panel %q has %d curves, want the 3 seeds", p.Title, len(drawn(p)))
		}
	}
	if _, err := figures.Load(index, figures.Options{By: "winit"}); err == nil || !strings.Contains(err.Error(), "-by winit: not a swept field") {
		t.Errorf("-by winit: %v", err)
	}
}

// TestLandscapeFigure: one marker per fixed point at its stored loss,
// grouped by the stored class, and the path through the D+1 fixed points on
// it, whose losses are the plateau levels L(M_m) (paper eq. attnS-loss).
func TestLandscapeFigure(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "landscape.npz")
	linattn(t, 0, "landscape", "-o", out)
	a := arrays(t, out)
	fig := load(t, out, figures.Options{})
	p := fig.Grid[0][0]
	var drawn []float64
	classes := map[string]int{}
	for _, pts := range p.Points {
		drawn = append(drawn, pts.Y...)
		classes[pts.Label] = len(pts.Y)
	}
	stored := append([]float64(nil), a["loss"].Float...)
	sort.Float64s(drawn)
	sort.Float64s(stored)
	if !slices.Equal(drawn, stored) {
		t.Errorf("markers at %v, want the %d stored losses", drawn, len(stored))
	}
	names := []string{"minimum", "strict saddle", "higher-order saddle"}
	count := map[string]int{}
	for _, c := range a["class"].Int {
		count[names[c]]++
	}
	for name, n := range count {
		if classes[name] != n {
			t.Errorf("%d %s markers, the file has %d", classes[name], name, n)
		}
	}
	path := p.Curves[0]
	if !slices.Equal(path.Y, a["plateaus"].Float) {
		t.Errorf("path through losses %v, want the plateau levels %v", path.Y, a["plateaus"].Float)
	}
}

// TestReducedFigure: the separate model's curves are those of the file,
// shifted by the observed drop time, with the 1-D theory over the flow; the
// drop-time panel has (observed, predicted) of every drop. For the merged
// model the closed form drawn is the file's loss_closed_form.
func TestReducedFigure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "reduced.npz")
	linattn(t, 0, "reduced", "-points", "200", "-o", out)
	a := arrays(t, out)
	fig := load(t, out, figures.Options{})
	drops := a["drop"].Int
	times := fig.Grid[len(fig.Grid)-1][0]
	var panels []*figures.Panel
	for _, row := range fig.Grid[:len(fig.Grid)-1] {
		panels = append(panels, row...)
	}
	if len(panels) != len(drops) {
		t.Fatalf("%d panels of curves, want one for each of %d drops", len(panels), len(drops))
	}
	for k, p := range panels {
		flow, theory := p.Curves[0], p.Curves[1]
		var want, wantTheory []float64
		for j, m := range a["curve_drop"].Int {
			if m == drops[k] {
				want = append(want, a["curve_v_full"].Float[j])
				wantTheory = append(wantTheory, a["curve_v_reduced"].Float[j])
				if got := flow.X[len(want)-1]; got != a["curve_t"].Float[j]-a["t_observed"].Float[k] {
					t.Fatalf("drop %d: x = %v, want curve_t − t_observed", drops[k], got)
				}
			}
		}
		if !slices.Equal(flow.Y, want) || !slices.Equal(theory.Y, wantTheory) || !theory.Dashed {
			t.Errorf("drop %d: the curves are not curve_v_full and, dashed, curve_v_reduced", drops[k])
		}
	}
	aligned := times.Points[1]
	if !slices.Equal(aligned.X, a["t_observed"].Float) || !slices.Equal(aligned.Y, a["t_predicted"].Float) {
		t.Errorf("drop times %v → %v, want t_observed → t_predicted", aligned.X, aligned.Y)
	}
	dev := fig.Grid[len(fig.Grid)-1][1].Points[0]
	if !slices.Equal(dev.Y, a["max_deviation"].Float) {
		t.Errorf("deviations %v, want max_deviation %v", dev.Y, a["max_deviation"].Float)
	}

	merged := filepath.Join(dir, "merged.npz")
	linattn(t, 0, "reduced", "-model", "merged", "-white", "1", "-D", "2", "-H", "2", "-N", "10", "-balanced", "-samples", "100", "-o", merged)
	m := arrays(t, merged)
	mf := load(t, merged, figures.Options{XScale: "lin"})
	p := mf.Grid[0][0]
	if c := drawn(p); !slices.Equal(c[1].Y, m["loss_closed_form"].Float) || !slices.Equal(c[0].Y, m["loss"].Float) {
		t.Errorf("merged: curves are not loss and loss_closed_form")
	}
}

// TestPCRFigure: the top row is ΛM at a sample of each plateau and the
// bottom row the projection onto the first m eigenvectors; at the end of a
// converged run ΛM is Σ_d λ_d²/a_d e_d e_dᵀ (the global minimum, paper eq.
// attnS-PCR with m = D; a_d from docs/math.md "Data statistics"), and each
// projection is symmetric, idempotent and of trace m.
func TestPCRFigure(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run.npz")
	linattn(t, 0, "run", "-tol", "1e-10", "-o", out)
	a := arrays(t, out)
	fig := load(t, out, figures.Options{View: "pcr"})
	top, bottom := fig.Grid[0], fig.Grid[1]
	if len(top) != 6 || top[5].ColorBar == 0 {
		t.Fatalf("%d cells in the top row, want the 5 plateaus and a colour bar", len(top))
	}
	lam, vecs := a["eigvals"].Float, a["eigvecs"].Float
	d, nu := len(lam), 1.0/31
	var tr float64
	for _, l := range lam {
		tr += l
	}
	final := top[4].Heat.Z
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			var want float64
			for e := 0; e < d; e++ {
				ad := lam[e] * lam[e] * (1 + nu*(1+tr/lam[e]))
				want += lam[e] * lam[e] / ad * vecs[i*d+e] * vecs[j*d+e]
			}
			// The run stops when L − L_min ≤ 1e-10 (L(0) − L_min); the
			// loss is quadratic in M − M* near the minimum, slowest along
			// e_D e_Dᵀ with curvature λ_D a_D = 1.35e-3, so M is within
			// √(8.6e-11/1.35e-3) ≈ 2.5e-4 of M* there and ΛM within
			// λ_D·2.5e-4 ≈ 3e-5.
			if math.Abs(final[i][j]-want) > 1e-4 {
				t.Errorf("final ΛM[%d][%d] = %v, want %v", i, j, final[i][j], want)
			}
		}
	}
	for m, p := range bottom[:5] {
		z := p.Heat.Z
		trace := 0.0
		for i := 0; i < d; i++ {
			trace += z[i][i]
			for j := 0; j < d; j++ {
				var sq float64
				for k := 0; k < d; k++ {
					sq += z[i][k] * z[k][j]
				}
				if math.Abs(z[i][j]-z[j][i]) > 1e-12 || math.Abs(sq-z[i][j]) > 1e-12 {
					t.Fatalf("P_%d is not a symmetric projection at (%d, %d)", m, i, j)
				}
			}
		}
		if math.Abs(trace-float64(m)) > 1e-12 {
			t.Errorf("trace P_%d = %v, want %d", m, trace, m)
		}
	}
}

// TestWrite: every kind of output draws in every format: the PNG decodes
// to the requested size, the SVG is XML of the requested size, the PDF
// starts as one; SVG and PDF are the same bytes when written twice.
func TestWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := filepath.Join(dir, "run.npz")
	linattn(t, 0, "run", "-samples", "300", "-o", run)
	land := filepath.Join(dir, "landscape.npz")
	linattn(t, 0, "landscape", "-o", land)
	red := filepath.Join(dir, "reduced.npz")
	linattn(t, 0, "reduced", "-points", "100", "-o", red)
	spec := filepath.Join(dir, "sweep.json")
	os.WriteFile(spec, []byte(`{"eigs": [0.3, 0.1], "seed": [1, 2], "samples": 60}`), 0o644)
	linattn(t, 0, "sweep", "-spec", spec, "-o", filepath.Join(dir, "sweep"))
	size := figures.Size{Width: 504, Height: 432, DPI: 100} // 7 in × 6 in = 700 × 600 px
	for _, tc := range []struct {
		file string
		opt  figures.Options
	}{{run, figures.Options{}}, {run, figures.Options{View: "pcr"}}, {land, figures.Options{}}, {red, figures.Options{}},
		{filepath.Join(dir, "sweep", "index.npz"), figures.Options{}}, {filepath.Join(dir, "sweep", "index.npz"), figures.Options{Panels: true}}} {
		fig := load(t, tc.file, tc.opt)
		var b bytes.Buffer
		if err := fig.Write(&b, "png", size); err != nil {
			t.Fatalf("%s %+v: %v", tc.file, tc.opt, err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatalf("%s: the PNG does not decode: %v", tc.file, err)
		}
		if r := img.Bounds(); r.Dx() != 700 || r.Dy() != 600 {
			t.Errorf("%s: PNG %v, want 700 × 600", tc.file, r)
		}
		svg := writeString(t, fig, "svg", size)
		if w, h := svgSize(t, svg); w != "504pt" || h != "432pt" {
			t.Errorf("%s: SVG %s × %s, want 504pt × 432pt", tc.file, w, h)
		}
		if again := writeString(t, fig, "svg", size); again != svg {
			t.Errorf("%s: two SVGs of one figure differ", tc.file)
		}
		pdf := writeString(t, fig, "pdf", size)
		if !strings.HasPrefix(pdf, "%PDF-") || pdf != writeString(t, fig, "pdf", size) {
			t.Errorf("%s: PDF not reproducible or not a PDF", tc.file)
		}
	}
}

func writeString(t *testing.T, fig *figures.Figure, format string, size figures.Size) string {
	t.Helper()
	var b bytes.Buffer
	if err := fig.Write(&b, format, size); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// svgSize parses the whole document as XML and returns the root's size.
func svgSize(t *testing.T, doc string) (w, h string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return w, h
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "svg" {
			for _, a := range se.Attr {
				switch a.Name.Local {
				case "width":
					w = a.Value
				case "height":
					h = a.Value
				}
			}
		}
	}
}

// TestGoldenSVG: the figure of the README's default run is
// testdata/run_default.svg: every element, attribute, text and coordinate
// the same, except that the curves (paths of more than eight points) need
// only lie within 0.5 pt of the golden ones (Hausdorff distance): their
// points come from the output grid, which follows the integrator's steps,
// so another integrator gives the same picture through other points. After
// a deliberate change, go test -run Golden -update rewrites the file (look
// at the figure before committing it).
func TestGoldenSVG(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run.npz")
	linattn(t, 0, "run", "-o", out)
	got := writeString(t, load(t, out, figures.Options{}), "svg", figures.Size{})
	golden := filepath.Join("testdata", "figures", "run_default.svg")
	if updating() {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	gotDoc, gotCurves := splitCurves(got)
	wantDoc, wantCurves := splitCurves(string(want))
	if gotDoc != wantDoc || len(gotCurves) != len(wantCurves) {
		t.Fatalf("the default run's SVG differs from %s outside its curves (%d curves, want %d); go test -run Golden -update rewrites it", golden, len(gotCurves), len(wantCurves))
	}
	for k := range gotCurves {
		if d := max(hausdorff(gotCurves[k], wantCurves[k]), hausdorff(wantCurves[k], gotCurves[k])); d > 0.5 {
			t.Errorf("curve %d is %.3g pt from the golden one, want ≤ 0.5", k, d)
		}
	}
}

var pathData = regexp.MustCompile(`<path d="([^"]*)"`)

// splitCurves replaces the data of every path of more than eight points by
// CURVE and returns the document and the curves' points.
func splitCurves(doc string) (string, [][][2]float64) {
	var curves [][][2]float64
	masked := pathData.ReplaceAllStringFunc(doc, func(m string) string {
		d := pathData.FindStringSubmatch(m)[1]
		fields := strings.FieldsFunc(d, func(r rune) bool { return r == 'M' || r == 'L' })
		if len(fields) <= 8 || strings.ContainsAny(d, "AZCQ") {
			return m
		}
		var pts [][2]float64
		for _, f := range fields {
			var p [2]float64
			fmt.Sscanf(f, "%g,%g", &p[0], &p[1])
			pts = append(pts, p)
		}
		curves = append(curves, pts)
		return `<path d="CURVE"`
	})
	return masked, curves
}

// hausdorff is the largest distance from a point of a to the polyline b.
func hausdorff(a, b [][2]float64) float64 {
	worst := 0.0
	for _, p := range a {
		best := math.Inf(1)
		for k := 1; k < len(b); k++ {
			best = math.Min(best, segmentDistance(p, b[k-1], b[k]))
		}
		worst = math.Max(worst, best)
	}
	return worst
}

func segmentDistance(p, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	w := 0.0
	if l2 := dx*dx + dy*dy; l2 > 0 {
		w = math.Max(0, math.Min(1, ((p[0]-a[0])*dx+(p[1]-a[1])*dy)/l2))
	}
	return math.Hypot(p[0]-a[0]-w*dx, p[1]-a[1]-w*dy)
}

// TestBadFiles: a file that is not ours, one without its sidecar, one with
// an array missing and a bad option are refused with a one-line error that
// names the problem.
func TestBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := filepath.Join(dir, "run.npz")
	linattn(t, 0, "run", "-samples", "50", "-o", run)
	text := filepath.Join(dir, "text.npz")
	os.WriteFile(text, []byte("not a zip"), 0o644)
	alone := filepath.Join(dir, "alone.npz")
	export.SaveNPZ(alone, []export.Array{export.Floats("t", []float64{0, 1}, 2)})
	// The run's file without its v, beside the run's sidecar.
	partial := filepath.Join(dir, "partial.npz")
	var keep []export.Array
	for name, a := range arrays(t, run) {
		if name != "v" {
			a.Name = name
			keep = append(keep, a)
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].Name < keep[j].Name })
	if err := export.SaveNPZ(partial, keep); err != nil {
		t.Fatal(err)
	}
	side, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	os.WriteFile(filepath.Join(dir, "partial.json"), side, 0o644)
	os.WriteFile(filepath.Join(dir, "alone.json"), []byte(`{"a": 1}`), 0o644)
	for _, tc := range []struct {
		path string
		opt  figures.Options
		want string
	}{
		{text, figures.Options{}, "not a .npz file"},
		{filepath.Join(dir, "missing.npz"), figures.Options{}, "no such file"},
		{alone, figures.Options{}, "not that of a linattn output"},
		{partial, figures.Options{}, `has no array "v"`},
		{run, figures.Options{XScale: "symlog"}, `-xscale = "symlog", want log or lin`},
		{run, figures.Options{View: "heat"}, "-view"},
		{run, figures.Options{By: "R"}, "-by R colours the runs of a sweep's index.npz"}, // not ignored (issue 33)
		{run, figures.Options{Panels: true}, "-panels draws a sweep's index.npz"},
		{run, figures.Options{View: "runs"}, "-view runs draws a sweep's index.npz"},
	} {
		_, err := figures.Load(tc.path, tc.opt)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %+v: %v", filepath.Base(tc.path), tc.opt, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s %+v: error %v, want one line with %q", filepath.Base(tc.path), tc.opt, err, tc.want)
		}
	}
}

// TestTrainFigure: the output of linattn train is drawn as a run, with the
// training loss and, dashed, the population flow's loss stored beside it
// (flow_loss), both exactly the stored arrays.
func TestTrainFigure(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "train.npz")
	linattn(t, 0, "train", "-P", "2000", "-steps", "2000", "-samples", "101", "-o", path)
	a := arrays(t, path)
	fig := load(t, path, figures.Options{})
	p := fig.Grid[0][0]
	if len(p.Curves) != 2 || p.Curves[0].Label != "training (finite data)" || p.Curves[1].Label != "population flow" {
		t.Fatalf("loss panel curves %+v, want training and population flow", p.Curves)
	}
	tt, loss, flowLoss := a["t"].Float, a["loss"].Float, a["flow_loss"].Float
	if c := p.Curves[0]; !slices.Equal(c.X, tt[1:]) || !slices.Equal(c.Y, loss[1:]) {
		t.Errorf("training curve is not the stored loss at t > 0")
	}
	if c := p.Curves[1]; !slices.Equal(c.X, tt[1:]) || !slices.Equal(c.Y, flowLoss[1:]) || !c.Dashed {
		t.Errorf("flow curve is not the stored flow_loss at t > 0 (dashed)")
	}
}

// TestRunFigureLaw: the figure of a run under a task law states the law in
// its title and draws every test loss the output holds, each with its own
// legend entry (issue 45: a full-layer or label-key run's title named
// neither σ² nor Ω nor the layer, and test_idg was never drawn): the full
// layer under -noise 0.1 -task-eigs 1.5,1,0.5,0.25 -icl 0.5 -tasks 4, the
// label-key layer on given tasks, and label noise alone on the reduced
// layer, whose one test is the in-context one; the paper's task states
// none of it.
func TestRunFigureLaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args  []string
		title []string // the parts the title holds
		tests []string // the test panel's legend
	}{
		{[]string{"-layer", "full", "-noise", "0.1", "-task-eigs", "1.5,1,0.5,0.25", "-icl", "0.5", "-tasks", "4"},
			[]string{"full layer", "σ² = 0.1", "Ω = diag(1.5 1 0.5 0.25)", "c = 0.5", "K = 4 drawn from data seed 3 (scaled)"},
			[]string{"in-context", "in-weight", "in-distribution"}},
		{[]string{"-model", "merged", "-layer", "labelkey", "-icl", "0", "-w0", "1,0,0,0,0,1,0,0", "-task-white", "2"},
			[]string{"label-key layer", "Ω = 2·I", "c = 0", "K = 2 given"},
			[]string{"in-context", "in-weight", "in-distribution"}},
		{[]string{"-noise", "0.1", "-test-task-spectrum", "power:1"},
			[]string{"reduced layer", "σ² = 0.1", "Ω_test: power:1"},
			[]string{"in-context"}},
		{nil, nil, nil},
	} {
		out := filepath.Join(dir, fmt.Sprintf("run%d.npz", len(c.args)))
		linattn(t, 0, append([]string{"run", "-T", "100", "-samples", "51", "-o", out}, c.args...)...)
		fig := load(t, out, figures.Options{})
		for _, part := range c.title {
			if !strings.Contains(fig.Title, part) {
				t.Errorf("%v: title %q lacks %q", c.args, fig.Title, part)
			}
		}
		if c.args == nil {
			if strings.Contains(fig.Title, "layer") || strings.Contains(fig.Title, "σ²") || len(fig.Grid) != 3 {
				t.Errorf("the paper's task: title %q, %d panels; want neither layer nor law, and no test panel", fig.Title, len(fig.Grid))
			}
			continue
		}
		if c.tests[len(c.tests)-1] == "in-distribution" { // a law other than the paper's: PCR is set beside ΛM for comparison
			pcr := load(t, out, figures.Options{View: "pcr"})
			if !strings.Contains(pcr.Caption, "for comparison only") {
				t.Errorf("%v: -view pcr caption %q, want it to say PCR is the paper's account", c.args, pcr.Caption)
			}
		}
		var legend []string
		for _, cv := range fig.Grid[1][0].Curves {
			if cv.Label != "" {
				legend = append(legend, cv.Label)
			}
		}
		if fig.Grid[1][0].YLabel != "test loss" || !slices.Equal(legend, c.tests) {
			t.Errorf("%v: second panel %q with legend %q, want the test losses %q", c.args, fig.Grid[1][0].YLabel, legend, c.tests)
		}
	}
}
