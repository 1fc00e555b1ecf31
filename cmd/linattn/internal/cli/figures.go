package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/figures"
	"github.com/linattn/linattn/output"
)

// paperFigure is one of the paper's figures as linattn reproduces it: the
// commands that compute its data and the plot of the result. In Args,
// DATA stands for the data directory.
type paperFigure struct {
	Name  string
	About string
	Steps []figureStep
	// Data is the file plotted, under the data directory, with Plot's
	// options; Draw, when set, draws the figure from the data directory
	// instead (figures of several outputs).
	Data string
	Plot figures.Options
	Draw func(data string) (*figures.Figure, error)
	// Slow marks a figure whose data take minutes: TestDocCommands
	// draws it only with -docs.full.
	Slow bool
}

// figureStep is one command of a figure.
type figureStep struct {
	Args []string
	// Sweep is the sweep specification the command reads, written to
	// DATA/Spec first.
	Sweep, Spec string
}

// step is a figure made by one command.
func step(args ...string) []figureStep { return []figureStep{{Args: args}} }

// sweepStep is a sweep of command over spec, written to DATA/name.json,
// its outputs in DATA/name.
func sweepStep(command, name, spec string) figureStep {
	return figureStep{Args: []string{"sweep", "-command", command, "-spec", "DATA/" + name + ".json", "-o", "DATA/" + name},
		Sweep: spec, Spec: name + ".json"}
}

