package flow

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"

	"github.com/linattn/linattn/flow/internal/gemm"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
)

var sinkF float64

func benchSystem(b *testing.B, kind Kind, d, h, r int) (*System, []float64) {
	data, err := law.NewData(law.PowerLaw(d, 1, 1), law.RandomRotation(d, 1), law.Lengths{Nu: 1.0 / 31})
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewSystem(data, Model{Kind: kind, H: h, R: r, Tau: 1})
	if err != nil {
		b.Fatal(err)
	}
	y, _ := s.Init(0.5, 1)
	return s, s.ToEigen(nil, y)
}

// BenchmarkDeriv times one evaluation of the right-hand side. Alongside,
// BenchmarkProducts times the matrix products the evaluation needs (three
// (H·R)×D×D products for the separate model; for the merged one the two
// H×D² matrix–vector products and the rank-one update v Gᵀ) with the same
// kernels; the ratio of the two is the cost of everything else.
func BenchmarkDeriv(b *testing.B) {
	for _, c := range derivCases {
		b.Run(c.name(), func(b *testing.B) {
			s, y := benchSystem(b, c.kind, c.d, c.h, c.r)
			dy := make([]float64, s.Len())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.DerivEigen(dy, y)
			}
			sinkF = dy[0]
		})
	}
}

func BenchmarkProducts(b *testing.B) {
	for _, c := range derivCases {
		b.Run(c.name(), func(b *testing.B) {
			s, y := benchSystem(b, c.kind, c.d, c.h, c.r)
			d, h := c.d, c.h
			m := make([]float64, d*d)
			out := make([]float64, s.Len())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if c.kind == Merged {
					impl.Dgemv(blas.Trans, h, d*d, 1, y[h:], d*d, y[:h], 1, 0, m, 1)
					impl.Dgemv(blas.NoTrans, h, d*d, 1, y[h:], d*d, m, 1, 0, out[:h], 1)
					for j := range out[h:] {
						out[h+j] = 0
					}
					impl.Dger(h, d*d, 1, y[:h], 1, m, 1, out[h:], d*d)
					continue
				}
				hr := h * c.r
				k, q := y[h:h+hr*d], y[h+hr*d:]
				gemm.Mul(d, d, hr, k, q, m)
				gemm.Mul(hr, d, d, q, m, out[h:h+hr*d])
				gemm.Mul(hr, d, d, k, m, out[h+hr*d:])
			}
			sinkF = out[0]
		})
	}
}

type derivCase struct {
	kind    Kind
	d, h, r int
}

func (c derivCase) name() string {
	if c.kind == Merged {
		return fmt.Sprintf("merged/D=%d/H=%d", c.d, c.h)
	}
	return fmt.Sprintf("separate/D=%d/H=%d/R=%d", c.d, c.h, c.r)
}

var derivCases = []derivCase{
	{Separate, 4, 4, 1}, {Separate, 8, 9, 1}, {Separate, 8, 9, 8}, {Separate, 16, 16, 1}, {Separate, 32, 32, 1}, {Separate, 64, 64, 1}, {Separate, 128, 128, 1},
	{Merged, 8, 8, 0}, {Merged, 32, 32, 0}, {Merged, 128, 8, 0},
}

// BenchmarkPaperExample solves the paper's D = 4 separate example (N = 31,
// H = 4, R = 1, λ = 0.4, 0.3, 0.2, 0.1, w_init = 0.01, seed 3) through all
// four drops until L − L* < 1e-6, with the default tolerances and the
// transition events.
func BenchmarkPaperExample(b *testing.B) {
	s, y0 := paperExample(b, Separate, 3)
	b.ReportAllocs()
	b.ResetTimer()
	var tr *Trajectory
	for i := 0; i < b.N; i++ {
		var err error
		tr, err = s.Run(context.Background(), y0, RunSettings{T: 1e6, StopTol: 1e-6, Times: []float64{0}})
		if err != nil || len(tr.Transitions) != 4 {
			b.Fatalf("err=%v, %d transitions", err, len(tr.Transitions))
		}
	}
	b.ReportMetric(float64(tr.Stats.FuncEvals), "nfev")
	b.ReportMetric(float64(tr.Stats.Steps), "steps")
	b.ReportMetric(tr.FinalT, "t_end")
}

// BenchmarkRun runs the flow until converged as linattn run does (the
// drops grid of DefaultSamples times), on the paper's D = 4 example and on
// power-law spectra (law.PowerLaw(D, 1, 1), H = D, N = 31, w_init = 0.01,
// seed 3). "auto" is Auto (DOP853 switching to ROCK4, one pass sampled
// from the continuous extension), the default below D = BDFMinDim; "dop853-2pass" is the
// configuration before the stiff methods (DOP853 at rtol 1e-10, atol 1e-14,
// a first pass to find T and a second for the output), with the same
// right-hand side, so the ratio of the two is the gain of the stiff
// integration and the single pass; "bdf" is ode.BDF, the default from
// D = BDFMinDim (one pass since the continuous extension keeps the state
// of the solve: ode.Solution; the steps Sample takes again are not in
// evals). Besides time and allocations it
// reports the peak heap (MB-heap), the integrator's evaluations (evals) and
// steps.
//
//	go test ./flow -run XXX -bench 'Run/D=(4|8|16)/' -benchtime 1x
//
// D = 16 with dop853-2pass takes about a minute, D = 32 with auto a few
// and with bdf seconds; D = 64 with auto is there to be measured on purpose
// (half an hour; BenchmarkPowerLaw compares it with bdf).
func BenchmarkRun(b *testing.B) {
	for _, c := range []struct {
		d      int
		method []string
	}{
		{4, []string{"auto", "bdf", "dop853-2pass"}},
		{8, []string{"auto", "bdf", "dop853-2pass"}},
		{16, []string{"auto", "bdf", "dop853-2pass"}},
		{32, []string{"auto", "bdf"}},
		{64, []string{"auto", "bdf"}},
	} {
		for _, m := range c.method {
			b.Run(fmt.Sprintf("D=%d/%s", c.d, m), func(b *testing.B) {
				s, y0 := paperExample(b, Separate, 3)
				if c.d > 4 {
					data, err := law.NewData(law.PowerLaw(c.d, 1, 1), law.RandomRotation(c.d, 1), law.Lengths{Nu: 1.0 / 31})
					if err != nil {
						b.Fatal(err)
					}
					s = newSys(b, data, Model{Kind: Separate, H: c.d, R: 1, Tau: 1})
					y0, _ = s.Init(0.01, 3)
				}
				rs := RunSettings{}
				switch m {
				case "dop853-2pass":
					rs.Method, rs.DenseBytes = ode.DOP853, 1
				case "auto":
					rs.Method = ode.Auto
				case "bdf":
					rs.Method = ode.BDF
				}
				var peak uint64
				var tr *Trajectory
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					stop := samplePeakHeap(&peak)
					var err error
					tr, err = s.Run(context.Background(), y0, rs)
					stop()
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(peak)/(1<<20), "MB-heap")
				b.ReportMetric(float64(tr.Stats.FuncEvals), "evals")
				b.ReportMetric(float64(tr.Stats.Steps), "steps")
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
