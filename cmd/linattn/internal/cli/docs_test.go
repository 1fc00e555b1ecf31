package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/theory"
)

// repoRoot is the repository's root, from this package's directory.
var repoRoot = filepath.Join("..", "..", "..", "..")

// docCommand is a command line of a document's code blocks.
type docCommand struct {
	line string   // as written
	args []string // linattn's arguments
}

// placeholder marks a synopsis rather than a command: [flags], <command>,
// FILE, DIR, NAME, WxH and the like.
var placeholder = regexp.MustCompile(`[\[<]|\b[A-Z]{3,}\b|\.\.\.|…`)

// docCommands lists the linattn command lines of the indented code blocks
// of a Markdown document (fenced blocks are Go and Python), comments cut,
// synopses left out, $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT given
// for each of two tasks; and the other lines of those blocks.
func docCommands(t *testing.T, doc string) (cmds []docCommand, other []string) {
	f, err := os.Open(filepath.Join(repoRoot, doc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "    ") {
			continue
		}
		text, _, _ := strings.Cut(strings.TrimSpace(line), "#")
		text = strings.TrimSpace(text)
		rest, ok := strings.CutPrefix(text, "go run ./cmd/linattn ")
		if !ok {
			rest, ok = strings.CutPrefix(text, "linattn ")
		}
		switch {
		case !ok || placeholder.MatchString(strings.ReplaceAll(rest, "$SLURM_ARRAY_TASK", "")):
			other = append(other, strings.TrimSpace(line))
		case strings.Contains(rest, "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT"):
			for _, shard := range []string{"0/2", "1/2"} {
				cmds = append(cmds, docCommand{text, strings.Fields(strings.ReplaceAll(rest, "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT", shard))})
			}
		default:
			cmds = append(cmds, docCommand{text, strings.Fields(rest)})
		}
	}
	return cmds, other
}

// installLinattn runs the README's go install ./cmd/linattn with GOBIN a
// new directory and returns the binary.
func installLinattn(t *testing.T) string {
	goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Fatal("no go command to install linattn with")
		}
	}
	bin := t.TempDir()
	cmd := exec.Command(goBin, "install", "-tags="+buildTags, "./cmd/linattn")
	cmd.Dir, cmd.Env = repoRoot, append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/linattn: %v\n%s", err, out)
	}
	return filepath.Join(bin, "linattn")
}

// docsFull runs every command of TestDocCommands exactly as written. By
// default the lines of docShorter, which would take a third of the test's
// time, run with fewer steps (the same flags parsed, the same files
// written and checked): go test ./cmd/linattn/internal/cli -run DocCommands -docs.full.
var docsFull = flag.Bool("docs.full", false, "TestDocCommands: run every command as written, docShorter's with all their steps")

// docShorter are command lines of the documents (as written) that
// TestDocCommands runs with the arguments given appended, which override
// the written ones, unless -docs.full: docs/cli.md's softmax training, 1500
// steps in about 15 s of CPU, takes 150 (about 2 s). Of that line the
// test checks only that it exits 0 and writes its files, which 150 steps
// check as well; the three drops docs/cli.md describes are not checked
// here at either length (package train's TestSoftmaxDrops checks softmax
// drops on a smaller problem); its unrestricted transformer, 3000 steps
// in about a minute of CPU, takes 300 (train's TestUnrestrictedGradient
// and TestStackTrainingFollowsFlow check what it computes). The README's
// linattn figures draws only the figures not marked Slow
// (task-diversity, task-diversity-raventos and depth compute a minute or
// more of data); -docs.full draws and compares them all.
var docShorter = map[string][]string{
	"linattn train -attention softmax -N 15 -P 1000 -lr 0.5 -steps 1500 -o out/softmax/train.npz":                                   {"-steps", "150"},
	"linattn train -model merged -H 2 -layers 2 -unrestricted -winit 0.1 -P 2000 -lr 0.2 -steps 3000 -o out/unrestricted/train.npz": {"-steps", "300"},
	// The README's figures, all but the Slow ones (minutes of data).
	"go run ./cmd/linattn figures -o docs/figures": quickFigures(),
}

