package flow

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/linattn/linattn/law"
)

// fullData is the power-law task at dimension d, N = 31, with half of the
// sequences labeled by one fixed task.
func fullData(tb testing.TB, d int) *law.Data {
	data, err := law.NewData(law.PowerLaw(d, 1, 1), law.RandomRotation(d, 1), law.Lengths{Nu: 1})
	if err == nil {
		data, err = data.WithLengths(law.Lengths{N: 31})
	}
	if err == nil {
		data, err = data.WithTasks(law.Tasks{ICL: 0.5, Fixed: law.FixedTasks(d, 1, 3)})
	}
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkFullMoments forms the full layer's exact feature moments
// (Data.Moments: F = 60, 360, 2448 features at D = 4, 8, 16; target at
// D = 8: under a second) and reports the memory of their F×F matrix.
func BenchmarkFullMoments(b *testing.B) {
	for _, d := range []int{4, 8, 16} {
		b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
			data := fullData(b, d)
			b.ReportAllocs()
			var mo *law.Moments
			for i := 0; i < b.N; i++ {
				var err error
				if mo, err = data.Moments(FullLayer.Pairs(data.Dim()), law.Training, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(mo.F), "features")
			b.ReportMetric(float64(8*mo.F*mo.F)/1e6, "MB/matrix")
		})
	}
}

// BenchmarkFullRun integrates the full layer under the task law of
// fullData until converged (or settled), D = 8, H = 8 (target: under 10 s),
// and reports the work and the heap the run holds.
func BenchmarkFullRun(b *testing.B) {
	for _, kind := range []Kind{Merged, Separate} {
		b.Run(fmt.Sprintf("D=8/%v", kind), func(b *testing.B) {
			s, err := NewSystem(fullData(b, 8), Model{Kind: kind, H: 8, R: 1, Tau: 1, Layer: FullLayer})
			if err != nil {
				b.Fatal(err)
			}
			y0, _ := s.Init(0.01, 3)
			b.ReportAllocs()
			var tr *Trajectory
			for i := 0; i < b.N; i++ {
				if tr, err = s.Run(context.Background(), y0, RunSettings{}); err != nil {
					b.Fatal(err)
				}
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(tr.Stats.FuncEvals), "evals")
			b.ReportMetric(float64(tr.Stats.Steps), "steps")
			b.ReportMetric(tr.FinalT, "t_end")
			b.ReportMetric(float64(ms.HeapInuse)/1e6, "MB_heap")
			b.Logf("%v: %v at t = %.4g, loss %.8g (least %.8g)", kind, tr.Status, tr.FinalT, tr.FinalLoss, s.lossFloor())
		})
	}
}

// TestFullLayerMemory: the full layer's moments take 4·8F² bytes (the
// training population and the three test sets), 0.179 GiB at D = 16 (F =
// 2448: 4·8·2448²/2³⁰); beyond MaxFullBytes (D ≥ 25) NewSystem refuses up
// front, saying how much they would take (F = 8775: 2.29 GiB).
func TestFullLayerMemory(t *testing.T) {
	if b := FullLayerBytes(16) / (1 << 30); b < 0.178 || b > 0.180 {
		t.Errorf("D = 16: %.3g GiB, want 0.179", b)
	}
	data, err := law.NewData(law.PowerLaw(25, 1, 1), nil, law.Lengths{N: 31})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewSystem(data, Model{Kind: Merged, H: 2, Tau: 1, Layer: FullLayer})
	if err == nil || !strings.Contains(err.Error(), "the full layer at D = 25 has 8775 features, whose moments take 2.29 GiB, more than MaxFullBytes = 2 GiB") {
		t.Errorf("D = 26: %v, want a refusal with the memory it needs", err)
	}
}
