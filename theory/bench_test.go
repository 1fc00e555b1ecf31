package theory

import (
	"math"
	"math/rand/v2"
	"testing"
)

var sink float64

// BenchmarkDMMSEWeights is one context of Raventós et al.'s setting (D = 8,
// 15 context pairs) against K pretraining tasks.
func BenchmarkDMMSEWeights(b *testing.B) {
	for _, k := range []struct {
		name string
		k    int
	}{{"K=2^10", 1 << 10}, {"K=2^20", 1 << 20}} {
		b.Run(k.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			tasks := randomTasks(rng, k.k, RaventosD)
			m, err := NewDMMSE(tasks, RaventosNoiseVar)
			if err != nil {
				b.Fatal(err)
			}
			c := randomContext(rng, RaventosD, 15, tasks.RawRowView(0), 0.5)
			w := make([]float64, RaventosD)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := m.Weights(w, c); err != nil {
					b.Fatal(err)
				}
			}
			sink = w[0]
		})
	}
}

// BenchmarkLuICL is one evaluation of the closed form.
func BenchmarkLuICL(b *testing.B) {
	p := LuParams{Kappa: 1, Alpha: 10, Tau: math.Inf(1), Rho: 0.01}
	b.ReportAllocs()
	for range b.N {
		e, _ := LuICL(p)
		sink += e
	}
}