// quickFigures are the names of the paper figures not marked Slow.
func quickFigures() []string {
	var names []string
	for _, pf := range paperFigures {
		if !pf.Slow {
			names = append(names, pf.Name)
		}
	}
	return names
}

// drawnFigures are the figures TestDocCommands draws: all of them with
// -docs.full, else those not marked Slow.
func drawnFigures() []paperFigure {
	var out []paperFigure
	for _, pf := range paperFigures {
		if *docsFull || !pf.Slow {
			out = append(out, pf)
		}
	}
	return out
}

// TestDocCommands runs every linattn command line of the code blocks of
// README.md and docs/cli.md as written, in order, in a new directory, as
// on a fresh clone, with the binary go install ./cmd/linattn makes (the
// README's install; go test ./... is the run this test is part of), and
// checks what the documents say of them: each exits 0 and writes the
// files it names (or its default output); the README's examples write
// distinct files; the summary the README shows is what run prints; the
// sharded sweep's index is the whole sweep's byte for byte; docs/cli.md's
// training on the direct path prints the table of the moments path; and
// the figures of linattn figures -o docs/figures are the committed ones,
// pixel for pixel up to anti-aliasing (figuresMatch). The lines of
// docShorter run with fewer steps unless -docs.full.
func TestDocCommands(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every command of the documents (half a minute): go test without -short")
	}
	docs := []string{"README.md", filepath.Join("docs", "cli.md")}
	written := map[string]bool{}
	for _, doc := range docs {
		cmds, _ := docCommands(t, doc)
		for _, c := range cmds {
			written[c.line] = true
		}
	}
	for line := range docShorter {
		if !written[line] {
			t.Errorf("docShorter: no document has the line %q", line)
		}
	}
	bin := installLinattn(t)
	for _, doc := range docs {
		t.Run(filepath.Base(doc), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmds, other := docCommands(t, doc)
			if len(cmds) < 5 {
				t.Fatalf("%s: %d commands found", doc, len(cmds))
			}
			prepareDocInputs(t, dir, other)
			outputs := map[string]string{}
			stdout := map[string]string{}
			for _, c := range cmds {
				args := c.args
				if extra, ok := docShorter[c.line]; ok && !*docsFull {
					args = append(args[:len(args):len(args)], extra...)
				}
				cmd := exec.Command(bin, args...)
				cmd.Dir = dir
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s: %v\n%s%s", c.line, err, out.String(), errb.String())
				}
				stdout[c.line] = out.String()
				for _, f := range writes(c.args) {
					if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
						t.Errorf("%s: does not write %s", c.line, f)
					}
					if key := sameRun(c.args); doc == "README.md" && strings.HasSuffix(f, ".npz") && outputs[f] != "" && outputs[f] != key {
						t.Errorf("%s overwrites %s, written by %s", c.line, f, outputs[f])
					}
					outputs[f] = sameRun(c.args)
				}
			}
			checkDocClaims(t, doc, dir, stdout)
		})
	}
}

