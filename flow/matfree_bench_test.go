package flow

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linattn/linattn/internal/cputime"
	"github.com/linattn/linattn/law"
)

// matfreeData is the task law of the benchmarks (issue 30): the
// power-law Λ (λ_k ∝ 1/k) at dimension d, N = 31, half the sequences
// in-context and the others labeled by one of K = 4 fixed tasks.
func matfreeData(tb testing.TB, d int) *law.Data {
	tb.Helper()
	data, err := law.NewData(law.PowerLaw(d, 1, 1), nil, law.Lengths{N: 31})
	if err == nil {
		data, err = data.WithTasks(law.Tasks{ICL: 0.5, Fixed: law.FixedTasks(d, 4, 3)})
	}
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkFullEval times the evaluations of the merged full layer's flow
// alone, H = D, under matfreeData: the flow (loss and gradient, one
// DerivEigen) and one Jacobian–vector product, at D = 8 (dense moments),
// 16, 32, 64 (law.Operator). It reports the setup (NewSystem, the least
// loss by conjugate gradients included) as setup-s, and the process's CPU
// time per evaluation (cpu-ms/op), less noisy than the wall time on a
// shared machine.
//
//	go test ./flow -run XXX -bench FullEval -benchtime 1x
func BenchmarkFullEval(b *testing.B) {
	for _, d := range []int{8, 16, 32, 64} {
		t0 := time.Now()
		s, err := NewSystem(matfreeData(b, d), Model{Kind: Merged, H: d, Tau: 1, Layer: FullLayer})
		if err != nil {
			b.Fatal(err)
		}
		setup := time.Since(t0).Seconds()
		y := randomState(s, 0.1, 1)
		dy := randomState(s, 1, 2)
		dst := make([]float64, len(y))
		b.Run(fmt.Sprintf("deriv/D=%d", d), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Seconds()
			for i := 0; i < b.N; i++ {
				s.DerivEigen(dst, y)
			}
			b.ReportMetric((cputime.Seconds()-cpu0)/float64(b.N)*1e3, "cpu-ms/op")
			b.ReportMetric(setup, "setup-s")
			b.ReportMetric(float64(len(y)), "n")
		})
		l := s.NewLinearization()
		l.At(y)
		b.Run(fmt.Sprintf("jvp/D=%d", d), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Seconds()
			for i := 0; i < b.N; i++ {
				l.Apply(dst, dy)
			}
			b.ReportMetric((cputime.Seconds()-cpu0)/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}

// BenchmarkFullConverge integrates the merged full layer, H = D, under
// matfreeData until converged (or settled), as `linattn run -model merged
// -layer full -icl 0.5 -tasks 4 -D d -H d -spectrum power:1` does (issue
// 30's whole-command targets: D = 16 under 30 s, D = 32 under 5 minutes),
// sampled by default. It reports the CPU time of the process (cpu-s/op),
// the peak live heap, the steps, the evaluations of the flow, GMRES.s
// Jacobian–vector products (jvps), the fresh setups of the
// deflation preconditioner (each DeflateStepsMerged JVPs: setups), and the
// steps and fresh setups that sampling took again (replayed,
// replay-setups; replay.Stats).
//
//	go test ./flow -run XXX -bench 'FullConverge/D=16' -benchtime 1x
func BenchmarkFullConverge(b *testing.B) {
	for _, d := range []int{4, 6, 8, 16, 32} {
		b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
			s, err := NewSystem(matfreeData(b, d), Model{Kind: Merged, H: d, Tau: 1, Layer: FullLayer})
			if err != nil {
				b.Fatal(err)
			}
			var peak uint64
			stop := peakHeap(&peak)
			cpu0 := cputime.Seconds()
			var tr *Trajectory
			for i := 0; i < b.N; i++ {
				if tr, err = s.Run(context.Background(), nil, RunSettings{}); err != nil {
					b.Fatal(err)
				}
			}
			stop()
			b.ReportMetric((cputime.Seconds()-cpu0)/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(peak)/1e6, "MB-heap")
			st := tr.Stats
			b.ReportMetric(float64(st.Steps), "steps")
			b.ReportMetric(float64(st.FuncEvals), "evals")
			b.ReportMetric(float64(st.KrylovIters), "jvps")
			b.ReportMetric(float64(st.JacEvals), "setups")
			if tr.dense != nil {
				rs := tr.replayStats()
				b.ReportMetric(float64(rs.Steps), "replayed")
				b.ReportMetric(float64(rs.JacEvals), "replay-setups")
			}
			b.Logf("%v at t = %.4g, loss %.10g (floor %.10g)", tr.Status, tr.FinalT, tr.FinalLoss, s.LossFloor())
		})
	}
}

// BenchmarkDeflateSolve times one application of the deflation
// preconditioner (deflation.Precond.Solve, GMRES's every iteration) with all
// its kept Ritz pairs applied (γ large), against one evaluation of the
// flow, and a fresh setup (the Lanczos iterations on −J and on the
// key–query block's G), at D = 16, 32 and 64 (merged full layer, H = D,
// matfreeData).
//
//	go test ./flow -run XXX -bench DeflateSolve
func BenchmarkDeflateSolve(b *testing.B) {
	for _, d := range []int{16, 32, 64} {
		s, err := NewSystem(matfreeData(b, d), Model{Kind: Merged, H: d, Tau: 1, Layer: FullLayer})
		if err != nil {
			b.Fatal(err)
		}
		y := randomState(s, 0.1, 1)
		p := newDeflation(s)
		if _, err := p.Setup(0, y, 1e6, false); err != nil {
			b.Fatal(err)
		}
		r, z := randomState(s, 1, 2), make([]float64, len(y))
		// One processor, and all of them (as many goroutines as Solve takes).
		for _, procs := range []int{1, 0} {
			p.SetWorkers(procs)
			b.Run(fmt.Sprintf("solve/D=%d/workers=%d", d, p.Workers()), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					p.Solve(z, r)
				}
				b.ReportMetric(float64(p.Applied()), "pairs")
			})
		}
		b.Run(fmt.Sprintf("deriv/D=%d", d), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s.DerivEigen(z, y)
			}
		})
		b.Run(fmt.Sprintf("setup/D=%d", d), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := p.Setup(0, y, 1e6, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
