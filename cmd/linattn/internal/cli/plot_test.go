package cli

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linattn/linattn/export"
)

// decodePNG checks that path is a PNG of w × h pixels.
func decodePNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); (w > 0 && b.Dx() != w) || (h > 0 && b.Dy() != h) {
		t.Errorf("%s is %d × %d pixels, want %d × %d", path, b.Dx(), b.Dy(), w, h)
	}
}

// TestPlot: linattn plot draws a run beside it by default, to -o in the
// format of its extension, at -size and -dpi, with flags before or after
// the file.
func TestPlot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := filepath.Join(dir, "run.npz")
	if code, _, stderr := runCLI(t, "run", "-q", "-samples", "200", "-o", run); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "plot", run)
	if code != 0 || !strings.Contains(stdout, "wrote "+filepath.Join(dir, "run.png")) || stderr != "" {
		t.Fatalf("plot: exit %d\n%s%s", code, stdout, stderr)
	}
	// The default figure of a run is one column, 3.5 in, at 200 dpi.
	decodePNG(t, filepath.Join(dir, "run.png"), 700, 0)
	small := filepath.Join(dir, "small.png")
	if code, _, stderr := runCLI(t, "plot", "-size", "7x4", run, "-dpi", "100", "-o", small, "-xscale", "lin"); code != 0 {
		t.Fatalf("plot -size: exit %d: %s", code, stderr)
	}
	decodePNG(t, small, 700, 400)
	// -o in a folder that does not exist yet creates it, as mkdir -p.
	nested := filepath.Join(dir, "figs", "d4", "run.pdf")
	if code, _, stderr := runCLI(t, "plot", run, "-o", nested); code != 0 || !strings.HasPrefix(string(mustRead(t, nested)), "%PDF-") {
		t.Fatalf("plot -o figs/d4/run.pdf: exit %d: %s", code, stderr)
	}
	svg := filepath.Join(dir, "run.svg")
	if code, _, stderr := runCLI(t, "plot", run, "-o", svg); code != 0 || !strings.HasPrefix(string(mustRead(t, svg)), "<?xml") {
		t.Fatalf("plot -o run.svg: exit %d: %s", code, stderr)
	}
	if code, stdout, _ := runCLI(t, "plot", "-h"); code != 0 || !strings.Contains(stdout, "-xscale") {
		t.Errorf("plot -h: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := runCLI(t, "help"); code != 0 || !strings.Contains(stdout, "plot") || !strings.Contains(stdout, "figures") {
		t.Errorf("help does not list plot and figures:\n%s", stdout)
	}
}

// TestPlotBadInput: bad input gets exit status 2 and one line naming the
// problem, a figure that cannot be written exit status 1; neither leaves a
// file behind.
func TestPlotBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := filepath.Join(dir, "run.npz")
	if code, _, stderr := runCLI(t, "run", "-q", "-samples", "50", "-o", run); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	text := filepath.Join(dir, "text.npz")
	os.WriteFile(text, []byte("a text file"), 0o644)
	// The run without its transitions, beside a copy of its sidecar.
	z, err := export.LoadNPZ(run)
	if err != nil {
		t.Fatal(err)
	}
	var keep []export.Array
	for _, name := range z.Names() {
		if name != "transitions" {
			a, _ := z.Read(name)
			keep = append(keep, a)
		}
	}
	partial := filepath.Join(dir, "partial.npz")
	if err := export.SaveNPZ(partial, keep); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "partial.json"), mustRead(t, filepath.Join(dir, "run.json")), 0o644)
	taken := filepath.Join(dir, "taken.png")
	os.Mkdir(taken, 0o755) // a directory where the figure should go
	before := listDir(t, dir)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{text}, 2, "not a .npz file"},
		{[]string{partial}, 2, `has no array "transitions"`},
		{[]string{filepath.Join(dir, "none.npz")}, 2, "no such file"},
		{[]string{filepath.Join(dir, "run.json")}, 2, "want a FILE.npz"},
		{[]string{}, 2, "want one FILE.npz"},
		{[]string{run, run}, 2, "want one FILE.npz"},
		{[]string{run, "-o", filepath.Join(dir, "fig.txt")}, 2, "want a FIGURE.png, FIGURE.svg or FIGURE.pdf"},
		{[]string{run, "-o", filepath.Join(dir, "run.npz", "fig.png")}, 2, "cannot create directory"},
		{[]string{run, "-o", "/proc/fig.png"}, 2, "not writable"},
		{[]string{run, "-xscale", "symlog"}, 2, `-xscale = "symlog", want log or lin`},
		{[]string{run, "-size", "3"}, 2, "-size"},
		{[]string{run, "-size", "3x3"}, 2, "-size: 3x3 in is smaller than this figure's smallest size, 3x3.9 in"},
		{[]string{run, "-dpi", "10"}, 2, "-dpi = 10"},
		{[]string{run, "-view", "pcr", "-by", "R", "-nosuch"}, 2, "nosuch"},
		{[]string{run, "-o", taken}, 1, "rename"},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"plot"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != tc.code || !strings.Contains(stderr, tc.want) || len(lines) != 1 || stdout != "" {
			t.Errorf("plot %v: exit %d, stderr %q, stdout %q; want exit %d and one line with %q", tc.args, code, stderr, stdout, tc.code, tc.want)
		}
	}
	if after := listDir(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("files left behind: %v, before %v", after, before)
	}
}

