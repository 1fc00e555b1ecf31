package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Program is Meta.Program of every output linattn writes.
const Program = "linattn"

// MetaKey is the key of a sidecar's Meta; a spec ignores it (package
// spec's Parse), so that every sidecar is itself a spec.
const MetaKey = "meta"

// Sidecar is FILE.json beside an output FILE.npz: the fully resolved spec
// (every field the command read, defaults filled in) and, under MetaKey,
// everything else about the output.
type Sidecar struct {
	// Spec is the spec's JSON object (package spec writes and reads it:
	// spec.Spec.MarshalJSON, spec.Parse), without the meta.
	Spec json.RawMessage
	Meta Meta
}

// Meta is the "meta" member of a sidecar.
type Meta struct {
	Program  string `json:"program"` // Program
	Version  string `json:"version"`
	Command  string `json:"command"`  // run, train, reduced or landscape
	Complete bool   `json:"complete"` // whether the command finished
	// Status is flow.Status's text for a run ("converged", "reached T"),
	// "complete", "done", or why the output is incomplete.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Output is the .npz's name, OutputSHA256 its SHA-256 and Arrays the
	// shape of each of its arrays (Write sets them).
	Output       string           `json:"output"`
	OutputSHA256 string           `json:"output_sha256"`
	Arrays       map[string][]int `json:"arrays"`
	WallSeconds  float64          `json:"wall_seconds"`
	Inputs       map[string]Input `json:"inputs,omitempty"`
	Problem      ProblemMeta      `json:"problem"`
	Solver       *SolverMeta      `json:"solver,omitempty"`
	// Result holds the command's numbers (RunResult for run,
	// MergedResult for reduced on the merged model; see docs/cli.md).
	Result json.RawMessage `json:"result,omitempty"`
}

// Input is a file a job read (-init, -eigvecs), with its SHA-256.
type Input struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// ProblemMeta holds the quantities the spec implies. Plateaus and L_star
// are those of the in-context task (docs/math.md, "Fixed points"); L_min
// is the least loss of the layer under its task law, left out where it is
// not known (flow.System.MinLoss).
type ProblemMeta struct {
	Eigvals             []float64 `json:"eigvals"`
	Nu                  float64   `json:"nu"`
	Plateaus            []float64 `json:"plateaus"`
	LStar               float64   `json:"L_star"`
	LMin                *float64  `json:"L_min,omitempty"`
	ExpressivityLimited bool      `json:"expressivity_limited"`
	StateSize           int       `json:"state_size"`
	// FixedTasks says where the fixed tasks came from: "drawn" (from the
	// data seed as -task-draw says) or "given" (-w0, -w0-file); absent
	// without fixed tasks.
	FixedTasks string `json:"fixed_tasks,omitempty"`
}

// SolverMeta is the integrator's account of the run.
type SolverMeta struct {
	Method    string  `json:"method"`
	RTol      float64 `json:"rtol"`
	ATol      float64 `json:"atol"`
	Steps     int     `json:"steps"`
	FuncEvals int     `json:"func_evals"`
	Rejected  int     `json:"rejected"`
	TEnd      float64 `json:"t_end"`
	// ByMethod splits steps, rejections and evaluations by method (Auto
	// switches between two); Switches counts the changes.
	ByMethod []MethodMeta `json:"by_method"`
	Switches int          `json:"switches"`
}

// MethodMeta is the work of one method.
type MethodMeta struct {
	Method    string `json:"method"`
	Steps     int    `json:"steps"`
	Rejected  int    `json:"rejected"`
	FuncEvals int    `json:"func_evals"`
}

// RunResult is Meta.Result of linattn run (its JSON members in order).
type RunResult struct {
	L0               float64          `json:"L0"`
	FinalLoss        float64          `json:"final_loss"`
	ObservedPlateaus []float64        `json:"observed_plateaus"` // flow.Trajectory.Plateaus
	Samples          int              `json:"samples"`
	Transitions      []TransitionMeta `json:"transitions"`
	// The exact test losses at the end (flow.Trajectory.TestICL, TestIWL,
	// TestIDG), when the run computed them.
	FinalTestICL *float64 `json:"final_test_icl,omitempty"`
	FinalTestIWL *float64 `json:"final_test_iwl,omitempty"`
	FinalTestIDG *float64 `json:"final_test_idg,omitempty"`
}

