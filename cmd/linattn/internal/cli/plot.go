package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/linattn/linattn/figures"
	"github.com/linattn/linattn/output"
	"gonum.org/v1/plot/vg"
)

const plotUsage = `usage: linattn plot FILE.npz [-o FIGURE.png|.svg|.pdf] [flags]

Draws the output of linattn run, reduced, landscape or sweep (the index,
DIR/index.npz) as a figure, knowing which from the arrays and the sidecar
FILE.json beside the file:

  run        the loss against t/τ with the plateau levels L(M_m) (dotted,
             labelled m) and the observed drops t_m; the value weight of
             every head; for the separate model the alignment of each
             head's keys with the eigenvectors it learns; for the merged
             model with white Λ the closed form. -view pcr instead draws
             ΛM at each plateau beside the projection onto the first m
             eigenvectors (principal component regression).
  reduced    the learning head's value weight beside the 1-D theory for
             each drop, and the predicted against the observed drop times
             (merged model: the loss beside the closed form σ(t)).
  landscape  the loss of every fixed point against the number of
             eigenvectors learned, coloured by stability class, with the
             path from small initialization.
  sweep      the loss curves of all runs coloured by a swept field (-by),
             or one panel per value (-panels), and the drop times against
             it; -view median the median over seeds and the quartile band.

No legend or label covers data at any -size down to the figure's smallest
(3 in wide for one column, 6 in for a page; a smaller one is refused).

The figure is written atomically beside FILE.npz as FILE.png unless -o
names another file; its format is that of the extension (png, svg, pdf).
Exit status: 0 written, 1 the figure could not be written, 2 bad input
(not a linattn output, an array missing, a bad flag; nothing written).

flags:
`

func plotMain(_ context.Context, stdout, stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("linattn plot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "FIGURE.png, FIGURE.svg or FIGURE.pdf (default: FILE.png beside FILE.npz)")
	xscale := fs.String("xscale", "log", "time axis: log or lin (log leaves t = 0 out and says so)")
	by := fs.String("by", "", "sweep: the swept field that colours the runs (default: the first swept field other than seed)")
	panels := fs.Bool("panels", false, "sweep: one panel of loss curves per value of -by")
	view := fs.String("view", "", "run: dynamics (default: loss, value weights, key alignment) or pcr (the effective map at each plateau); sweep: runs (default) or median (over seeds, with the quartile band)")
	size := fs.String("size", "", "WxH: width and height in inches, each in [1, 40], at least the figure's smallest (default: the figure's own, 3.5 in wide for one column)")
	dpi := fs.Int("dpi", 200, "PNG resolution in dots per inch, 50 ≤ dpi ≤ 1200")
	usageErr := usageError(stderr, "plot")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, plotUsage)
			printFlags(stdout, fs)
			return ExitOK
		}
		return usageErr("%v (see linattn plot -h)", err)
	}
	if len(files) != 1 {
		return usageErr("want one FILE.npz, got %d arguments %q", len(files), files)
	}
	sz, err := parseSize(*size, *dpi)
	if err != nil {
		return usageErr("%v", err)
	}
	target := *out
	if target == "" {
		target = strings.TrimSuffix(files[0], ".npz") + ".png"
	}
	if _, err := figures.FormatOf(target); err != nil {
		return usageErr("-o: %v", err)
	}
	fig, err := figures.Load(files[0], figures.Options{XScale: *xscale, By: *by, Panels: *panels, View: *view})
	if err != nil {
		return usageErr("%v", err)
	}
	if err := fig.CheckSize(sz); err != nil {
		return usageErr("-size: %v", err)
	}
	created, err := checkFigurePath(target)
	if err != nil {
		return usageErr("%v", err)
	}
	if err := fig.Save(target, sz); err != nil {
		output.RemoveEmptyDirs(created)
		fmt.Fprintf(stderr, "linattn plot: %v\n", err)
		return ExitFailure
	}
	reportFigure(stdout, fig, target)
	return ExitOK
}

// parseInterspersed parses flags given before and after the positional
// arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// parseSize reads -size WxH (inches) and -dpi.
func parseSize(text string, dpi int) (figures.Size, error) {
	s := figures.Size{DPI: dpi}
	if dpi < 50 || dpi > 1200 {
		return s, fmt.Errorf("-dpi = %d, want 50 ≤ dpi ≤ 1200", dpi)
	}
	if text == "" {
		return s, nil
	}
	w, h, ok := strings.Cut(strings.ToLower(text), "x")
	wi, err1 := strconv.ParseFloat(w, 64)
	hi, err2 := strconv.ParseFloat(h, 64)
	if !ok || err1 != nil || err2 != nil || !(wi >= 1 && wi <= 40 && hi >= 1 && hi <= 40) {
		return s, fmt.Errorf("-size = %q, want WxH in inches, each in [1, 40] (e.g. 3.5x4)", text)
	}
	s.Width, s.Height = vg.Length(wi)*vg.Inch, vg.Length(hi)*vg.Inch
	return s, nil
}

// checkFigurePath validates a figure's path before any work: a known
// extension in a directory that exists or can be created; it returns the
// folders it created (output.PrepareDir).
func checkFigurePath(path string) ([]string, error) {
	if _, err := figures.FormatOf(path); err != nil {
		return nil, fmt.Errorf("-o: %w", err)
	}
	created, err := output.PrepareDir(path)
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", path, err)
	}
	return created, nil
}

func reportFigure(w io.Writer, fig *figures.Figure, path string) {
	for _, n := range fig.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "wrote %s\n", path)
}

// plotFlag is -plot on run, reduced, landscape and sweep: a boolean flag
// (-plot writes FILE.png beside FILE.npz) that also takes a format
// (-plot=svg, -plot=pdf).
type plotFlag struct{ format string }

func (p *plotFlag) String() string {
	if p == nil {
		return ""
	}
	return p.format
}

func (p *plotFlag) Set(s string) error {
	switch s {
	case "true":
		p.format = "png"
	case "false":
		p.format = ""
	case "png", "svg", "pdf":
		p.format = s
	default:
		return fmt.Errorf("-plot = %q, want -plot (png), -plot=svg or -plot=pdf", s)
	}
	return nil
}

func (p *plotFlag) IsBoolFlag() bool { return true }

// plottable are the commands whose output linattn plot draws.
var plottable = map[string]bool{"run": true, "train": true, "reduced": true, "landscape": true, "sweep": true}

// addPlotFlag declares -plot on the flags of a plottable command; for the
// others it returns a flag that is never set.
func addPlotFlag(fs *flag.FlagSet, command string) *plotFlag {
	p := &plotFlag{}
	if plottable[command] {
		fs.Var(p, "plot", "also draw the output as FILE.png beside FILE.npz (-plot=svg or -plot=pdf for those formats; see linattn plot)")
	}
	return p
}

// plotBeside draws the output file npz as npz with the extension of the
// format, with plot's defaults. A figure that cannot be drawn is an error
// of the command; the .npz is already written.
func plotBeside(w io.Writer, npz string, p *plotFlag) error {
	if p.format == "" {
		return nil
	}
	fig, err := figures.Load(npz, figures.Options{})
	if err != nil {
		return fmt.Errorf("-plot: %w", err)
	}
	path := strings.TrimSuffix(npz, ".npz") + "." + p.format
	if err := fig.Save(path, figures.Size{}); err != nil {
		return fmt.Errorf("-plot: %w", err)
	}
	reportFigure(w, fig, path)
	return nil
}