// TestPlotFlag: -plot on run, reduced, landscape and sweep writes the
// figure beside the output in the same go; -plot=svg chooses the format.
func TestPlotFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "-samples", "100", "-plot", "-o", filepath.Join(dir, "run.npz")},
		{"reduced", "-points", "50", "-plot=svg", "-o", filepath.Join(dir, "reduced.npz")},
		{"landscape", "-plot", "-o", filepath.Join(dir, "landscape.npz")},
	} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 || !strings.Contains(stdout, "wrote ") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	decodePNG(t, filepath.Join(dir, "run.png"), 0, 0)
	decodePNG(t, filepath.Join(dir, "landscape.png"), 0, 0)
	if !strings.HasPrefix(string(mustRead(t, filepath.Join(dir, "reduced.svg"))), "<?xml") {
		t.Error("reduced -plot=svg wrote no SVG")
	}
	spec := writeSpec(t, `{"eigs": [0.3, 0.1], "seed": [1, 2], "samples": 50}`)
	if code, out := sweep(t, context.Background(), "-spec", spec, "-o", filepath.Join(dir, "sweep"), "-plot"); code != 0 || !strings.Contains(out, "index.png") {
		t.Fatalf("sweep -plot: exit %d\n%s", code, out)
	}
	decodePNG(t, filepath.Join(dir, "sweep", "index.png"), 0, 0)
	if code, _, stderr := runCLI(t, "run", "-plot=gif", "-o", filepath.Join(dir, "x.npz")); code != 2 || !strings.Contains(stderr, "-plot") {
		t.Errorf("-plot=gif: exit %d, %s", code, stderr)
	}
}

// TestFigures: linattn figures makes the named paper figures from their
// commands, and refuses an unknown name.
func TestFigures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	figs, data := filepath.Join(dir, "figs"), filepath.Join(dir, "data")
	code, stdout, stderr := runCLI(t, "figures", "-o", figs, "-data", data, "merged", "landscape", "pcr")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, name := range []string{"merged", "landscape", "pcr"} {
		decodePNG(t, filepath.Join(figs, name+".png"), 0, 0)
		if !strings.Contains(stdout, name) {
			t.Errorf("the output does not name %s:\n%s", name, stdout)
		}
	}
	if !strings.Contains(stdout, "linattn reduced -model merged -white 1 -D 4 -N 31 -H 8 -balanced") {
		t.Errorf("the command of the merged figure is not stated:\n%s", stdout)
	}
	if code, _, stderr := runCLI(t, "figures", "-o", figs, "fig9"); code != 2 || !strings.Contains(stderr, `unknown figure "fig9"`) {
		t.Errorf("unknown figure: exit %d, %s", code, stderr)
	}
	if code, stdout, _ := runCLI(t, "figures", "-h"); code != 0 || !strings.Contains(stdout, "rank") {
		t.Errorf("figures -h: exit %d\n%s", code, stdout)
	}
}
