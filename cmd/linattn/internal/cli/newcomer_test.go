package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linattn/linattn/output"
)

// TestOutputFolders: -o in folders that do not exist yet creates them (as
// mkdir -p) for every command that writes, as the defaults do.
func TestOutputFolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.json")
	if err := os.WriteFile(spec, []byte(`{"seed": [1, 2], "samples": 5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in := func(parts ...string) string { return filepath.Join(append([]string{dir}, parts...)...) }
	for _, tc := range []struct {
		args []string
		want string // a file it writes
	}{
		{[]string{"run", "-samples", "5", "-o", in("a", "b", "run.npz")}, in("a", "b", "run.json")},
		{[]string{"reduced", "-o", in("c", "reduced.npz")}, in("c", "reduced.npz")},
		{[]string{"landscape", "-o", in("d", "e", "landscape.npz")}, in("d", "e", "landscape.npz")},
		{[]string{"train", "-P", "200", "-steps", "20", "-samples", "5", "-o", in("f", "train.npz")}, in("f", "train.npz")},
		{[]string{"plot", in("a", "b", "run.npz"), "-o", in("g", "h", "run.svg")}, in("g", "h", "run.svg")},
		{[]string{"sweep", "-spec", spec, "-o", in("i", "j")}, in("i", "j", "index.npz")},
		{[]string{"figures", "-o", in("k"), "-data", in("l", "m"), "-format", "svg", "landscape"}, in("k", "landscape.svg")},
	} {
		code, _, stderr := runCLI(t, append(tc.args[:1:1], append([]string{"-q"}, tc.args[1:]...)...)...)
		if tc.args[0] == "plot" || tc.args[0] == "figures" {
			code, _, stderr = runCLI(t, tc.args...)
		}
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
		if _, err := os.Stat(tc.want); err != nil {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}

// TestHelpAndHints: linattn alone, -h, --help and help list the commands
// (alone on stderr with exit 2, as a command line without a command is
// incomplete; asked for, on stdout with exit 0); a flag before the command,
// a file where a flag belongs and a second command each get one line that
// says what to type.
func TestHelpAndHints(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "commands:") || !strings.Contains(stdout, "  train ") || !strings.Contains(stdout, "  figures ") {
			t.Errorf("linattn %v: exit %d, stdout %q, stderr %q; want the commands on stdout", args, code, stdout, stderr)
		}
	}
	if code, stdout, stderr := runCLI(t); code != 2 || stdout != "" || !strings.Contains(stderr, "commands:") {
		t.Errorf("linattn: exit %d, stdout %q, stderr %q; want the commands on stderr, exit 2", code, stdout, stderr)
	}
	if code, stdout, _ := runCLI(t, "help", "plot"); code != 0 || !strings.Contains(stdout, "usage: linattn plot") {
		t.Errorf("linattn help plot: exit %d\n%s", code, stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-q", "run"}, "linattn: the command goes first: linattn run -q"},
		{[]string{"-T", "100", "run", "-q"}, "linattn: the command goes first: linattn run -T 100 -q"},
		{[]string{"-T", "100"}, "linattn: flag -T before a command; the command goes first: linattn <command> [flags]"},
		{[]string{"run", "out.npz"}, `linattn run: unexpected argument "out.npz": the output file goes after -o (linattn run -o out.npz)`},
		{[]string{"reduced", "spec.json"}, `linattn reduced: unexpected argument "spec.json": a spec goes after -spec (linattn reduced -spec spec.json)`},
		{[]string{"run", "plot"}, `linattn run: unexpected argument "plot": one command at a time`},
		{[]string{"run", "-q", "x", "y"}, `linattn run: unexpected arguments ["x" "y"]: run takes flags only (see linattn run -h)`},
		{[]string{"run", "-attention", "softmax"}, "linattn run: -attention is a flag of train, not of run (the exact flow and its theory exist for linear attention only;"},
		{[]string{"reduced", "-icl", "0.5"}, "linattn reduced: -icl is a flag of run and train, not of reduced (see linattn reduced -h)"},
		{[]string{"run", "-foo", "1"}, "linattn run: flag provided but not defined: -foo (see linattn run -h)"},
		{[]string{"out/run.npz"}, `linattn: unknown command "out/run.npz"; to draw a file: linattn plot out/run.npz`},
		{[]string{"sweep", "sweep.json"}, `linattn sweep: unexpected argument "sweep.json": the sweep spec goes after -spec (linattn sweep -spec sweep.json)`},
		{[]string{"sweep", "-spec", "s.json", "-command", "plot"}, `linattn sweep: -command = "plot", want run, train, reduced or landscape`},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("linattn %v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestInterruptMessage: an interrupted run says in one line what it kept
// and how to finish; one interrupted before writing says so.
func TestInterruptMessage(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run.npz")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = withTestHooks(ctx, &testHooks{step: func(tt float64) {
		if tt > 4000 {
			cancel()
		}
	}})
	code, _, stderr := runCLIContext(t, ctx, "run", "-o", out)
	want := "linattn run: interrupted; " + out + " holds what was computed up to t = "
	if code != ExitInterrupted || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "(marked incomplete in "+strings.TrimSuffix(out, ".npz")+".json); its state at t = ") ||
		!strings.HasSuffix(stderr, " is saved in "+strings.TrimSuffix(out, ".npz")+".ckpt: run the same command again to continue from there\n") {
		t.Errorf("exit %d, stderr %q; want one line beginning %q", code, stderr, want)
	}
	canceled, stop := context.WithCancel(context.Background())
	stop()
	code, _, stderr = runCLIContext(t, canceled, "reduced", "-o", filepath.Join(t.TempDir(), "r.npz"))
	if code != ExitInterrupted || stderr != "linattn reduced: interrupted before any output was written; run the same command again\n" {
		t.Errorf("canceled reduced: exit %d, stderr %q", code, stderr)
	}
}

// TestSweepCommands: a sweep runs train, reduced or landscape as well as
// run, each run writing COMMAND-i.npz; the index has each run's final loss
// and drops as far as the command has them; a field the command does not
// read is refused; a rerun reuses the outputs of the same command only.
func TestSweepCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.json")
	if err := os.WriteFile(spec, []byte(`{"seed": [1, 2]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command string
		drops   bool // the index has drop times
		loss    bool // and final losses
	}{{"reduced", true, false}, {"landscape", false, false}, {"train", true, true}} {
		out := filepath.Join(dir, tc.command)
		args := []string{"sweep", "-q", "-spec", spec, "-command", tc.command, "-o", out}
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		idx := readIndex(t, filepath.Join(out, "index.json"))
		for _, row := range idx.Rows {
			if row.File != tc.command+"-"+string(rune('0'+row.Run))+".npz" || row.Status != "complete" {
				t.Errorf("%s: row %+v", tc.command, row)
			}
			if (len(row.Transitions) > 0) != tc.drops || (row.FinalLoss != nil) != tc.loss {
				t.Errorf("%s: row %d has drops %v, final loss %v", tc.command, row.Run, row.Transitions, row.FinalLoss)
			}
		}
		if _, stdout, _ := runCLI(t, args...); !strings.Contains(stdout, "2 complete (2 reused)") {
			t.Errorf("%s: rerun: %s", tc.command, stdout)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"seed": [1, 2], "P": 100}`), 0o644)
	if code, _, stderr := runCLI(t, "sweep", "-spec", bad, "-o", filepath.Join(dir, "bad")); code != 2 || !strings.Contains(stderr, `field "P" is not read by linattn run`) {
		t.Errorf("a train field in a run sweep: exit %d, %s", code, stderr)
	}
}

// readIndex reads a sweep's index.json.
func readIndex(t *testing.T, path string) *output.Index {
	t.Helper()
	var idx output.Index
	if err := json.Unmarshal(mustRead(t, path), &idx); err != nil {
		t.Fatal(err)
	}
	return &idx
}
