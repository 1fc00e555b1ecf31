package figures

import (
	"fmt"
	"image/color"
	"math"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"

	"gonum.org/v1/plot/vg"
)

// A Figure is what a file's picture shows, before any drawing: a title and
// a grid of panels, each holding the numbers it draws. The functions that
// build it from a file's arrays are pure, so tests compare what is drawn
// with what the file holds; Write renders it.
type Figure struct {
	Title string
	// Grid is row-major; a nil panel leaves its cell empty. Heights weights
	// the rows (nil: equal).
	Grid    [][]*Panel
	Heights []float64
	// Widths weights the columns of the rows with len(Widths) panels (nil:
	// equal).
	Widths []float64
	// Width and Height are the default size; MinWidth and MinHeight the
	// smallest at which everything fits (Write refuses smaller sizes).
	Width, Height       vg.Length
	MinWidth, MinHeight vg.Length
	// Caption, when set, is a sentence under the grid that the figure
	// needs to be read right.
	Caption string
	// Notes say what the figure leaves out or approximates, one line each;
	// the command prints them.
	Notes []string
}

// A Panel is one set of axes.
type Panel struct {
	Title          string
	XLabel, YLabel string
	XLog, YLog     bool
	// XRange and YRange, when set (Max > Min), fix an axis; otherwise it
	// spans the data with a margin. Panels stacked on one time axis share
	// their XRange.
	XRange, YRange Range
	// XTicks, when set, are the only labelled x ticks (categories and swept
	// values); HideXLabels hides the x tick labels (a panel above another
	// on the same axis).
	XTicks      []Tick
	HideXLabels bool

	Curves []Curve
	Points []Points
	// Bands are shaded areas between two curves, drawn under the curves.
	Bands []Band
	// HLines and VLines are reference lines across the panel.
	HLines []RefLine
	VLines []RefLine
	Heat   *Heat
	// ColorBar, when positive, makes the panel the colour scale of heat
	// maps from −ColorBar to ColorBar.
	ColorBar float64

	// Legend is where the legend prefers to go: the first of that corner,
	// the other corners and the middles of the edges where it covers no
	// data, or else Outside, to the right of the panel.
	Legend Placement
}

// Range is an axis interval.
type Range struct{ Min, Max float64 }

// Set reports whether r fixes the axis.
func (r Range) Set() bool { return r.Max > r.Min }

// Tick is a labelled axis value.
type Tick struct {
	Value float64
	Label string
}

// Curve is a line through points (X[i], Y[i]).
type Curve struct {
	Label  string // legend entry; empty for none
	X, Y   []float64
	Color  color.Color
	Dashed bool
	Dotted bool // a value held, not computed (a converged run's final state)
	// Dash, when positive, picks a dash pattern of its own (dashes): the
	// line style of a swept field's values.
	Dash int
	Thin bool
}

// Band is the area between the curves (X[i], Lo[i]) and (X[i], Hi[i]),
// shaded in a light tint of Color: the spread around a median.
type Band struct {
	Label     string // legend entry; empty for none
	X, Lo, Hi []float64
	Color     color.Color
}

// Points are markers at (X[i], Y[i]), with an optional text beside each
// and optional vertical bars from Lo[i] to Hi[i].
type Points struct {
	Label  string // legend entry; empty for none
	X, Y   []float64
	Text   []string
	Lo, Hi []float64
	Color  color.Color
	Open   bool // hollow markers
	Square bool // squares instead of circles
}

// RefLine is a dotted reference line at Value; a horizontal line's Label
// is written to the right of the panel, level with it.
type RefLine struct {
	Value float64
	Label string
}

// Heat is a matrix drawn as coloured cells, Z[i][j] in row i (top to
// bottom) and column j, on the diverging map from −Max to Max.
type Heat struct {
	Z   [][]float64
	Max float64
}

// Placement says where a panel's legend goes.
type Placement int

const (
	NoLegend Placement = iota
	TopLeft
	TopRight
	BottomLeft
	BottomRight
	Outside // to the right of the panel
	Below   // under the whole grid, in as many columns as fit: a legend of every panel
)

