package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTwoInterrupts: two SIGINTs in a row, as timeout -s INT sends them
// (one to the process, one to its group), stop a long run that still
// writes what it computed, marked incomplete, and exits 130. The run is the paper's example from
// w_init = 10⁻⁸, whose first drop comes at t ≈ 3·10⁹ (minutes); the
// signals go after its note on stderr, which it prints once the signal
// handler is in place.
func TestTwoInterrupts(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "linattn")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "run.npz")
	cmd := exec.Command(bin, "run", "-winit", "1e-8", "-o", out)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var text []string
	for lines.Scan() {
		text = append(text, lines.Text())
		if strings.Contains(lines.Text(), "note:") {
			break
		}
	}
	time.Sleep(100 * time.Millisecond) // into the integration
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The second a moment later, once the first has been handled (the
	// kernel merges a signal sent while the same one is pending).
	time.Sleep(20 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	for lines.Scan() {
		text = append(text, lines.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130\n%s", err, strings.Join(text, "\n"))
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatalf("nothing written: %v", err)
	}
	var side struct {
		Meta struct {
			Complete bool   `json:"complete"`
			Status   string `json:"status"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(b, &side); err != nil || side.Meta.Complete || !strings.HasPrefix(side.Meta.Status, "interrupted") {
		t.Errorf("sidecar: %+v (%v), want incomplete and interrupted", side.Meta, err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no output: %v", err)
	}
}

// TestInterrupts: the first interrupt cancels the command, the second
// says that it is stopping and writing, the third stops at once and says
// what is lost.
func TestInterrupts(t *testing.T) {
	sig := make(chan os.Signal)
	var b strings.Builder
	canceled, exited := 0, make(chan bool)
	go interrupts(sig, func() { canceled++ }, &b, func() { exited <- true })
	for i := 0; i < 3; i++ {
		sig <- syscall.SIGINT
	}
	<-exited
	got := b.String()
	second := strings.Index(got, "already stopping: writing what was computed")
	third := strings.Index(got, "stopped at once: the output being written is lost")
	if canceled != 1 || second < 0 || third < second {
		t.Errorf("after three interrupts: canceled %d times, stderr %q", canceled, got)
	}
}
