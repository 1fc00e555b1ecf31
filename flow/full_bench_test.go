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

// TestFullLayerMemory: the full layer's dense moments take 4·8F² bytes
// (the training population and the three test sets), 4.1 MB at D = 8 (F =
// 360); above fullDenseMaxDim the Operator takes O(F); beyond
// MaxFullBytes NewSystem refuses up front, saying how much they would
// take.
func TestFullLayerMemory(t *testing.T) {
	if b := FullLayerBytes(8); b != 4*8*360*360 {
		t.Errorf("D = 8: %g bytes, want 4·8·360²", b)
	}
	// (D+1)²D = 270 400, F = 137 280 at D = 64: 4·8·(2·270 400 + 3·137 280) + 40·137 280.
	if b := FullLayerBytes(64); b != 4*8*(2*270400+3*137280)+40*137280 {
		t.Errorf("D = 64: %g bytes", b)
	}
	d := 1
	for FullLayerBytes(d+1) <= MaxFullBytes {
		d++
	}
	t.Logf("the largest D whose full layer fits MaxFullBytes: %d", d)
	data, err := law.NewData(law.PowerLaw(d+1, 1, 1), nil, law.Lengths{N: 31})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewSystem(data, Model{Kind: Merged, H: 2, Tau: 1, Layer: FullLayer})
	want := fmt.Sprintf("D = %d has %d features, whose moments take", d+1, (d+1)*(d+2)*(d+3)/2)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "more than MaxFullBytes = 2 GiB") {
		t.Errorf("D = %d: %v, want a refusal with the memory it needs", d+1, err)
	}
}
