package landscape

import (
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

var sinkLoss float64

// BenchmarkEnumerate streams the loss table of all 2^20 ≈ 10⁶ fixed points
// for D = 20 (λ_d ∝ 1/d, trace 1, N = 127 as in the paper's
// high-dimensional figure); memory stays O(D).
func BenchmarkEnumerate(b *testing.B) {
	data, err := law.NewData(law.PowerLaw(20, 1, 1), nil, law.Lengths{Nu: 1.0 / 127})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var sum float64
		Enumerate(data, func(s Subset) error {
			sum += s.Loss
			return nil
		})
		sinkLoss = sum
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(1<<20), "ns/subset")
}

// BenchmarkStability analyzes all 256 fixed points of the separate model with
// D = 8, H = 9, R = 1 (the paper's Figure 5 setting): configuration,
// residual, analytic Jacobian (153×153), its symmetric eigendecomposition,
// escapes and class.
func BenchmarkStability(b *testing.B) {
	data, err := law.NewData(law.PowerLaw(8, 1, 1), law.RandomRotation(8, 1), law.Lengths{Nu: 1.0 / 31})
	if err != nil {
		b.Fatal(err)
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: 9, R: 1, Tau: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for mask := uint64(0); mask < 256; mask++ {
			p, err := AnalyzeSubset(s, mask)
			if err != nil {
				b.Fatal(err)
			}
			sinkLoss = p.Stability.UnstableRate
		}
	}
}
