package reduced

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkIsotropicStack times the tied isotropic reduction at D = 1024,
// α = N/D = 1 (issue 44's target: under 1 s): its exact polynomial built
// (law.StackLoss, compiled once per depth and cached, then the Wishart
// expectations at D) and its flow integrated from η = 10⁻⁴/D until it
// settles at η*: go test ./reduced -run XXX -bench IsotropicStack.
func BenchmarkIsotropicStack(b *testing.B) {
	const d = 1024
	for _, layers := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("D=%d/L=%d", d, layers), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p, err := NewIsotropicStack(d, d, layers, 0)
				if err != nil {
					b.Fatal(err)
				}
				star, _ := p.Optimum()
				times := make([]float64, 41)
				for k := range times {
					times[k] = 1e6 * math.Pow(1e3, float64(k)/40) // t/τ to 10⁹: η settles near η*
				}
				eta, _, err := p.Run(1e-4/d, times)
				if err != nil {
					b.Fatal(err)
				}
				if last := eta[len(eta)-1]; math.Abs(last-star) > 1e-3*star {
					b.Fatalf("η = %g at t = %g, want η* = %g", last, times[len(times)-1], star)
				}
			}
		})
	}
}