// legendEntries counts a panel's legend entries.
func (p *Panel) legendEntries() int {
	n := 0
	for _, c := range p.Curves {
		if c.Label != "" {
			n++
		}
	}
	for _, pt := range p.Points {
		if pt.Label != "" {
			n++
		}
	}
	for _, b := range p.Bands {
		if b.Label != "" {
			n++
		}
	}
	return n
}

// Options choose among the figures of a file.
type Options struct {
	// XScale is the time axis: "log" (the default) or "lin".
	XScale string
	// By is the swept field that colours the runs of a sweep; the default
	// is the first swept field other than seed.
	By string
	// Panels draws a sweep as one panel per value of By.
	Panels bool
	// View is the figure of a run file: "dynamics" (the default: loss,
	// value weights, key alignment) or "pcr" (the effective map at each
	// plateau beside the projection onto the leading eigenvectors); or of a
	// sweep: "runs" (the default: every run) or "median" (the median over
	// the seeds and the band between the quartiles).
	View string
}

// Load reads the output file at path (FILE.npz and its sidecar FILE.json,
// as linattn run, train, reduced, landscape or sweep write them) and
// returns its figure. Its errors describe bad input: a file that is not
// ours, an array missing or of the wrong shape, an option that does not
// apply.
func Load(path string, opt Options) (*Figure, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	f, err := output.Open(path)
	if err != nil {
		return nil, err
	}
	return Draw(f, opt)
}

// Run returns the figure of the run tr of s, as linattn plot draws the
// output of linattn run: for a Go program after flow.System.Run.
func Run(s *flow.System, tr *flow.Trajectory, opt Options) (*Figure, error) {
	return Draw(spec.RunFile(s, tr, nil), opt) // the figure reads how the run ended off tr.Status
}

// Draw returns the figure of an output read by package output (Open, or
// spec.RunFile in memory).
func Draw(of *output.File, opt Options) (*Figure, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	f, err := newFile(of)
	if err != nil {
		return nil, err
	}
	switch {
	case opt.View == "pcr" && f.kind != "run":
		return nil, fmt.Errorf("-view pcr draws a run file; %s is the output of linattn %s", f.path, f.command())
	case (opt.View == "median" || opt.View == "runs") && f.kind != "index":
		return nil, fmt.Errorf("-view %s draws a sweep's index.npz; %s is the output of linattn %s", opt.View, f.path, f.command())
	case opt.By != "" && f.kind != "index":
		return nil, fmt.Errorf("-by %s colours the runs of a sweep's index.npz by a swept field; %s is the output of linattn %s: leave -by out, or plot DIR/index.npz", opt.By, f.path, f.command())
	case opt.Panels && f.kind != "index":
		return nil, fmt.Errorf("-panels draws a sweep's index.npz in one panel per value of -by; %s is the output of linattn %s: leave -panels out, or plot DIR/index.npz", f.path, f.command())
	}
	switch f.kind {
	case "run":
		if opt.View == "pcr" {
			return pcrFigure(f)
		}
		return runFigure(f, opt)
	case "reduced":
		return reducedFigure(f, opt)
	case "landscape":
		return landscapeFigure(f)
	}
	return sweepFigure(f, opt)
}

func (o Options) check() error {
	switch o.XScale {
	case "", "log", "lin":
	default:
		return fmt.Errorf("-xscale = %q, want log or lin", o.XScale)
	}
	switch o.View {
	case "", "dynamics", "pcr", "runs", "median":
	default:
		return fmt.Errorf("-view = %q, want dynamics or pcr (a run), runs or median (a sweep)", o.View)
	}
	return nil
}

// thinLegend keeps at most max legend entries, evenly spread and always the
// first and the last, so that a legend of many ordered items (heads, drops,
// swept values in viridis order) stays within its panel.
func (p *Panel) thinLegend(max int) {
	var labels []*string
	for i := range p.Curves {
		if p.Curves[i].Label != "" {
			labels = append(labels, &p.Curves[i].Label)
		}
	}
	for i := range p.Points {
		if p.Points[i].Label != "" {
			labels = append(labels, &p.Points[i].Label)
		}
	}
	n := len(labels)
	if n <= max {
		return
	}
	step := float64(n-1) / float64(max-1)
	keep := map[int]bool{}
	for k := 0; k < max; k++ {
		keep[int(math.Round(float64(k)*step))] = true
	}
	for i, l := range labels {
		if !keep[i] {
			*l = ""
		}
	}
}
