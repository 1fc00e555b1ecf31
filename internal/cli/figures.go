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
// command that computes its data and the plot of the result. In Args,
// DATA stands for the data directory.
type paperFigure struct {
	Name  string
	About string
	Args  []string
	// Sweep is the sweep specification the command reads (DATA/NAME.json).
	Sweep string
	// Data is the file plotted, under the data directory.
	Data string
	Plot figures.Options
}

// paperFigures are the figures of Zhang, Singh, Latham & Saxe (ICML 2025)
// with the paper's parameters (the captions of its figures 1, 3 and 4 and
// section 4.2), from the exact population flow.
var paperFigures = []paperFigure{
	{Name: "merged", About: "merged key–query attention, D = 4, N = 31, H = 8, Λ = I: the single abrupt drop against the closed form σ(t) (paper fig. 1, eq. attnM-solution), from the balanced start where it is exact",
		Args: []string{"reduced", "-model", "merged", "-white", "1", "-D", "4", "-N", "31", "-H", "8", "-balanced", "-o", "DATA/merged.npz"},
		Data: "merged.npz", Plot: figures.Options{XScale: "lin"}},
	{Name: "separate", About: "separate rank-one key–query attention, D = 4, λ = 0.4, 0.3, 0.2, 0.1, N = 31, H = 4: four drops onto the plateau levels L(M_m), each head's value weight and key alignment (paper fig. 3)",
		Args: []string{"run", "-o", "DATA/separate.npz"},
		Data: "separate.npz"},
	{Name: "reduced", About: "the same run: each learning head's value weight beside the 1-D theory, and the predicted drop times (paper fig. 3b, eq. 1Ddynamics)",
		Args: []string{"reduced", "-o", "DATA/reduced.npz"},
		Data: "reduced.npz"},
	{Name: "rank", About: "rank R = 1, 2, 4, 8 at D = 8, N = 31, H = 9, λ_d ∝ 1/d with trace 1, six seeds each: the long plateaus come after multiples of R eigenvectors (paper fig. 4)",
		Args:  []string{"sweep", "-spec", "DATA/rank.json", "-o", "DATA/rank"},
		Sweep: `{"spectrum": "power:1", "D": 8, "N": 31, "H": 9, "R": [1, 2, 4, 8], "seed": [1, 2, 3, 4, 5, 6]}`,
		Data:  "rank/index.npz", Plot: figures.Options{By: "R", Panels: true}},
	{Name: "landscape", About: "the 2^D = 16 fixed points of the D = 4 example: loss against eigenvectors learned, stability class, and the path from small initialization (paper section 4.1)",
		Args: []string{"landscape", "-o", "DATA/landscape.npz"},
		Data: "landscape.npz"},
	{Name: "pcr", About: "the D = 4 example at each plateau: ΛM beside the projection onto the first m eigenvectors, principal component regression (paper eq. attnS-PCR)",
		Args: []string{"run", "-o", "DATA/separate.npz"},
		Data: "separate.npz", Plot: figures.Options{View: "pcr"}},
}

const figuresUsage = `usage: linattn figures [-o DIR] [-data DIR] [-format png|svg|pdf] [NAME...]

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
			for _, pf := range paperFigures {
				cmd := strings.ReplaceAll(strings.Join(pf.Args, " "), "DATA", *data)
				fmt.Fprintf(stdout, "  %-10s %s\n             linattn %s\n", pf.Name, pf.About, cmd)
				if pf.Sweep != "" {
					fmt.Fprintf(stdout, "             with %s/%s.json: %s\n", *data, pf.Name, pf.Sweep)
				}
				if opts := plotOptions(pf.Plot); opts != "" {
					fmt.Fprintf(stdout, "             plotted with %s\n", opts)
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
	for i, dir := range []string{*out, *data} {
		if err := output.PrepareDir(filepath.Join(dir, "x")); err != nil {
			return usageErr("%s %s: %v", []string{"-o", "-data"}[i], dir, err)
		}
	}
	done := map[string]bool{}
	for _, pf := range todo {
		if code := pf.make(ctx, stdout, stderr, *data, done); code != ExitOK {
			return code
		}
		fig, err := figures.Load(filepath.Join(*data, pf.Data), pf.Plot)
		if err == nil {
			target := filepath.Join(*out, pf.Name+"."+*format)
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

// make runs the command of the figure, once per data file.
func (pf paperFigure) make(ctx context.Context, stdout, stderr io.Writer, data string, done map[string]bool) int {
	args := make([]string, len(pf.Args))
	for i, a := range pf.Args {
		args[i] = strings.Replace(a, "DATA", data, 1)
	}
	if done[strings.Join(args, " ")] {
		return ExitOK
	}
	if pf.Sweep != "" {
		spec := filepath.Join(data, pf.Name+".json")
		if err := export.WriteFileAtomic(spec, func(w io.Writer) error { _, err := io.WriteString(w, pf.Sweep+"\n"); return err }); err != nil {
			fmt.Fprintf(stderr, "linattn figures: %s: %v\n", pf.Name, err)
			return ExitFailure
		}
	}
	fmt.Fprintf(stdout, "%-10s linattn %s\n", pf.Name, strings.Join(args, " "))
	code := Main(ctx, io.Discard, stderr, append(args[:1:1], append([]string{"-q"}, args[1:]...)...))
	done[strings.Join(args, " ")] = code == ExitOK
	return code
}
