package law

import (
	"fmt"
	"testing"

	"github.com/linattn/linattn/internal/cputime"
)

var benchSink float64

// BenchmarkMulVec compares one product ZZ·c by the dense moments
// (compressed to their nonzeros) and by the Operator, for the full
// layer's features on the training law c = 0.5, K = 4, Ω ≠ I, σ² > 0:
// the crossover of the two paths (flow's fullDenseMaxDim).
func BenchmarkMulVec(b *testing.B) {
	for _, d := range []int{4, 6, 8, 10, 12, 16, 32, 64} {
		c := operatorCase{d, 0.5, 4, 0.1, Lengths{N: 2 * d}, "full"}
		data := operatorData(b, c, 1)
		pairs := operatorPairs("full", d, 1)
		op, err := data.Operator(pairs, Training)
		if err != nil {
			b.Fatal(err)
		}
		cf := make([]float64, op.Features())
		for i := range cf {
			cf[i] = float64(i%7) - 3
		}
		dst := make([]float64, len(cf))
		b.Run(fmt.Sprintf("operator/D=%d", d), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Seconds()
			for i := 0; i < b.N; i++ {
				op.MulVec(dst, cf)
			}
			b.ReportMetric((cputime.Seconds()-cpu0)/float64(b.N)*1e6, "cpu-µs/op")
			benchSink = dst[0]
		})
		if d > 16 {
			continue
		}
		mo, err := data.Moments(pairs, Training, true)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("dense/D=%d", d), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Seconds()
			for i := 0; i < b.N; i++ {
				mo.MulVec(dst, cf)
			}
			b.ReportMetric((cputime.Seconds()-cpu0)/float64(b.N)*1e6, "cpu-µs/op")
			benchSink = dst[0]
		})
	}
}
