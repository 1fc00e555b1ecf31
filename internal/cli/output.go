package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/linattn/linattn/ode"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/internal/spec"
	"gonum.org/v1/gonum/mat"
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

// meta is the "meta" member of a sidecar: everything about the output
// except the spec, whose fields are the sidecar's other members.
type meta struct {
	Program      string                `json:"program"`
	Version      string                `json:"version"`
	Command      string                `json:"command"`
	Complete     bool                  `json:"complete"`
	Status       string                `json:"status"`
	Error        string                `json:"error,omitempty"`
	Output       string                `json:"output"`
	OutputSHA256 string                `json:"output_sha256"`
	Arrays       map[string][]int      `json:"arrays"`
	WallSeconds  float64               `json:"wall_seconds"`
	Inputs       map[string]spec.Input `json:"inputs,omitempty"`
	Problem      problemMeta           `json:"problem"`
	Solver       *solverMeta           `json:"solver,omitempty"`
	Result       map[string]any        `json:"result,omitempty"`
}

// problemMeta holds the quantities the spec implies.
type problemMeta struct {
	Eigvals             []float64 `json:"eigvals"`
	Nu                  float64   `json:"nu"`
	Plateaus            []float64 `json:"plateaus"`
	LStar               float64   `json:"L_star"`
	LMin                float64   `json:"L_min"`
	ExpressivityLimited bool      `json:"expressivity_limited"`
	StateSize           int       `json:"state_size"`
}

type solverMeta struct {
	Method    string  `json:"method"`
	RTol      float64 `json:"rtol"`
	ATol      float64 `json:"atol"`
	Steps     int     `json:"steps"`
	FuncEvals int     `json:"func_evals"`
	Rejected  int     `json:"rejected"`
	TEnd      float64 `json:"t_end"`
	// ByMethod splits steps, rejections and evaluations by method (Auto
	// switches between two); Switches counts the changes.
	ByMethod []methodMeta `json:"by_method"`
	Switches int          `json:"switches"`
}

type methodMeta struct {
	Method    string `json:"method"`
	Steps     int    `json:"steps"`
	Rejected  int    `json:"rejected"`
	FuncEvals int    `json:"func_evals"`
}

func byMethod(st []ode.MethodStats) []methodMeta {
	out := make([]methodMeta, len(st))
	for i, m := range st {
		out[i] = methodMeta{Method: m.Name, Steps: m.Steps, Rejected: m.Rejected, FuncEvals: m.FuncEvals}
	}
	return out
}

func newMeta(e *env, job *spec.Job, start time.Time) *meta {
	s := job.System
	return &meta{
		Program: "linattn", Version: version(), Command: e.cmd.Name,
		Output: filepath.Base(e.out), Inputs: job.Inputs,
		WallSeconds: time.Since(start).Seconds(),
		Problem: problemMeta{
			Eigvals: s.Data.Lambda(), Nu: s.Data.Nu(), Plateaus: s.Data.PlateauLevels(),
			LStar: s.Data.MinLoss(), LMin: s.MinLoss(),
			ExpressivityLimited: s.ExpressivityLimited, StateSize: s.Len(),
		},
	}
}

// sidecarPath is FILE.json for FILE.npz.
func sidecarPath(npz string) string { return strings.TrimSuffix(npz, ".npz") + ".json" }

