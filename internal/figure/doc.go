// Package figure draws the output files of linattn (run, reduced,
// landscape and a sweep's index) as figures with gonum.org/v1/plot, in
// PNG, SVG or PDF.
//
// Load reads FILE.npz and its sidecar FILE.json and builds a Figure: a grid
// of Panels holding the numbers they draw, taken from the file's arrays by
// pure functions, so that tests compare what is drawn with what is stored.
// Write and Save render it: time on a log axis unless asked otherwise, the
// plateau levels L(M_m) as dotted lines labelled beside the panel, legends
// where they hide the fewest points, Okabe–Ito colours and Liberation Sans
// text sized for a figure printed at its own size in a two-column paper.
// The same figure gives the same SVG and PDF bytes. docs/cli.md ("plot")
// says what each figure shows.
package figure