// prepareDocInputs writes the inputs the commands read: the README's
// sweep.json (the block's line that starts with {"seed") and a
// weights.npz for -init.
func prepareDocInputs(t *testing.T, dir string, lines []string) {
	writeGoldenWeights(t, dir)
	for _, l := range lines {
		if strings.HasPrefix(l, `{"seed"`) {
			if err := os.WriteFile(filepath.Join(dir, "sweep.json"), []byte(l+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// writes are the files a command line writes: its -o (a directory for
// sweep and figures) or its default output, the sidecar of an .npz and
// the figure of -plot.
func writes(args []string) []string {
	name, out := args[0], ""
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			out = args[i+1]
		}
	}
	switch name {
	case "sweep":
		if hasArg(args, "-merge") {
			return []string{filepath.Join(args[len(args)-1], "index.npz")}
		}
		if hasArg(args, "-shard") {
			return nil
		}
		return []string{filepath.Join(out, "index.npz")}
	case "figures":
		var fs []string
		for _, pf := range drawnFigures() {
			fs = append(fs, filepath.Join(out, pf.Name+".png"))
		}
		return fs
	case "plot":
		return []string{out}
	}
	if out == "" {
		out = commands[name].Out
	}
	fs := []string{out, strings.TrimSuffix(out, ".npz") + ".json"}
	if hasArg(args, "-plot") {
		fs = append(fs, strings.TrimSuffix(out, ".npz")+".png")
	}
	return fs
}

func hasArg(args []string, flag string) bool {
	for _, a := range args {
		if a == flag {
			return true
		}
	}
	return false
}

// sameRun identifies what a command computes: its arguments without -plot,
// -q and -o.
func sameRun(args []string) string {
	var keep []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-plot", "-q":
		case "-o":
			i++
		default:
			keep = append(keep, args[i])
		}
	}
	return strings.Join(keep, " ")
}

// checkDocClaims checks what a document says of the outputs of its
// commands, run in dir with the given stdout by command line.
func checkDocClaims(t *testing.T, doc, dir string, stdout map[string]string) {
	switch doc {
	case "README.md":
		summary := readmeBlockAfter(t, "The summary of `go run ./cmd/linattn run`:")
		if !inOrder(stdout["go run ./cmd/linattn run"], summary) {
			t.Errorf("README: the summary shown is not what run prints:\n%s\nprints:\n%s", strings.Join(summary, "\n"), stdout["go run ./cmd/linattn run"])
		}
		if problems := figuresMatch(t, filepath.Join(dir, "docs", "figures"), filepath.Join(repoRoot, "docs", "figures")); problems != "" {
			t.Errorf("README: linattn figures -o docs/figures draws other figures than those committed: %s", problems)
		}
		for _, f := range []string{"index.json", "index.npz"} {
			whole, shards := mustRead(t, filepath.Join(dir, "out", "sweep", f)), mustRead(t, filepath.Join(dir, "out", "shards", f))
			if !bytes.Equal(whole, shards) {
				t.Errorf("README: the sharded sweep's %s differs from the whole sweep's", f)
			}
		}
		checkReadmeTests(t, dir, stdout)
	default:
		moments, direct := tableOf(stdout, "-steps 3000 -o out/moments"), tableOf(stdout, "-path direct")
		if moments == "" || moments != direct {
			t.Errorf("docs/cli.md: the direct path prints\n%s\nthe moments path\n%s", direct, moments)
		}
	}
}

// readmeBlockAfter is the indented block after the line in README.md,
// each line trimmed, without the lines "...".
func readmeBlockAfter(t *testing.T, line string) []string {
	_, after, ok := strings.Cut(string(mustRead(t, filepath.Join(repoRoot, "README.md"))), line+"\n\n")
	if !ok {
		t.Fatalf("README.md has no line %q", line)
	}
	var out []string
	for _, l := range strings.Split(after, "\n") {
		if !strings.HasPrefix(l, "    ") {
			break
		}
		if l = strings.TrimSpace(l); l != "..." {
			out = append(out, l)
		}
	}
	return out
}

// inOrder reports whether the lines appear in text in order, each as a
// line of it up to spacing.
func inOrder(text string, lines []string) bool {
	fields := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	k := 0
	for _, l := range strings.Split(text, "\n") {
		if k < len(lines) && fields(l) == fields(lines[k]) {
			k++
		}
	}
	return k == len(lines) && k > 0
}

// tableOf is the printed table of plateaus and drops of the train command
// line containing key.
func tableOf(stdout map[string]string, key string) string {
	for line, out := range stdout {
		if strings.HasPrefix(line, "linattn train") && strings.Contains(line, key) {
			_, table, _ := strings.Cut(out, "\nplateau")
			table, _, _ = strings.Cut(table, "\nwrote")
			return table
		}
	}
	return ""
}

// figuresMatch compares the figures drawn in got with the committed ones
// in want, pixel by pixel. The flow's last bits depend on the processor's
// matrix kernels (flow/internal/gemm), which can move a curve by a
// fraction of a pixel: at most 0.1% of a figure's pixels may differ, by at
// most 32 of 255 in any channel (between this machine's AVX2 kernels and
// the plain loops of -tags purego, rank.png differs in 80 of its 724,500
// pixels by at most 4; the others not at all). A label moved or a curve
// lost exceeds both.
func figuresMatch(t *testing.T, got, want string) string {
	var problems []string
	for _, pf := range drawnFigures() {
		a, b := decodeImage(t, filepath.Join(got, pf.Name+".png")), decodeImage(t, filepath.Join(want, pf.Name+".png"))
		if a.Bounds() != b.Bounds() {
			problems = append(problems, pf.Name+": size "+a.Bounds().String()+", committed "+b.Bounds().String())
			continue
		}
		n, worst := 0, uint32(0)
		r := a.Bounds()
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				d := pixelDiff(a.At(x, y), b.At(x, y))
				if d > 0 {
					n++
				}
				worst = max(worst, d)
			}
		}
		if 1000*n > r.Dx()*r.Dy() || worst > 32 {
			problems = append(problems, fmt.Sprintf("%s: %d pixels differ, by up to %d", pf.Name, n, worst))
		}
	}
	return strings.Join(problems, "; ")
}

