package spec_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

// A sidecar written by linattn run (testdata/run.json: the default job,
// `go run ./cmd/linattn run -o DIR/run.npz` writes it beside its .npz),
// rerun from Go: the .npz it writes is the one the sidecar describes,
// byte for byte.
func ExampleJob_Run() {
	job, err := spec.ReadJob("testdata/run.json", spec.RunGroups()...)
	if err != nil {
		log.Fatal(err)
	}
	tr, err := job.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	again := filepath.Join(os.TempDir(), "linattn-again.npz")
	if err := export.SaveNPZ(again, job.RunArrays(tr)); err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(again) // the check: the SHA-256 the sidecar records
	side, _, _ := output.ReadSidecar("testdata/run.npz")
	fmt.Println(tr.Status, fmt.Sprintf("%x", sha256.Sum256(b)) == side.Meta.OutputSHA256)
	// Output: converged true
}
