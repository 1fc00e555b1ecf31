package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestSecondsCountsWork: spinning for 50 ms of wall time adds processor
// time to the process, at most the wall time of all its threads.
func TestSecondsCountsWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("skipped: no getrusage here, Seconds is zero")
	}
	t0 := Seconds()
	start := time.Now()
	x := 1.0
	for time.Since(start) < 50*time.Millisecond {
		x = x*1.0000001 + 1e-9
	}
	wall := time.Since(start).Seconds()
	d := Seconds() - t0
	if d <= 0 || d > float64(runtime.NumCPU())*wall+0.05 || x == 0 {
		t.Fatalf("Seconds grew by %g s over %g s of spinning", d, wall)
	}
}