// pixelDiff is the largest difference of two colours' channels, in 0–255.
func pixelDiff(a, b color.Color) uint32 {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	d := uint32(0)
	for _, p := range [][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}, {a1, a2}} {
		d = max(d, max(p[0], p[1])-min(p[0], p[1]))
	}
	return d >> 8
}

func decodeImage(t *testing.T, path string) image.Image {
	img, err := png.Decode(bytes.NewReader(mustRead(t, path)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// checkReadmeTests checks what the README says of the test losses of its
// task-law examples: Lu et al.'s setting writes test_icl, test_idg and
// test_iwl at every output time; label noise alone on the reduced layer
// has the in-context test only, equal to the loss (its law is the
// training law), no test_iwl or test_idg, and a summary that says so.
func checkReadmeTests(t *testing.T, dir string, stdout map[string]string) {
	lu, err := output.Open(filepath.Join(dir, "out", "lu", "run.npz"))
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := lu.Floats(output.Times, -1)
	for _, name := range []string{output.TestICL, output.TestIDG, output.TestIWL} {
		if _, _, err := lu.Floats(name, len(s)); err != nil {
			t.Errorf("README: Lu et al.'s run: %v", err)
		}
	}
	noise, err := output.Open(filepath.Join(dir, "out", "noise", "run.npz"))
	if err != nil {
		t.Fatal(err)
	}
	loss, _, err1 := noise.Floats(output.Loss, -1)
	icl, _, err2 := noise.Floats(output.TestICL, len(loss))
	if err1 != nil || err2 != nil || noise.Has(output.TestIWL) || noise.Has(output.TestIDG) {
		t.Fatalf("README: run -noise 0.1 writes %v (%v, %v); want test_icl and neither test_iwl nor test_idg", noise.Names(), err1, err2)
	}
	for i := range loss {
		if math.Abs(icl[i]-loss[i]) > 1e-12*loss[i] {
			t.Fatalf("README: run -noise 0.1: test_icl[%d] = %.15g, the loss %.15g", i, icl[i], loss[i])
		}
	}
	if out := stdout["go run ./cmd/linattn run -noise 0.1 -plot -o out/noise/run.npz"]; !strings.Contains(out, "(no in-weight or in-distribution test") {
		t.Errorf("README: the summary of run -noise 0.1 does not say which tests it computed:\n%s", out)
	}
}

// TestMathTaskDiversityTable runs the D = 8 sweep of docs/math.md ("Task
// diversity: the exact flow against the asymptotic theory"), its command
// and its d8.json as the document gives them, and checks the D = 8 rows of
// its table: every run converged, and for each K the mean over the eight
// draws of final_test_icl and final_test_idg, ± the standard error of the
// mean (sample standard deviation over √draws), and Lu et al.'s limit
// (theory.LuICL, LuIDG at τ = ∞, κ = K/D), to the four decimals written.
func TestMathTaskDiversityTable(t *testing.T) {
	t.Parallel()
	doc := string(mustRead(t, filepath.Join(repoRoot, "docs", "math.md")))
	cmds, _ := docCommands(t, filepath.Join("docs", "math.md"))
	if len(cmds) != 1 || cmds[0].line != "linattn sweep -spec d8.json -o d8" {
		t.Fatalf("docs/math.md: commands %v, want the D = 8 sweep", cmds)
	}
	m := regexp.MustCompile("with d8.json `(\\{[^`]*\\})`").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("docs/math.md gives no d8.json")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d8.json"), []byte(m[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string(nil), cmds[0].args...)
	for i := range args {
		if args[i] == "d8.json" || args[i] == "d8" {
			args[i] = filepath.Join(dir, args[i])
		}
	}
	if code, out, stderr := runCLI(t, append(args, "-q")...); code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", cmds[0].line, code, out, stderr)
	}
	idx, err := output.Open(filepath.Join(dir, "d8", "index.npz"))
	if err != nil {
		t.Fatal(err)
	}
	byK := map[int][2][]float64{}
	for _, row := range idx.Index.Rows {
		side, _, err := output.ReadSidecar(filepath.Join(dir, "d8", row.File))
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			ICL float64 `json:"final_test_icl"`
			IDG float64 `json:"final_test_idg"`
		}
		var p struct {
			Tasks int `json:"tasks"`
		}
		if err := json.Unmarshal(side.Meta.Result, &res); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(row.Params["tasks"], &p.Tasks)
		if side.Meta.Status != "converged" {
			t.Errorf("run %d (K = %d): %s, the document says every run converged", row.Run, p.Tasks, side.Meta.Status)
		}
		e := byK[p.Tasks]
		byK[p.Tasks] = [2][]float64{append(e[0], res.ICL), append(e[1], res.IDG)}
	}
	rows := regexp.MustCompile(`(?m)^\| [0-9.]+ \| 8 \| ([0-9]+)[^|]* \| 8 \| ([0-9.]+) ± ([0-9.]+) \| ([0-9.]+) \| [^|]+ \| ([0-9.]+) ± ([0-9.]+) \| ([0-9.]+) \|`).FindAllStringSubmatch(doc, -1)
	if len(rows) != 5 {
		t.Fatalf("docs/math.md: %d rows at D = 8, want 5", len(rows))
	}
	for _, r := range rows {
		k, _ := strconv.Atoi(r[1])
		got := byK[k]
		if len(got[0]) != 8 {
			t.Errorf("K = %d: %d runs, want 8 draws", k, len(got[0]))
			continue
		}
		p := theory.LuParams{Kappa: float64(k) / 8, Alpha: 10, Tau: math.Inf(1), Rho: 0.01}
		limICL, _ := theory.LuICL(p)
		limIDG, _ := theory.LuIDG(p)
		iclMean, iclSE := meanSE(got[0])
		idgMean, idgSE := meanSE(got[1])
		for i, v := range []float64{iclMean, iclSE, limICL, idgMean, idgSE, limIDG} {
			written, _ := strconv.ParseFloat(r[2+i], 64)
			if math.Abs(v-written) > 0.5e-4+1e-12 {
				t.Errorf("K = %d: column %d of the table is %s, the sweep gives %.5f", k, i, r[2+i], v)
			}
		}
	}
}

// meanSE is the mean of x and its standard error, the sample standard
// deviation over √n.
func meanSE(x []float64) (mean, se float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v / n
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss/(n-1)) / math.Sqrt(n)
}

// TestPaperTitle: the paper's title, wherever the sources and documents
// cite it, is its own and not a package-qualified name (issue 45: a
// search-and-replace had prefixed it with "law." where go doc flow opens).
func TestPaperTitle(t *testing.T) {
	t.Parallel()
	bad := regexp.MustCompile(`[A-Za-z_]\.Training Dynamics`)
	n := 0
	err := filepath.Walk(repoRoot, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() && strings.HasPrefix(info.Name(), ".") && p != repoRoot {
			if err == nil {
				return filepath.SkipDir
			}
			return err
		}
		if ext := filepath.Ext(p); ext != ".go" && ext != ".md" {
			return nil
		}
		text := string(mustRead(t, p))
		n += strings.Count(text, "Training Dynamics of In-Context Learning in")
		if loc := bad.FindStringIndex(text); loc != nil {
			t.Errorf("%s: %q", p, text[loc[0]:min(len(text), loc[1]+30)])
		}
		return nil
	})
	if err != nil || n < 2 {
		t.Errorf("the paper's title cited %d times (%v)", n, err)
	}
}
