package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/layout"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

// Version is the program version recorded in every sidecar.
const Version = "0.2.0"

// version adds the VCS revision when the binary was built from a checkout.
func version() string {
	v := Version
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				v += "+" + s.Value
			}
		}
	}
	return v
}

// newSidecar returns the sidecar of the job's output with the meta of
// every command filled in (fillMeta); the command adds its status, solver
// and result, save the spec, and output.Write the file's name, hash and
// shapes.
func newSidecar(e *env, job *spec.Job, start time.Time) *output.Sidecar {
	side := &output.Sidecar{Meta: output.Meta{Program: output.Program, Command: e.cmd.Name, Problem: layout.Problem(job.System)}}
	fillMeta(&side.Meta, job, start)
	return side
}

// fillMeta adds to the meta m of the job's output what only the command
// line knows: the program's version, the inputs read, the wall time since
// start, and whether the fixed tasks were given or drawn.
func fillMeta(m *output.Meta, job *spec.Job, start time.Time) {
	m.Version, m.Inputs, m.WallSeconds = version(), job.Inputs, time.Since(start).Seconds()
	if job.Data.HasFixed() {
		m.Problem.FixedTasks = "given"
		if job.DrawnTasks {
			m.Problem.FixedTasks = "drawn"
		}
	}
}

// save writes the arrays to e.out and beside them the sidecar with the
// resolved spec sp (output.Write).
func (e *env) save(arrays []export.Array, side *output.Sidecar, sp *spec.Spec) error {
	raw, err := sp.MarshalJSON()
	if err != nil {
		return err
	}
	side.Spec = raw
	err = output.Write(e.out, arrays, side)
	e.saved = err == nil
	return err
}

func floats(x []float64, format string) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = fmt.Sprintf(format, v)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// progress prints one status line on stderr, rewritten in place, for work
// that lasts longer than a second; it is silent when off.
type progress struct {
	w           io.Writer
	on, shown   bool
	calls       int
	start, last time.Time
}

func newProgress(w io.Writer, on bool) *progress {
	return &progress{w: w, on: on, start: time.Now()}
}

// Due reports whether a line should be shown now: the work has lasted a
// second and the line was not rewritten in the last 200 ms. It looks at
// the clock on every 64th call only, so it is cheap enough to call at
// every step.
func (p *progress) Due() bool { return p.due(64) }

// DueSlow is Due for calls far apart (seconds of work each), which it
// looks at every one of.
func (p *progress) DueSlow() bool { return p.due(1) }

func (p *progress) due(every int) bool {
	if !p.on {
		return false
	}
	if p.calls++; p.calls%every != 1%every {
		return false
	}
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 200*time.Millisecond {
		return false
	}
	p.last = now
	return true
}

// Show rewrites the status line.
func (p *progress) Show(msg string) {
	p.shown = true
	fmt.Fprintf(p.w, "\r\033[K%s", msg)
}

// Done clears the status line.
func (p *progress) Done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
