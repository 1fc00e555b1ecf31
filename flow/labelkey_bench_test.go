package flow

import (
	"context"
	"fmt"
	"testing"

	"github.com/linattn/linattn/law"
)

// luData is Lu et al.'s setting at dimension d (docs/math.md, "Asymptotic
// theory"): x ~ N(0, I/D), N = αD context tokens with α = 10, K = κD
// tasks w ~ N(0, I) with κ = 2, label noise ρ = 0.01, every training
// sequence labeled by one of the tasks.
func luData(tb testing.TB, d int) *law.Data {
	data, err := law.NewData(law.White(d, 1/float64(d)), nil, law.Lengths{N: 10 * d})
	if err == nil {
		data, err = data.WithTasks(law.Tasks{Fixed: law.GaussianTasks(d, 2*d, 1), Noise: 0.01})
	}
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkLabelKeyRun integrates the label-key layer (one merged head)
// in Lu et al.'s setting until converged, with the exact test losses at
// every output time: D = 16, N = 160 (target: under 10 s), and D = 32.
func BenchmarkLabelKeyRun(b *testing.B) {
	for _, d := range []int{16, 32} {
		b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
			s, err := NewSystem(luData(b, d), Model{Kind: Merged, H: 1, Tau: 1, Layer: LabelKeyLayer})
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
			last := len(tr.Times) - 1
			b.ReportMetric(float64(tr.Stats.FuncEvals), "evals")
			b.ReportMetric(tr.TestICL[last], "e_ICL")
			b.ReportMetric(tr.TestIDG[last], "e_IDG")
		})
	}
}