// mainFigures are the figures of Zhang, Singh, Latham & Saxe (ICML 2025)
// with the paper's parameters (the captions of its figures 1, 3 and 4 and
// section 4.2, and of its appendix figure icl-iwl-sweep), from the exact
// population flow, and the finding of docs/math.md on whether in-context
// learning is transient; paperFigures adds the rest (figures_appendix.go).
var mainFigures = []paperFigure{
	{Name: "merged", About: "merged key–query attention, D = 4, N = 31, H = 8, Λ = I: the single abrupt drop against the closed form σ(t) (paper fig. 1, eq. attnM-solution), from the balanced start where it is exact",
		Steps: step("reduced", "-model", "merged", "-white", "1", "-D", "4", "-N", "31", "-H", "8", "-balanced", "-o", "DATA/merged.npz"),
		Data:  "merged.npz", Plot: figures.Options{XScale: "lin"}},
	{Name: "separate", About: "separate rank-one key–query attention, D = 4, λ = 0.4, 0.3, 0.2, 0.1, N = 31, H = 4: four drops onto the plateau levels L(M_m), each head's value weight and key alignment (paper fig. 3)",
		Steps: step("run", "-o", "DATA/separate.npz"),
		Data:  "separate.npz"},
	{Name: "reduced", About: "the same run: each learning head's value weight beside the 1-D theory, and the predicted drop times (paper fig. 3b, eq. 1Ddynamics)",
		Steps: step("reduced", "-o", "DATA/reduced.npz"),
		Data:  "reduced.npz"},
	{Name: "rank", About: "rank R = 1, 2, 4, 8 at D = 8, N = 31, H = 9, λ_d ∝ 1/d with trace 1, six seeds each: the long plateaus come after multiples of R eigenvectors (paper fig. 4)",
		Steps: []figureStep{{Args: []string{"sweep", "-spec", "DATA/rank.json", "-o", "DATA/rank"},
			Sweep: `{"spectrum": "power:1", "D": 8, "N": 31, "H": 9, "R": [1, 2, 4, 8], "seed": [1, 2, 3, 4, 5, 6]}`, Spec: "rank.json"}},
		Data: "rank/index.npz", Plot: figures.Options{By: "R", Panels: true}},
	{Name: "landscape", About: "the 2^D = 16 fixed points of the D = 4 example: loss against eigenvectors learned, stability class, and the path from small initialization (paper section 4.1)",
		Steps: step("landscape", "-o", "DATA/landscape.npz"),
		Data:  "landscape.npz"},
	{Name: "pcr", About: "the D = 4 example at each plateau: ΛM beside the projection onto the first m eigenvectors, principal component regression (paper eq. attnS-PCR)",
		Steps: step("run", "-o", "DATA/separate.npz"),
		Data:  "separate.npz", Plot: figures.Options{View: "pcr"}},
	{Name: "icl-iwl", About: "in-context against in-weight learning (paper appendix fig. icl-iwl-sweep): merged, D = 4, N = 31, H = 8, Λ = I/4, the full layer with 0, 20, …, 100% of the sequences labeled by one fixed task; the exact flow until converged, and finite data (P = 5000) to the paper's 4001 epochs, t/τ ≈ 124 (docs/math.md)",
		Steps: []figureStep{sweepStep("run", "icl-iwl", iclIWLSpec+`}`),
			sweepStep("train", "icl-iwl-train", iclIWLSpec+`, "P": 5000, "test": 5000, "lr": 0.0155, "steps": 4001, "samples": 801}`)},
		Draw: func(data string) (*figures.Figure, error) {
			return figures.InContextInWeight(glob(data, "icl-iwl/run-*.npz"), glob(data, "icl-iwl-train/train-*.npz"))
		}},
	{Name: "icl-transient", About: "is in-context learning transient? The same problem with K = 1, 4, 16 fixed tasks and c = 0.1, 0.3, 0.5, 0.7, 0.9 in-context: the exact in-context test loss, and its rise since its first drop (docs/math.md)",
		Steps: []figureStep{sweepStep("run", "icl-transient", `{"model": "merged", "white": 0.25, "D": 4, "N": 31, "H": 8, "layer": "full", "winit": 3e-5, "icl": [0.1, 0.3, 0.5, 0.7, 0.9], "tasks": [1, 4, 16]}`)},
		Draw: func(data string) (*figures.Figure, error) {
			return figures.TransientICL(glob(data, "icl-transient/run-*.npz"))
		}},
	{Name: "task-diversity", About: "task diversity (Lu et al., PNAS 2025): their layer (-layer labelkey, merged, H = 1), D = 32, x ~ N(0, I/D), ρ = 0.01, every sequence labeled by one of K = κD tasks drawn N(0, I), α = N/D = 1, 3, 10, 14 values of κ from 0.1 to 20, two task draws: the converged e_ICL, e_IDG and g_task of the exact flow against their D → ∞ limit, and the dynamics at κ below, near and above 1 (docs/math.md)",
		Steps: []figureStep{sweepStep("run", "task-diversity", taskDiversitySpec)},
		Draw: func(data string) (*figures.Figure, error) {
			return figures.TaskDiversity(glob(data, "task-diversity/run-*.npz"))
		}, Slow: true},
	{Name: "task-diversity-raventos", About: "task diversity in Raventós et al.'s setting (NeurIPS 2023): D = 8, N = 16, x ~ N(0, I), σ² = 0.25, K = 2^0 … 2^20 tasks drawn N(0, I): the exact flow of Lu et al.'s layer beside ridge and the dMMSE predictor of the K tasks (Monte Carlo, seed 1), and the layer trained on fresh tasks (docs/math.md)",
		Steps: []figureStep{sweepStep("run", "task-diversity-raventos", raventosSpec+`, "icl": 0, "task-draw": "gaussian", "tasks": [`+powersOfTwo(20)+`]}`),
			{Args: []string{"run", "-model", "merged", "-layer", "labelkey", "-H", "1", "-white", "1", "-D", "8", "-N", "16", "-noise", "0.25", "-o", "DATA/task-diversity-raventos-fresh.npz"}}},
		Draw: func(data string) (*figures.Figure, error) {
			return figures.TaskDiversityRaventos(glob(data, "task-diversity-raventos/run-*.npz"),
				filepath.Join(data, "task-diversity-raventos-fresh.npz"), figures.ReferenceMC{Samples: 4000, MinSamples: 200, Seed: 1})
		}, Slow: true},
}

