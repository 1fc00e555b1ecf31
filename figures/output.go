package figures

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/linattn/linattn/export"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The output of a Figure: its formats, sizes and atomic writing.

// Formats returns the output formats, by file extension.
func Formats() []string { return []string{"png", "svg", "pdf"} }

// Size is the size of a written figure; zero fields take the figure's
// default, and DPI (PNG only) defaults to 200.
type Size struct {
	Width, Height vg.Length
	DPI           int
}

// Write renders f in the format (png, svg or pdf) to w.
func (f *Figure) Write(w io.Writer, format string, size Size) (err error) {
	defer func() {
		// gonum/plot panics on some degenerate inputs; a figure that cannot
		// be drawn is an error, never a crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("figure: cannot draw: %v", r)
		}
	}()
	if err := f.CheckSize(size); err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	c, err := newCanvas(format, f.size(size))
	if err != nil {
		return err
	}
	dc := draw.New(c)
	f.layout(dc).draw(dc)
	_, err = c.WriteTo(w)
	return err
}

// MinSize is the smallest size at which the figure's texts fit beside its
// data: MinWidth wide, and as tall as minHeight needs there.
func (f *Figure) MinSize() Size { return Size{Width: f.MinWidth, Height: f.minHeight(f.MinWidth)} }

// minHeight is the least height at width w: MinHeight, or more where the
// title and caption (wrapped to w) and the legends beside the panels of a
// row need it (their height, and an inch for the row's title, tick labels
// and axis label) or a legend under the grid does.
func (f *Figure) minHeight(w vg.Length) vg.Length {
	h := f.MinHeight
	need := titleHeight(f.Title, w) + captionHeight(f.Caption, w)
	for _, row := range f.Grid {
		var tallest vg.Length
		for _, p := range row {
			if p == nil || p.legendEntries() == 0 {
				continue
			}
			switch p.Legend {
			case Outside:
				tallest = max(tallest, p.legend().height())
			case Below:
				l := p.legend()
				l.fit(w - edgeLeft - edgeRight)
				h += l.height() + legendInset
			}
		}
		need += tallest + vg.Inch
	}
	return max(h, need)
}

// CheckSize reports an error when the size s (zero fields: the figure's
// default) is below the figure's smallest: narrower than MinWidth, or
// lower than minHeight at its width.
func (f *Figure) CheckSize(s Size) error {
	s = f.size(s)
	m := Size{Width: max(s.Width, f.MinWidth)}
	m.Height = f.minHeight(m.Width)
	if s.Width < m.Width-0.01 || s.Height < m.Height-0.01 {
		return fmt.Errorf("%.3gx%.3g in is smaller than this figure's smallest size, %.3gx%.3g in",
			s.Width/vg.Inch, s.Height/vg.Inch, m.Width/vg.Inch, m.Height/vg.Inch)
	}
	return nil
}

func (f *Figure) size(s Size) Size {
	if s.Width <= 0 {
		s.Width = max(f.Width, f.MinWidth)
	}
	if s.Height <= 0 {
		s.Height = max(f.Height, f.minHeight(s.Width))
	}
	if s.DPI <= 0 {
		s.DPI = 200
	}
	return s
}

var reproduciblePDF sync.Once

// newCanvas returns an empty canvas of the format and size.
func newCanvas(format string, s Size) (vg.CanvasWriterTo, error) {
	switch format {
	case "png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(s.Width, s.Height), vgimg.UseDPI(s.DPI))}, nil
	case "svg":
		return vgsvg.New(s.Width, s.Height), nil
	case "pdf":
		reproduciblePDF.Do(func() {
			// The PDF's creation and modification dates are the Unix epoch,
			// not the time of writing, and its catalogs sorted, so that the
			// same figure gives the same bytes.
			fpdf.SetDefaultCreationDate(time.Unix(0, 0).UTC())
			fpdf.SetDefaultModificationDate(time.Unix(0, 0).UTC())
			fpdf.SetDefaultCatalogSort(true)
		})
		return vgpdf.New(s.Width, s.Height), nil
	}
	return nil, fmt.Errorf("figure: format %q, want png, svg or pdf", format)
}

// FormatOf is the format of a figure file, from its extension.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range Formats() {
		if ext == f && filepath.Base(path) != "."+ext {
			return ext, nil
		}
	}
	return "", fmt.Errorf("%q: want a FIGURE.png, FIGURE.svg or FIGURE.pdf path", path)
}

// Save writes f to path atomically (export.WriteFileAtomic: a failed write
// leaves no file), in the format of its extension.
func (f *Figure) Save(path string, size Size) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	return export.WriteFileAtomic(path, func(w io.Writer) error { return f.Write(w, format, size) })
}
