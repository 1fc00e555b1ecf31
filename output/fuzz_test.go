package output

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/linattn/linattn/internal/fuzzseed"
)

// TestSeeds writes (with -seeds) the corpus of FuzzReadSidecar: the
// sidecars of linattn run and train (testdata/run.json, train.json, as the
// command wrote them) and one that MarshalJSON writes; and checks that the
// valid ones read.
func TestSeeds(t *testing.T) {
	for _, name := range []string{"run", "train"} {
		b, err := os.ReadFile("testdata/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		fuzzseed.Write(t, "FuzzReadSidecar", "valid-"+name, b)
	}
	sc := &Sidecar{Spec: json.RawMessage(`{"model":"merged","D":2,"eigs":[0.5,0.25]}`),
		Meta: Meta{Program: Program, Version: "0.2.0", Command: "reduced", Complete: false, Status: "interrupted",
			Arrays: map[string][]int{"t": {3}, "M": {3, 2, 2}}, Inputs: map[string]Input{"init": {Path: "/a/b.npz", SHA256: "00"}}}}
	b, err := sc.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	fuzzseed.Write(t, "FuzzReadSidecar", "valid-marshal", b)
	for name, b := range fuzzseed.Valid(t, "FuzzReadSidecar") {
		if _, err := parseSidecar(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzReadSidecar: any bytes are either refused with a one-line error, or
// read into a sidecar that MarshalJSON writes, which reads back to a
// sidecar that writes the same bytes.
func FuzzReadSidecar(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := parseSidecar(data)
		if err != nil {
			fuzzseed.OneLine(t, err)
			return
		}
		b1, err := sc.MarshalJSON()
		if err != nil {
			fuzzseed.OneLine(t, err)
			return
		}
		sc2, err := parseSidecar(b1)
		if err != nil {
			t.Fatalf("what MarshalJSON wrote does not read: %v\n%s", err, b1)
		}
		b2, err := sc2.MarshalJSON()
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("read → write → read → write changed the bytes (%v):\n%s\n%s", err, b1, b2)
		}
	})
}
