// Package fuzzseed keeps the seed corpora of the module's fuzz targets:
// files in testdata/fuzz/FuzzXxx/ in the format of go test's corpus
// ("go test fuzz v1", then one Go literal per argument), which go test
// runs as ordinary tests and go test -fuzz starts from.
//
// A seed named valid-* is a file the program itself wrote; Valid lists
// them so that a test can require that they still read (a change of a
// format must renew them: go test -run TestSeeds -seeds).
package fuzzseed

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Update is the -seeds flag of go test: write the seed corpora anew.
var Update = flag.Bool("seeds", false, "write the fuzz targets' seed corpora in testdata/fuzz")

// Write writes the seed called name of the target (with its arguments,
// each a []byte or a string) when -seeds is given; it reports whether it
// wrote.
func Write(t testing.TB, target, name string, args ...any) {
	t.Helper()
	if !*Update {
		return
	}
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch a := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(a)))
		case string:
			fmt.Fprintf(&b, "string(%s)\n", strconv.Quote(a))
		default:
			t.Fatalf("fuzzseed: argument of type %T", a)
		}
	}
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Valid returns the first argument of every valid-* seed of the target, by
// file name.
func Valid(t testing.TB, target string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "valid-*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fuzzseed: no valid-* seeds of %s (go test -run TestSeeds -seeds writes them): %v", target, err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		arg, err := firstArg(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = arg
	}
	return out
}

// Arg returns the first argument of the seed called name of the target.
func Arg(t testing.TB, target, name string) []byte {
	t.Helper()
	b, err := firstArg(filepath.Join("testdata", "fuzz", target, name))
	if err != nil {
		t.Fatalf("fuzzseed: %v", err)
	}
	return b
}

// firstArg reads the first argument of a corpus file, a []byte or a
// string literal.
func firstArg(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<28)
	if !sc.Scan() || sc.Text() != "go test fuzz v1" {
		return nil, fmt.Errorf("not a go test fuzz v1 file")
	}
	if !sc.Scan() {
		return nil, fmt.Errorf("no argument")
	}
	line := sc.Text()
	for _, p := range []string{"[]byte(", "string("} {
		if lit, ok := strings.CutPrefix(line, p); ok {
			s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			return []byte(s), err
		}
	}
	return nil, fmt.Errorf("argument %.40q is not a []byte or string", line)
}

// OneLine fails t unless err's text is one line, not empty: what the
// command line prints of a refused file.
func OneLine(t testing.TB, err error) {
	t.Helper()
	if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error %q is not one line", msg)
	}
}
