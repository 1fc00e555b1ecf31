package flow

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/linattn/linattn/internal/cputime"
	"github.com/linattn/linattn/ode"
)

// BenchmarkPowerLaw integrates the power-law run of the scaling studies
// (`linattn run -spectrum power:1 -D d -H d`: λ_k ∝ 1/k, N = 31, R = 1,
// w_init = 0.01, seed 3) until converged, with BDF and its block
// preconditioner and, for comparison, Auto (DOP853 and ROCK4), each at its
// default tolerances, as Run samples it by default. It reports the evaluations
// of the flow (evals, GMRES iterations included), the steps, the
// preconditioner setups, the steps Sample took again from the kept
// states of the solve and their evaluations (replayed, replay-evals;
// replay.Stats), the CPU time of the process (cpu-s/op: the
// wall time inflates when other jobs share the cores) and the peak live
// heap (MB-heap, sampled every 10 ms).
//
//	go test ./flow -run XXX -bench 'PowerLaw/D=(16|32|64)/' -benchtime 1x
//
// On a quiet 2-core machine BDF took 1.09, 7.74, 87.6 s and 81k, 154k,
// 284k evaluations at D = 16, 32, 64 when Run integrated it twice (it kept
// no continuous extension of the separate model's BDF solve); on a loaded
// one Auto took 1.5, 50, 1376 s and 0.40M, 2.8M, 12.7M evaluations. D = 128
// is BDF's alone (one pass took 14 minutes on the loaded machine, 293k
// evaluations). Run now integrates BDF once, keeping the state of the
// solve at every 2nd, 4th, … step (BDFKeptStates) and taking the steps in
// between again where the output grid needs them (not counted in evals):
// on another, faster and shared 2-core machine, D = 16 and 32 took 0.43
// and 3.00 CPU-s with two passes, 0.36 and 2.50 with one (40k and 77k
// evaluations in the pass; at D = 32 the samples take 12.3k of the 30.8k
// steps again, with 33k evaluations), peak heap 9 → 43 MB and
// 69 → 120 MB.
func BenchmarkPowerLaw(b *testing.B) {
	for _, d := range []int{16, 32, 64, 128} {
		for _, m := range []ode.Method{ode.BDF, ode.Auto} {
			if m == ode.Auto && d > 64 {
				continue // hours
			}
			b.Run(fmt.Sprintf("D=%d/%s", d, map[ode.Method]string{ode.BDF: "bdf", ode.Auto: "auto"}[m]), func(b *testing.B) {
				s, y0 := powerLawExample(b, d)
				var tr *Trajectory
				var peak uint64
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cputime.Seconds()
				for i := 0; i < b.N; i++ {
					stop := peakHeap(&peak)
					var err error
					tr, err = s.Run(context.Background(), y0, RunSettings{Method: m})
					stop()
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cputime.Seconds()-cpu0)/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(tr.Stats.FuncEvals), "evals")
				b.ReportMetric(float64(tr.Stats.Steps), "steps")
				if tr.dense != nil { // the steps Sample took again
					b.ReportMetric(float64(tr.replayStats().Steps), "replayed")
					b.ReportMetric(float64(tr.replayStats().FuncEvals), "replay-evals")
				}
				b.ReportMetric(float64(tr.Stats.Decompositions), "setups")
				b.ReportMetric(float64(tr.Stats.JacEvals), "jacs")
				b.ReportMetric(float64(tr.Stats.LinearSolves), "solves")
				b.ReportMetric(float64(tr.Stats.KrylovIters), "krylov")
				b.ReportMetric(float64(peak)/(1<<20), "MB-heap")
			})
		}
	}
}

// peakHeap records the largest live heap seen every 10 ms until the
// returned function is called.
func peakHeap(peak *uint64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}
