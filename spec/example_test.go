package spec_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

// A sidecar written by linattn run (testdata/run.json: the default job,
// `go run ./cmd/linattn run -o DIR/run.npz` writes it beside its .npz),
// rerun from Go: the .npz it writes is the one the sidecar describes,
// byte for byte.
func ExampleJob_Run() {
	again := filepath.Join(os.TempDir(), "linattn-again.npz")
	sp, err := spec.ReadFile("testdata/run.json")
	var job *spec.Job
	if err == nil {
		job, err = spec.Resolve(sp, spec.RunGroups()...)
	}
	var tr *flow.Trajectory
	if err == nil {
		tr, err = job.Run(context.Background())
	}
	if err == nil {
		err = export.SaveNPZ(again, job.RunArrays(tr))
	}
	if err != nil {
		log.Fatal(err)
	}
	// The check: the SHA-256 the sidecar records.
	b, _ := os.ReadFile(again)
	side, _, _ := output.ReadSidecar("testdata/run.npz")
	fmt.Println(tr.Status, fmt.Sprintf("%x", sha256.Sum256(b)) == side.Meta.OutputSHA256)
	// Output: converged true
}
