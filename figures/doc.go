// Package figures draws the outputs of linattn (run, train, reduced,
// landscape and a sweep's index) as figures with gonum.org/v1/plot, in
// PNG, SVG or PDF.
//
// Load reads FILE.npz and its sidecar through package output and builds a
// Figure; Run builds the figure of a flow.System's run in memory, after
// flow.System.Run, as linattn plot draws out/run.npz:
//
//	tr, _ := s.Run(ctx, y0, flow.RunSettings{})
//	fig, _ := figures.Run(s, tr, figures.Options{})
//	fig.Save("run.png", figures.Size{})
//
// A Figure is a grid of Panels holding the numbers they draw, taken from
// the output's arrays by pure functions, so that tests compare what is
// drawn with what is stored; no theory is computed here (the merged
// model's closed form is output.LossClosedForm, written by the command
// that has it). Write and Save render it: time on a log axis unless asked
// otherwise, the plateau levels L(M_m) as dotted lines labelled beside the
// panel, legends where they hide the fewest points, Okabe–Ito colours and
// Liberation Sans text sized for a figure printed at its own size in a
// two-column paper. The same figure gives the same SVG and PDF bytes.
// docs/cli.md ("plot") says what each figure shows.
package figures