// TransitionMeta is a drop of a run (flow.Transition) and the 1-D theory's
// prediction of its time, where it has one (reduced.PredictDrops).
type TransitionMeta struct {
	Level      float64  `json:"level"`
	M          int      `json:"m"`
	T          float64  `json:"t"`
	TPredicted *float64 `json:"t_predicted,omitempty"`
}

// MergedResult is Meta.Result of linattn reduced for the merged model:
// the drop-time estimates and, for white Λ, how well the closed form
// (LossClosedForm) holds from this start.
type MergedResult struct {
	ClosedFormExact           *bool    `json:"closed_form_exact,omitempty"`
	ClosedFormMaxDeviation    *float64 `json:"closed_form_max_deviation,omitempty"`
	S0                        float64  `json:"s0"`
	StartDistanceFromBalanced *float64 `json:"start_distance_from_balanced,omitempty"`
	TDropObserved             *float64 `json:"t_drop_observed,omitempty"`
	TDropPaper                float64  `json:"t_drop_paper"`
	TDropRefined              float64  `json:"t_drop_refined"`
}

// SetResult stores v, JSON-encoded, as the Result.
func (m *Meta) SetResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("output: encode result: %w", err)
	}
	m.Result = b
	return nil
}

// DecodeResult decodes the Result into v (RunResult, MergedResult, or a
// map for any command).
func (m *Meta) DecodeResult(v any) error {
	if len(m.Result) == 0 {
		return fmt.Errorf("output: the sidecar has no result")
	}
	return json.Unmarshal(m.Result, v)
}

// SidecarPath is FILE.json for FILE.npz.
func SidecarPath(npz string) string { return strings.TrimSuffix(npz, ".npz") + ".json" }

// MarshalJSON writes the spec's fields followed by "meta", one member per
// line to a depth of three, arrays and deeper objects on one line.
func (sc *Sidecar) MarshalJSON() ([]byte, error) {
	sb := []byte(sc.Spec)
	if len(sb) < 2 {
		sb = []byte("{}")
	}
	mb, err := json.Marshal(&sc.Meta)
	if err != nil {
		return nil, fmt.Errorf("output: encode sidecar: %w", err)
	}
	var raw bytes.Buffer
	raw.Write(sb[:len(sb)-1])
	if len(sb) > 2 {
		raw.WriteByte(',')
	}
	fmt.Fprintf(&raw, "%q:", MetaKey)
	raw.Write(mb)
	raw.WriteByte('}')
	out, err := indentObjects(raw.Bytes(), 3)
	if err != nil {
		return nil, fmt.Errorf("output: encode sidecar: %w", err)
	}
	return append(out, '\n'), nil
}

// ReadSidecar reads the sidecar of the output npz (FILE.json beside
// FILE.npz) and returns it with its bytes.
func ReadSidecar(npz string) (*Sidecar, []byte, error) {
	path := SidecarPath(npz)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	sc, err := parseSidecar(b)
	if err != nil {
		return nil, nil, fmt.Errorf("sidecar %s: %w", path, err)
	}
	return sc, b, nil
}

// parseSidecar decodes a sidecar: the meta, and the spec's members as
// they stand, in their order (package spec decodes them). Anything but
// white space after the object is refused.
func parseSidecar(b []byte) (*Sidecar, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object (%v)", err)
	}
	var meta *Meta
	spec := bytes.NewBufferString("{")
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if key == MetaKey {
			if err := json.Unmarshal(raw, &meta); err != nil {
				return nil, err
			}
			continue
		}
		if spec.Len() > 1 {
			spec.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		spec.Write(k)
		spec.WriteByte(':')
		if err := json.Compact(spec, raw); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // the object's '}'
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON object at byte %d", dec.InputOffset())
	}
	if meta == nil || meta.Program != Program {
		return nil, fmt.Errorf("no meta.program %q", Program)
	}
	spec.WriteByte('}')
	return &Sidecar{Spec: spec.Bytes(), Meta: *meta}, nil
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
