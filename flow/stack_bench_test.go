package flow

import (
	"context"
	"fmt"
	"testing"

	"github.com/linattn/linattn/law"
)

// stackBench is a stack of the speed targets: the merged model with
// H = D heads per layer under the power-law Λ, N = 31, from the paper's
// small start.
type stackBench struct {
	d, layers int
	tied      bool
}

func (c stackBench) name() string { return fmt.Sprintf("D=%d/L=%d/tied=%v", c.d, c.layers, c.tied) }

func stackBenchSystem(b *testing.B, c stackBench) *System {
	data, err := law.NewData(law.PowerLaw(c.d, 1, 1), law.RandomRotation(c.d, 1), law.Lengths{N: 31})
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewSystem(data, Model{Kind: Merged, H: c.d, Layers: c.layers, Tied: c.tied})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkStackDeriv times one evaluation of a stack's flow (its loss,
// gradient and chain rule) and reports the size of its compiled loss
// (docs/math.md, "Depth"): the distinct words, the D×D products of an
// evaluation of the value and the term groups.
func BenchmarkStackDeriv(b *testing.B) {
	for _, c := range []stackBench{{8, 2, false}, {16, 2, false}, {16, 3, false}, {16, 3, true}, {8, 4, false}} {
		b.Run(c.name(), func(b *testing.B) {
			s := stackBenchSystem(b, c)
			y0, _ := s.Init(0.5, 1)
			y, dy := s.ToEigen(nil, y0), make([]float64, s.Len())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.DerivEigen(dy, y)
			}
			sinkF = dy[0]
			p := s.stack.prog
			b.ReportMetric(float64(p.Words()), "words")
			b.ReportMetric(float64(p.Products()), "products")
			b.ReportMetric(float64(p.Groups()), "groups")
		})
	}
}

// BenchmarkStackRun times a stack's run until converged from the paper's
// start (linattn run -model merged -H D -spectrum power:1 -layers L):
// go test ./flow -run XXX -bench StackRun -benchtime 1x.
func BenchmarkStackRun(b *testing.B) {
	for _, c := range []stackBench{{8, 2, false}, {16, 3, false}} {
		b.Run(c.name(), func(b *testing.B) {
			s := stackBenchSystem(b, c)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				tr, err := s.Run(context.Background(), nil, RunSettings{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(tr.Stats.FuncEvals), "evals")
				sinkF = tr.FinalLoss
			}
		})
	}
}