// taskDiversitySpec is the sweep of the task-diversity figure: Lu et al.'s
// problem at D = 32 in our units (tr Λ = 1, so that the losses are their
// errors; theory.LuScale), α = 1, 3, 10, and K = round(3.2·200^(i/13)),
// i = 0…13: κ log-spaced from 0.1 to 20 up to the rounding of K.
const taskDiversitySpec = `{"model": "merged", "layer": "labelkey", "H": 1, "white": 0.03125, "D": 32, "N": [32, 96, 320], "noise": 0.01, "icl": 0, "task-draw": "gaussian", ` +
	`"tasks": [3, 5, 7, 11, 16, 25, 37, 55, 83, 125, 188, 283, 426, 640], "data-seed": [1, 2]}`

// raventosSpec is the problem of Raventós et al. (icl/configs/example.py of
// mansheej/icl-task-diversity; theory.RaventosSetting) for Lu et al.'s
// layer, without its closing brace.
const raventosSpec = `{"model": "merged", "layer": "labelkey", "H": 1, "white": 1, "D": 8, "N": 16, "noise": 0.25`

// powersOfTwo lists 1, 2, 4, …, 2^n, comma-separated.
func powersOfTwo(n int) string {
	s := make([]string, n+1)
	for i := range s {
		s[i] = fmt.Sprint(1 << i)
	}
	return strings.Join(s, ", ")
}

// iclIWLSpec is the sweep of the paper's in-context against in-weight
// figure, without its closing brace: its code's initialization, standard
// deviation 10⁻⁶ per entry with no 1/N in the attention, is w_init ≈ 3·10⁻⁵
// here, and its learning rate 0.0005 is 0.0155 (docs/math.md).
const iclIWLSpec = `{"model": "merged", "white": 0.25, "D": 4, "N": 31, "H": 8, "layer": "full", "winit": 3e-5, "icl": [1, 0.8, 0.6, 0.4, 0.2, 0]`

// glob returns the files under data matching pattern, sorted.
func glob(data, pattern string) []string {
	paths, _ := filepath.Glob(filepath.Join(data, pattern))
	return paths
}

const figuresUsage = `usage: linattn figures [-o DIR] [-data DIR] [-format png|svg|pdf] [-dpi N] [NAME...]

Reproduces the paper's figures from the exact population flow, each from one
command: it runs the command (its data go to -data), then draws the figure
as DIR/NAME.FORMAT. With no NAME it makes all of them:

`

func figuresMain(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("linattn figures", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "out/figures", "directory of the figures, created if needed")
	data := fs.String("data", "out/figures", "directory of the data the figures are drawn from, created if needed")
	format := fs.String("format", "png", "png, svg or pdf")
	dpi := fs.Int("dpi", 150, "PNG resolution in dots per inch, 50 ≤ dpi ≤ 1200")
	usageErr := usageError(stderr, "figures")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, figuresUsage)
			width := 0
			for _, pf := range paperFigures {
				width = max(width, len(pf.Name))
			}
			indent := strings.Repeat(" ", width+3)
			for _, pf := range paperFigures {
				fmt.Fprintf(stdout, "  %-*s %s\n", width, pf.Name, pf.About)
				for _, st := range pf.Steps {
					fmt.Fprintf(stdout, "%slinattn %s\n", indent, strings.ReplaceAll(strings.Join(st.Args, " "), "DATA", *data))
					if st.Sweep != "" {
						fmt.Fprintf(stdout, "%swith %s/%s: %s\n", indent, *data, st.Spec, st.Sweep)
					}
				}
				if opts := plotOptions(pf.Plot); opts != "" {
					fmt.Fprintf(stdout, "%splotted with %s\n", indent, opts)
				}
			}
			fmt.Fprint(stdout, "\nflags:\n")
			printFlags(stdout, fs)
			return ExitOK
		}
		return usageErr("%v (see linattn figures -h)", err)
	}
	todo, err := selectFigures(names)
	if err != nil {
		return usageErr("%v", err)
	}
	size, err := parseSize("", *dpi)
	if err != nil {
		return usageErr("%v", err)
	}
	if _, err := figures.FormatOf("x." + *format); err != nil {
		return usageErr("-format = %q, want png, svg or pdf", *format)
	}
	var created []string
	for i, dir := range []string{*out, *data} {
		made, err := output.PrepareDir(filepath.Join(dir, "x"))
		if err != nil {
			output.RemoveEmptyDirs(created)
			return usageErr("%s %s: %v", []string{"-o", "-data"}[i], dir, err)
		}
		created = append(created, made...)
	}
	code := drawFigures(ctx, stdout, stderr, todo, *out, *data, *format, size)
	if code != ExitOK {
		output.RemoveEmptyDirs(created) // a failed command leaves no empty folder
	}
	return code
}

