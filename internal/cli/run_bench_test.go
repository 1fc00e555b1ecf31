package cli

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/linattn/linattn/ode"
)

// BenchmarkRun runs `linattn run` in-process until converged, writing its
// output, on the paper's D = 4 example and on power-law spectra
// (-spectrum power:1, H = D). "auto" is the default (Auto: DOP853 switching
// to ROCK4, one pass); "dop853-2pass" is the configuration before the stiff
// methods (DOP853 at rtol 1e-10, atol 1e-14, a first pass to find T and a
// second for the output), measured with the same right-hand side, so the
// ratio of the two is the gain of the stiff integration and the single pass.
// "bdf" is -method bdf (two passes: see firstPass). Besides time and
// allocations it reports the peak heap (MB-heap), the integrator's
// evaluations (evals) and steps.
//
//	go test ./internal/cli -run XXX -bench 'Run/D=(4|8|16)/' -benchtime 1x
//
// D = 16 with dop853-2pass takes about a minute and D = 32 with auto a few;
// D = 64 is there to be measured on purpose (about an hour).
func BenchmarkRun(b *testing.B) {
	dir := b.TempDir()
	for _, c := range []struct {
		d      string
		extra  []string
		method []string
	}{
		{"4", nil, []string{"auto", "bdf", "dop853-2pass"}},
		{"8", []string{"-D", "8", "-H", "8", "-spectrum", "power:1"}, []string{"auto", "bdf", "dop853-2pass"}},
		{"16", []string{"-D", "16", "-H", "16", "-spectrum", "power:1"}, []string{"auto", "bdf", "dop853-2pass"}},
		{"32", []string{"-D", "32", "-H", "32", "-spectrum", "power:1"}, []string{"auto", "bdf"}},
		{"64", []string{"-D", "64", "-H", "64", "-spectrum", "power:1"}, []string{"auto", "bdf"}},
	} {
		for _, m := range c.method {
			b.Run("D="+c.d+"/"+m, func(b *testing.B) {
				args := append([]string{"run", "-q", "-o", filepath.Join(dir, "r.npz")}, c.extra...)
				if m == "bdf" {
					args = append(args, "-method", "bdf")
				}
				if m == "dop853-2pass" {
					args = append(args, "-method", "dop853")
					saved := denseBytes
					denseBytes = 1
					defer func() { denseBytes = saved }()
				}
				var peak uint64
				var stats ode.Stats
				testHookStats = func(s ode.Stats) { stats = s }
				defer func() { testHookStats = nil }()
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					stop := samplePeakHeap(&peak)
					code := Main(context.Background(), nopWriter{}, nopWriter{}, args)
					stop()
					if code != 0 {
						b.Fatalf("exit %d", code)
					}
				}
				b.ReportMetric(float64(peak)/(1<<20), "MB-heap")
				b.ReportMetric(float64(stats.FuncEvals), "evals")
				b.ReportMetric(float64(stats.Steps), "steps")
			})
		}
	}
}

// samplePeakHeap records the largest live heap seen every 20 ms until the
// returned function is called.
func samplePeakHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}
