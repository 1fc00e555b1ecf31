package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linattn/linattn/flow"
)

// TestChoicesRefusedEverywhere: a model, layer or method that names no
// choice is refused through every exported way in, each error naming the
// field: Parse, ReadFile and a sweep's Run (JSON), SetText (a flag), and
// Resolve of a spec built in Go, with run's groups and with none (a call
// shape that once skipped the check: {"layer": "bogus"} ran the reduced
// layer, {"method": "nope"} was accepted).
func TestChoicesRefusedEverywhere(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ field, value string }{{"layer", "bogus"}, {"model", "bogus"}, {"method", "nope"}} {
		js := `{"` + c.field + `": "` + c.value + `"}`
		refused := func(way string, err error) {
			t.Helper()
			if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.value) {
				t.Errorf("%s of %s: error %v, want one naming %s and %q", way, js, err, c.field, c.value)
			}
		}
		resolved := func(sp *Spec, err error) error {
			if err != nil {
				return err
			}
			if _, err := Resolve(sp); err == nil {
				return nil
			}
			_, err = Resolve(sp, RunGroups()...)
			return err
		}
		refused("Parse, Resolve", resolved(Parse([]byte(js))))
		path := filepath.Join(dir, c.field+".json")
		if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		refused("ReadFile, Resolve", resolved(ReadFile(path)))
		sw, err := ParseSweep([]byte(`{"` + c.field + `": ["` + c.value + `"], "D": [3, 4]}`))
		if err == nil {
			for i := range sw.Len() {
				err = resolved(sw.Run(i))
				if err == nil {
					break
				}
			}
		}
		refused("ParseSweep, Run, Resolve", err)
		flags := new(Spec)
		refused("SetText, Resolve", resolved(flags, flags.SetText(c.field, c.value)))
	}
}

// TestResolveChecksGiven: Resolve refuses a given field its groups do not
// read (it would be ignored) and a typed choice set in Go to no value,
// with or without groups.
func TestResolveChecksGiven(t *testing.T) {
	sp := new(Spec)
	if err := sp.SetText("layer", "full"); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(sp); err == nil || !strings.Contains(err.Error(), `"layer"`) {
		t.Errorf("-layer full resolved without GroupLaw: error %v, want one naming the field", err)
	}
	if _, err := Resolve(sp, RunGroups()...); err != nil {
		t.Errorf("-layer full with run's groups: %v", err)
	}
	for name, set := range map[string]func(*Spec){
		"model": func(s *Spec) { s.Model = 0 },
		"layer": func(s *Spec) { s.Layer = flow.Layer(7) },
	} {
		sp := new(Spec)
		set(sp)
		sp.Mark(name)
		if _, err := Resolve(sp, RunGroups()...); err == nil || !strings.HasPrefix(err.Error(), "-"+name+":") {
			t.Errorf("-%s out of range: error %v, want one starting -%s:", name, err, name)
		}
	}
}