// drawFigures computes the data of the figures todo in data and draws
// them in out, in format at size; it returns the exit status.
func drawFigures(ctx context.Context, stdout, stderr io.Writer, todo []paperFigure, out, data, format string, size figures.Size) int {
	done := map[string]bool{}
	for _, pf := range todo {
		for _, st := range pf.Steps {
			if code := st.make(ctx, stdout, stderr, pf.Name, data, done); code != ExitOK {
				return code
			}
		}
		fig, err := pf.draw(data)
		if err == nil {
			target := filepath.Join(out, pf.Name+"."+format)
			if err = fig.Save(target, size); err == nil {
				fmt.Fprintf(stdout, "%-10s wrote %s\n", pf.Name, target)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "linattn figures: %s: %v\n", pf.Name, err)
			return ExitFailure
		}
	}
	return ExitOK
}

// plotOptions writes the plot flags of non-default options.
func plotOptions(o figures.Options) string {
	var f []string
	if o.XScale != "" {
		f = append(f, "-xscale "+o.XScale)
	}
	if o.By != "" {
		f = append(f, "-by "+o.By)
	}
	if o.Panels {
		f = append(f, "-panels")
	}
	if o.View != "" {
		f = append(f, "-view "+o.View)
	}
	return strings.Join(f, " ")
}

// selectFigures returns the named figures in the order of paperFigures, or
// all of them.
func selectFigures(names []string) ([]paperFigure, error) {
	if len(names) == 0 {
		return paperFigures, nil
	}
	var out []paperFigure
	var known []string
	for _, pf := range paperFigures {
		known = append(known, pf.Name)
		for _, n := range names {
			if n == pf.Name {
				out = append(out, pf)
				break
			}
		}
	}
	for _, n := range names {
		found := false
		for _, k := range known {
			found = found || n == k
		}
		if !found {
			return nil, fmt.Errorf("unknown figure %q (figures: %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// draw draws the figure from the data directory.
func (pf paperFigure) draw(data string) (*figures.Figure, error) {
	if pf.Draw != nil {
		return pf.Draw(data)
	}
	return figures.Load(filepath.Join(data, pf.Data), pf.Plot)
}

// make runs the command of a step of figure name, once per data file.
func (st figureStep) make(ctx context.Context, stdout, stderr io.Writer, name, data string, done map[string]bool) int {
	args := make([]string, len(st.Args))
	for i, a := range st.Args {
		args[i] = strings.Replace(a, "DATA", data, 1)
	}
	if done[strings.Join(args, " ")] {
		return ExitOK
	}
	if st.Sweep != "" {
		spec := filepath.Join(data, st.Spec)
		if err := export.WriteFileAtomic(spec, func(w io.Writer) error { _, err := io.WriteString(w, st.Sweep+"\n"); return err }); err != nil {
			fmt.Fprintf(stderr, "linattn figures: %s: %v\n", name, err)
			return ExitFailure
		}
	}
	fmt.Fprintf(stdout, "%-10s linattn %s\n", name, strings.Join(args, " "))
	code := Main(ctx, io.Discard, stderr, append(args[:1:1], append([]string{"-q"}, args[1:]...)...))
	done[strings.Join(args, " ")] = code == ExitOK
	return code
}