// save writes the arrays to e.out and then the sidecar beside it, both
// atomically. The sidecar is the resolved spec with m as its "meta" member,
// so it can be given back to -spec.
func (e *env) save(job *spec.Job, arrays []export.Array, m *meta) error {
	// The .npz is hashed as it is written; while it is synced the sidecar,
	// which holds the hash, is written and synced too. The .npz is put in
	// place first, so a sidecar never describes an .npz that is not there.
	hashed := make(chan []byte, 1)
	type result struct {
		p   *export.PendingFile
		err error
	}
	npzDone := make(chan result, 1)
	go func() {
		sent := false
		p, err := export.CreatePending(e.out, func(w io.Writer) error {
			h := sha256.New()
			err := export.WriteNPZ(io.MultiWriter(w, h), arrays)
			if err == nil {
				hashed <- h.Sum(nil)
				sent = true
			}
			return err
		})
		if !sent {
			hashed <- nil // failed before the hash: the result says why
		}
		npzDone <- result{p, err}
	}()
	sum := <-hashed
	if sum == nil {
		return (<-npzDone).err
	}
	m.OutputSHA256 = hex.EncodeToString(sum)
	m.Arrays = map[string][]int{}
	for _, a := range arrays {
		m.Arrays[a.Name] = append([]int{}, a.Shape...)
	}
	side, err := sidecar(job.Spec, m)
	var pending *export.PendingFile
	if err == nil {
		pending, err = export.CreatePending(sidecarPath(e.out), func(w io.Writer) error {
			_, err := w.Write(side)
			return err
		})
	}
	npz := <-npzDone
	switch {
	case npz.err != nil:
		if pending != nil {
			pending.Abort()
		}
		return npz.err
	case err != nil:
		npz.p.Abort()
		return err
	}
	if err := npz.p.Commit(); err != nil {
		pending.Abort()
		return err
	}
	// A failed rename here (rare: both files are already synced in the same
	// directory) leaves the new .npz beside the previous sidecar, whose
	// output_sha256 then no longer matches: the mismatch is detectable.
	return pending.Commit()
}

// sidecar returns the JSON of the spec's fields followed by "meta".
func sidecar(s *spec.Spec, m *meta) ([]byte, error) {
	sb, err := s.MarshalJSON()
	if err != nil {
		return nil, err
	}
	mb, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode sidecar: %w", err)
	}
	var raw bytes.Buffer
	raw.Write(sb[:len(sb)-1])
	if len(sb) > 2 {
		raw.WriteByte(',')
	}
	fmt.Fprintf(&raw, "%q:", spec.MetaKey)
	raw.Write(mb)
	raw.WriteByte('}')
	out, err := indentObjects(raw.Bytes(), 3)
	if err != nil {
		return nil, fmt.Errorf("encode sidecar: %w", err)
	}
	return append(out, '\n'), nil
}

// indentObjects formats JSON with the members of objects nested less than
// depth deep on lines of their own, and arrays and deeper objects on one
// line, so that a sidecar reads as a list of fields.
func indentObjects(raw []byte, depth int) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		object, expanded bool
		n                int // keys and values (object) or values (array) so far
	}
	var stack []*frame
	var out bytes.Buffer
	newline := func() {
		out.WriteByte('\n')
		out.WriteString(strings.Repeat("  ", len(stack)))
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if f.expanded && f.n > 0 {
				newline()
			}
			out.WriteRune(rune(d))
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.n%2 == 0 { // a key
			if top.n > 0 {
				out.WriteByte(',')
			}
			if top.expanded {
				newline()
			}
			k, _ := json.Marshal(tok)
			out.Write(k)
			out.WriteByte(':')
			if top.expanded {
				out.WriteByte(' ')
			}
			top.n++
			continue
		}
		if top != nil {
			if !top.object && top.n > 0 {
				out.WriteByte(',')
			}
			top.n++
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{object: d == '{', expanded: d == '{' && len(stack) < depth})
			out.WriteRune(rune(d))
			continue
		}
		v, err := json.Marshal(tok)
		if err != nil {
			return nil, err
		}
		out.Write(v)
	}
}

// dataArrays are the arrays that describe the task, shared by all outputs:
// Lambda (D, D), eigvals (D), eigvecs (D, D) with eigvecs[:, d] = e_d, and
// plateaus (D+1) = L(M_m).
func dataArrays(data *flow.Data) []export.Array {
	d := data.Dim()
	return []export.Array{
		export.Floats("Lambda", rowMajor(data.Covariance()), d, d),
		export.Floats("eigvals", data.Lambda(), d),
		export.Floats("eigvecs", rowMajor(data.Vecs()), d, d),
		export.Floats("plateaus", data.PlateauLevels(), d+1),
	}
}

func floats(x []float64, format string) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = fmt.Sprintf(format, v)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// rowMajor returns m's elements in C order.
func rowMajor(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out = append(out, m.At(i, j))
		}
	}
	return out
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
// second and the line was not rewritten in the last 200 ms. It is cheap
// enough to call at every step.
func (p *progress) Due() bool {
	if !p.on {
		return false
	}
	if p.calls++; p.calls%64 != 1 {
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

// isTerminal reports whether w is a terminal; a variable for tests.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
