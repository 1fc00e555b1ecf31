package cli

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// examples is the module of the external example programs.
var examples = filepath.Join(repoRoot, "examples")

// TestExamplesModule runs the runnable Examples of the examples module, a
// module of its own that uses the public packages only, as another program
// would: examples/reproduce computes linattn run's default job through the
// library and prints the SHA-256 of its .npz; examples/read reads outputs
// back through package output.
func TestExamplesModule(t *testing.T) {
	t.Parallel()
	goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command to test the examples module with")
		}
	}
	cmd := exec.Command(goBin, "test", "-count=1", "./...")
	cmd.Dir = examples
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test in %s: %v\n%s", examples, err, out)
	}
}

// TestReproduceExample: the SHA-256 that examples/reproduce prints (and
// TestExamplesModule checks it prints) is that of the out/run.npz linattn
// run writes: the library reproduces the file byte for byte, arrays and
// all.
func TestReproduceExample(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join(examples, "reproduce", "example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`// Output: converged, 2001 samples, SHA-256 ([0-9a-f]{64})`).FindSubmatch(src)
	if m == nil {
		t.Fatal("examples/reproduce: no SHA-256 in its Output")
	}
	out := filepath.Join(t.TempDir(), "run.npz")
	if code, _, stderr := runCLI(t, "run", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if sum := fmt.Sprintf("%x", sha256.Sum256(mustRead(t, out))); sum != string(m[1]) {
		t.Errorf("linattn run wrote an .npz with SHA-256 %s; the example reproduces %s", sum, m[1])
	}
}

// TestReadExampleData: the outputs examples/read reads are what linattn
// writes today (wall times and versions aside), so that the example reads
// current files.
func TestReadExampleData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "small.json")
	if err := os.WriteFile(spec, []byte(`{"seed": [1, 2], "samples": 5}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "-samples", "5", "-o", filepath.Join(dir, "run.npz")},
		{"landscape", "-o", filepath.Join(dir, "landscape.npz")},
		{"sweep", "-spec", spec, "-o", filepath.Join(dir, "sweep")},
	} {
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("linattn %v: exit %d: %s", args, code, stderr)
		}
	}
	os.Remove(spec)
	data := filepath.Join(examples, "read", "testdata")
	files := listFiles(t, dir)
	if want := listFiles(t, data); strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("linattn writes %v; examples/read/testdata holds %v", files, want)
	}
	for _, f := range files {
		got, want := mustRead(t, filepath.Join(dir, f)), mustRead(t, filepath.Join(data, f))
		if normalizeGolden(string(got), dir) != normalizeGolden(string(want), dir) {
			t.Errorf("examples/read/testdata/%s is not what linattn writes now (regenerate it as this test does)", f)
		}
	}
}

// TestReadmeFirstProgram: the README's Go program is examples/first/main.go
// from its package clause on, which TestExamplesModule runs and checks, and
// the go.mod the README shows for a module of one's own requires and
// replaces this module as examples/go.mod does, at this module's go
// version.
func TestReadmeFirstProgram(t *testing.T) {
	t.Parallel()
	readme := string(mustRead(t, filepath.Join(repoRoot, "README.md")))
	prog := string(mustRead(t, filepath.Join(examples, "first", "main.go")))
	prog = prog[strings.Index(prog, "package main"):]
	if !strings.Contains(readme, "```go\n"+prog+"```\n") {
		t.Errorf("README.md does not show examples/first/main.go as its Go program")
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(string(mustRead(t, filepath.Join(repoRoot, "go.mod"))))
	exMod := string(mustRead(t, filepath.Join(examples, "go.mod")))
	for _, line := range []string{"go " + goVersion[1], "require github.com/linattn/linattn v0.0.0", "replace github.com/linattn/linattn => "} {
		if !strings.Contains(readme, "\n    "+line) || !strings.Contains(exMod, "\n"+line) {
			t.Errorf("the go.mod of README.md and examples/go.mod do not both have %q", line)
		}
	}
}
