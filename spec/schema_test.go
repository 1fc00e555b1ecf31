package spec_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/layout"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSpecForms: every field's value survives its text form (flags) and
// its JSON form (spec files, sidecars), in the order of Fields; the JSON
// form refuses unknown, null and mistyped fields and alternatives given
// together.
func TestSpecForms(t *testing.T) {
	t.Parallel()
	text := map[string]string{"string": "merged", "int": "5", "uint": "18446744073709551615", "float": "0.125", "list": "0.5,0.25", "bool": "true"}
	choices := map[string]string{"model": "merged", "layer": "labelkey", "attention": "softmax", "path": "columns"} // typed: one of their names
	s := &spec.Spec{}
	for _, f := range spec.Fields() {
		if slices.Contains([]string{"spectrum", "white", "nu", "ntp-max", "init", "w0-file", "task-spectrum", "task-white", "test-task-spectrum", "test-task-white"}, f.Name) {
			continue // alternatives of eigs, N, winit, w0, task-eigs and test-task-eigs
		}
		value, ok := choices[f.Name]
		if !ok {
			value = text[f.Kind()]
		}
		if err := s.SetText(f.Name, value); err != nil {
			t.Fatalf("-%s %s: %v", f.Name, value, err)
		}
		if got := s.Text(f.Name); got != value {
			t.Errorf("-%s: text %q, want %q", f.Name, got, value)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := spec.Parse(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if b2, _ := json.Marshal(again); string(b2) != string(b) || !strings.HasPrefix(string(b), `{"model":"merged","D":5,"eigs":[0.5,0.25],"eigvecs":"merged"`) {
		t.Errorf("JSON form does not round-trip:\n%s\n%s", b, b2)
	}
	for _, bad := range []string{`{"bogus": 1}`, `{"N": null}`, `{"N": 3.5}`, `{"seed": -1}`, `{"N": 3, "nu": 0.5}`, `[1]`, `null`, `{"N": 3} {}`} {
		if _, err := spec.Parse([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestRunFile: the in-memory output of a run holds the arrays linattn run
// writes and a sidecar that describes the model and the problem.
func TestRunFile(t *testing.T) {
	t.Parallel()
	data, err := law.NewData([]float64{0.5, 0.25}, nil, law.Lengths{Nu: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Merged, H: 2, Tau: 1})
	if err != nil {
		t.Fatal(err)
	}
	y0, _ := s.Init(0.1, 1)
	tr, err := s.Run(context.Background(), y0, flow.RunSettings{T: 50, Samples: 11, Grid: flow.GridLinear})
	if err != nil {
		t.Fatal(err)
	}
	f := spec.RunFile(s, tr, nil)
	want := layout.Run(s, tr)
	sp, err := spec.Parse(f.Sidecar.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if f.Command() != "run" || len(f.Names()) != len(want) || sp.Model != flow.Merged || sp.Given("R") ||
		f.Sidecar.Meta.Status != "reached T" || f.Sidecar.Meta.Problem.Nu != 0.1 {
		t.Errorf("command %q, %d arrays, spec %+v, meta %+v", f.Command(), len(f.Names()), sp, f.Sidecar.Meta)
	}
	for _, a := range want {
		got, err := f.Array(a.Name, a.Shape...)
		if err != nil || !slices.Equal(got.Float, a.Float) || !slices.Equal(got.Int, a.Int) {
			t.Errorf("%s: %v", a.Name, err)
		}
	}
}

// TestSweepIndex: the runs of a sweep are the Cartesian product of its
// lists, the last field varying fastest; the shards' indexes merge into
// the index of the whole sweep, byte for byte.
func TestSweepIndex(t *testing.T) {
	t.Parallel()
	sw, err := spec.ParseSweep([]byte(`{"seed": [1, 2, 3], "R": [1, 2], "model": "separate"}`))
	if err != nil {
		t.Fatal(err)
	}
	if sw.Len() != 6 || !slices.Equal(sw.Swept, []string{"R", "seed"}) || string(sw.Values(1)["seed"]) != "2" || string(sw.Values(3)["R"]) != "2" {
		t.Fatalf("%d runs over %v: run 1 %s, run 3 %s", sw.Len(), sw.Swept, sw.Values(1), sw.Values(3))
	}
	row := func(i int) output.IndexRow {
		loss := 0.5 / float64(i+1)
		return output.IndexRow{Run: i, File: "run-" + string(rune('0'+i)) + ".npz", Params: sw.Values(i), Status: "complete",
			FinalLoss: &loss, Transitions: []float64{float64(i)}, TransitionM: []int{1}}
	}
	whole, shards := t.TempDir(), t.TempDir()
	var all []output.IndexRow
	for i := 0; i < sw.Len(); i++ {
		all = append(all, row(i))
	}
	if err := output.WriteIndex(whole, "index", output.NewIndex(sw, all)); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 2; k++ {
		var rows []output.IndexRow
		for i := k; i < sw.Len(); i += 2 {
			rows = append(rows, row(i))
		}
		idx := output.NewIndex(sw, rows)
		idx.Shard = []string{"0/2", "1/2"}[k]
		if err := output.WriteIndex(shards, []string{"index.shard-0-of-2", "index.shard-1-of-2"}[k], idx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := output.MergeIndexes(shards, []string{shards}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index.json", "index.npz"} {
		if string(mustRead(t, filepath.Join(whole, name))) != string(mustRead(t, filepath.Join(shards, name))) {
			t.Errorf("%s: merged shards differ from the whole sweep", name)
		}
	}
}

// TestDecodeObjectErrors: a spec file that is not one JSON object gets an
// error that says where: empty, the line and column (counted in
// characters, from 1) of the byte where the JSON breaks, or what it is.
func TestDecodeObjectErrors(t *testing.T) {
	for body, want := range map[string]string{
		"":                              "the file is empty",
		" \n\t":                         "the file is empty",
		`{"seed": 5,}`:                  "line 1, column 12: invalid character '}'",
		"{\n  \"seed\": 5\n  \"D\": 3}": "line 3, column 3: invalid character '\"' after object key:value pair",
		"{\"λ\": 1,\n\"é\": é}":         "line 2, column 6: invalid character 'Ã'",
		`{"seed": 5`:                    "the JSON ends before its object does",
		`[1]`:                           "want a JSON object of fields, got array",
		`null`:                          "want a JSON object of fields, got null",
		`{"N": 3} {}`:                   "line 1, column 10: data after the JSON object",
	} {
		_, err := spec.DecodeObject([]byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one with %q", body, err, want)
		}
	}
}

// TestLookupCopies: the fields Lookup and Fields return are copies: a
// caller that changes one, its slices included, changes nothing of the
// table.
func TestLookupCopies(t *testing.T) {
	t.Parallel()
	f, _ := spec.Lookup("N")
	f.Default, f.Alternatives[0] = "7", "white"
	all := spec.Fields()
	for i := range all {
		if all[i].Name == "eigs" {
			all[i].Alternatives[0], all[i].Usage = "N", ""
		}
	}
	g, _ := spec.Lookup("N")
	e, _ := spec.Lookup("eigs")
	if g.Default != "31" || g.Alternatives[0] != "nu" || e.Alternatives[0] != "spectrum" || e.Usage == "" {
		t.Errorf("the table changed: N %q %v, eigs %v %q", g.Default, g.Alternatives, e.Alternatives, e.Usage)
	}
}

// TestSweepListFields: one rule for every field whose value is a list
// (eigs, w0, task-eigs, test-task-eigs): a list of numbers is one value, a
// list of lists a sweep over them (issue 45, unclear case 6: task-eigs as
// a flat list was taken as four runs of one number each, and all failed).
func TestSweepListFields(t *testing.T) {
	t.Parallel()
	for _, f := range spec.Fields() {
		if f.Kind() != "list" {
			continue
		}
		one, err := spec.ParseSweep([]byte(`{"` + f.Name + `": [1.5, 1, 0.5, 0.25]}`))
		if err != nil || one.Len() != 1 || len(one.Swept) != 0 {
			t.Errorf("%s as a list of numbers: %v, %d runs over %v; want one run", f.Name, err, one.Len(), one.Swept)
		}
		two, err := spec.ParseSweep([]byte(`{"` + f.Name + `": [[1.5, 1, 0.5, 0.25], [1, 1, 1, 1]]}`))
		if err != nil || two.Len() != 2 || !slices.Equal(two.Swept, []string{f.Name}) || string(two.Values(1)[f.Name]) != "[1, 1, 1, 1]" {
			t.Errorf("%s as a list of lists: %v, %d runs over %v", f.Name, err, two.Len(), two.Swept)
		}
	}
}
