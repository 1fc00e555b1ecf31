package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/internal/fuzzseed"
)

// TestSeeds writes (with -seeds) the corpora of the spec's fuzz targets:
// sweep specs, spec files, flag values, and -init and -w0-file arrays as
// the program writes them; and checks that the valid ones are taken.
func TestSeeds(t *testing.T) {
	for name, sweep := range map[string]string{
		"seeds":  `{"D": 3, "spectrum": "power:1", "seed": [1, 2, 3]}`,
		"grid":   `{"model": ["separate", "merged"], "eigs": [[1, 0.5], [0.3, 0.2]], "winit": [0.01, 0.001], "T": 50}`,
		"tasks":  `{"D": 2, "icl": [0, 0.5], "w0": [[1, 0], [0, 1, 1, 0]], "P": [10, 100]}`,
		"single": `{"eigs": [0.4, 0.3, 0.2, 0.1], "meta": {"program": "linattn"}}`,
	} {
		fuzzseed.Write(t, "FuzzParseSweep", "valid-"+name, []byte(sweep))
	}
	run, err := os.ReadFile("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	fuzzseed.Write(t, "FuzzParse", "valid-run", run)
	fuzzseed.Write(t, "FuzzParse", "valid-full", []byte(`{"layer": "full", "icl": 0.25, "tasks": 3, "D": 2, "white": 1, "noise": 0.1}`))
	fuzzseed.Write(t, "FuzzParse", "valid-merged", []byte(`{"model": "merged", "balanced": true, "eigs": [1, 1, 1], "grid": "log"}`))
	for name, obj := range map[string]string{
		"run":      `{"model": "merged", "D": 4, "spectrum": "power:1.5", "T": 100, "samples": 50}`,
		"lines":    "{\n  \"seed\": 5,\n  \"eigs\": [1, 2],\n  \"grid\": \"log\"\n}\n",
		"sidecar":  `{"D": 3, "meta": {"program": "linattn", "version": "0.2.0"}}`,
		"unicode":  `{"eigvecs": "données/vecs.npy"}`,
		"comments": `{"tol": 1e-6}`,
	} {
		fuzzseed.Write(t, "FuzzDecodeObject", "valid-"+name, []byte(obj))
	}
	for i, kv := range [][2]string{
		{"eigs", "1,0.5,0.25"}, {"spectrum", "power:1.5"}, {"task-eigs", "2, 1, 1"}, {"task-spectrum", "power:0"},
		{"task-white", "2"}, {"test-task-eigs", "1,1,3"}, {"w0", "1,0,0,0,1,0"}, {"checkpoint", "1m30s"}, {"checkpoint", "0"},
		{"task-draw", "gaussian"}, {"eigvecs", "random:7"}, {"seed", "18446744073709551615"}, {"icl", "0.5"},
	} {
		fuzzseed.Write(t, "FuzzFlags", "valid-"+strings.ReplaceAll(kv[0], "-", "_")+"-"+string(rune('a'+i)), kv[0], kv[1])
	}
	var b bytes.Buffer
	if err := export.WriteNPZ(&b, []export.Array{export.Floats("v", []float64{1, 0.5, 0.25}, 3),
		export.Floats("K", []float64{0.1, 0.2, 0.3, 0, 0.1, 0, 0.2, 0.2, 0.2}, 3, 1, 3),
		export.Floats("Q", []float64{0.3, 0.2, 0.1, 0.1, 0, 0, 0.2, -0.2, 0.2}, 3, 1, 3)}); err != nil {
		t.Fatal(err)
	}
	fuzzseed.Write(t, "FuzzInputFiles", "valid-init", b.Bytes(), "init")
	b.Reset()
	if err := export.WriteNPY(&b, export.Floats("w", []float64{1, 2, 3, -1, 0, 0.5}, 2, 3)); err != nil {
		t.Fatal(err)
	}
	fuzzseed.Write(t, "FuzzInputFiles", "valid-w0", b.Bytes(), "w0-file")
	b.Reset()
	if err := export.WriteNPY(&b, export.Floats("v", []float64{0, 1, 0, 1, 0, 0, 0, 0, 1}, 3, 3)); err != nil {
		t.Fatal(err)
	}
	fuzzseed.Write(t, "FuzzInputFiles", "valid-eigvecs", b.Bytes(), "eigvecs")
	fuzzseed.Write(t, "FuzzInputFiles", "w0-header-cut-short", []byte("\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (4, 4), }\n"), "w0-file")

	for name, b := range fuzzseed.Valid(t, "FuzzParse") {
		if _, err := Parse(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, b := range fuzzseed.Valid(t, "FuzzParseSweep") {
		if _, err := ParseSweep(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, b := range fuzzseed.Valid(t, "FuzzDecodeObject") {
		if _, err := DecodeObject(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// fuzzGroups are the groups of fields the spec fuzz targets resolve:
// every command's.
var fuzzGroups = []Group{GroupSolver, GroupLandscape, GroupReduced, GroupTrain, GroupLaw}

// FuzzParseSweep: any bytes are either refused with a one-line error, or
// a sweep whose runs (the first and the last) parse, and whose canonical
// form (the runs' fields, fixed and swept, as JSON) parses to the same
// sweep, with the same hash.
func FuzzParseSweep(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		sw, err := ParseSweep(data)
		if err != nil {
			fuzzseed.OneLine(t, err)
			return
		}
		if sw.Len() < 1 || sw.Len() > 1<<24 {
			t.Fatalf("%d runs", sw.Len())
		}
		for _, i := range []int{0, sw.Len() - 1} {
			if _, err := sw.Run(i); err != nil {
				fuzzseed.OneLine(t, err)
			}
		}
		obj := map[string]any{}
		for k, v := range sw.fixed {
			obj[k] = v
		}
		for k, v := range sw.values {
			obj[k] = v
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		sw2, err := ParseSweep(b)
		if err != nil || sw2.SHA256 != sw.SHA256 || sw2.Len() != sw.Len() || strings.Join(sw2.Swept, ",") != strings.Join(sw.Swept, ",") {
			t.Fatalf("the canonical form %s does not parse to the same sweep: %v", b, err)
		}
	})
}

// FuzzDecodeObject: any bytes are either refused with a one-line error
// (that names the line and column where the JSON breaks), or an object
// whose members, written again as JSON, decode to the same members.
func FuzzDecodeObject(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := DecodeObject(data)
		if err != nil {
			fuzzseed.OneLine(t, err)
			return
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		obj2, err := DecodeObject(b)
		if err != nil || len(obj2) != len(obj) {
			t.Fatalf("%s does not decode again: %v", b, err)
		}
		for k, v := range obj {
			var v1, v2 any
			if json.Unmarshal(v, &v1) != nil || json.Unmarshal(obj2[k], &v2) != nil || !reflect.DeepEqual(v1, v2) {
				t.Fatalf("member %q: %s, then %s", k, v, obj2[k])
			}
		}
		// Parse takes what it decodes, or refuses it in one line.
		if _, err := Parse(data); err != nil {
			fuzzseed.OneLine(t, err)
		}
	})
}

// FuzzFlags: any value of any field given as a command line gives it
// (Spec.SetText: the parsers of -eigs, -spectrum, -task-*, -w0, -checkpoint's
// duration and the others) is either refused in one line, or written back
// (Text) to a value that parses to the same; and the spec, with a small
// problem around it, either resolves for every command or is refused in
// one line, and resolved it writes a JSON spec that resolves to itself.
func FuzzFlags(f *testing.F) {
	f.Fuzz(func(t *testing.T, name, text string) {
		if _, ok := Lookup(name); !ok || name == "init" || strings.HasSuffix(text, ".npy") || name == "spec" {
			return // file inputs: FuzzInputFiles
		}
		s := &Spec{}
		if err := s.SetText(name, text); err != nil {
			fuzzseed.OneLine(t, err)
			return
		}
		again := &Spec{}
		if err := again.SetText(name, s.Text(name)); err != nil || again.Text(name) != s.Text(name) {
			t.Fatalf("-%s %q: written back as %q, which reads as %q (%v)", name, text, s.Text(name), again.Text(name), err)
		}
		if name == "checkpoint" {
			if d, err := CheckpointInterval(s); err != nil {
				fuzzseed.OneLine(t, err)
			} else if d < 0 {
				t.Fatalf("-checkpoint %q: interval %v", text, d)
			}
		}
		base := map[string]string{"D": "3", "spectrum": "power:1", "samples": "20", "T": "10", "P": "50", "steps": "10"}
		for k, v := range base {
			if k != name && !s.Given(k) && s.CheckAlternatives("") == nil {
				s.SetText(k, v)
				if s.CheckAlternatives("") != nil {
					s.Clear(k)
				}
			}
		}
		job, err := resolve(s, 2e7, fuzzGroups...)
		if err != nil {
			fuzzseed.OneLine(t, err)
			return
		}
		b1, err := json.Marshal(job.Spec)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := Parse(b1)
		if err != nil {
			t.Fatalf("resolved spec %s does not parse: %v", b1, err)
		}
		job2, err := resolve(s2, 2e7, fuzzGroups...)
		if err != nil {
			t.Fatalf("resolved spec %s does not resolve: %v", b1, err)
		}
		if b2, _ := json.Marshal(job2.Spec); !bytes.Equal(b1, b2) {
			t.Fatalf("resolution is not idempotent:\n%s\n%s", b1, b2)
		}
	})
}

// FuzzInputFiles: any bytes given as the -init, -w0-file, -eigvecs or
// -task-eigvecs file of a small problem (D = 3, three heads, the -init
// arrays of the separate model) either are refused in one line naming the
// flag, or give a job whose initial state is finite.
func FuzzInputFiles(f *testing.F) {
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, field string) {
		ext := map[string]string{"init": ".npz", "w0-file": ".npy", "eigvecs": ".npy", "task-eigvecs": ".npy"}[field]
		if ext == "" {
			return
		}
		path := filepath.Join(dir, "input"+ext)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := &Spec{}
		for _, kv := range [][2]string{{"D", "3"}, {"spectrum", "power:1"}, {"H", "3"}, {"samples", "20"}, {field, path}} {
			if err := s.SetText(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		switch field {
		case "w0-file":
			s.SetText("icl", "0.5")
		case "task-eigvecs":
			s.SetText("task-eigs", "1,2,3")
		}
		job, err := resolve(s, 2e7, fuzzGroups...)
		if err != nil {
			fuzzseed.OneLine(t, err)
			if !strings.Contains(err.Error(), "-"+field) {
				t.Fatalf("error %q does not name -%s", err, field)
			}
			return
		}
		for i, y := range job.Y0 {
			if y-y != 0 {
				t.Fatalf("initial state %d is %g", i, y)
			}
		}
	})
}
