package train

import (
	"context"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// paperConfig is the paper's D = 4 separate example as its code trains it
// (README of github.com/yedizhang/linattn-icl: attnS, 5 heads, rank 1,
// P = 80,000, 10,001 epochs of full-batch gradient descent): λ = 0.4, 0.3,
// 0.2, 0.1 with random eigenvectors, N = 31, the full layer.
func paperConfig(b *testing.B, att Attention, n, p int, path Path) (Config, []float64) {
	nu, _ := law.NuFixed(n)
	data, err := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{Nu: nu})
	if err != nil {
		b.Fatal(err)
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: 5, R: 1, Tau: 1})
	if err != nil {
		b.Fatal(err)
	}
	y0, _ := s.Init(0.01, 3)
	m := Model{Model: flow.Model{Kind: flow.Separate, H: 5, R: 1, Layer: flow.FullLayer, Tau: 1}, D: 4, Attention: att}
	theta0, _ := m.FromFlow(y0)
	return Config{Model: m, Data: withLaw(b, data, law.Lengths{N: n}, 1, 1), P: p, Seed: 1, Path: path}, theta0
}

// benchTrain times drawing the data and steps of full-batch gradient
// descent, as one operation.
func benchTrain(b *testing.B, cfg Config, theta0 []float64, steps int, lr float64) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		res, err := tr.GD(context.Background(), theta0, GDSettings{LR: lr, Steps: steps})
		if err != nil {
			b.Fatal(err)
		}
		sinkF = res.FinalLoss
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*steps), "s/step")
}

var sinkF float64

// BenchmarkPaperSeparate is the paper's D = 4 separate setting (P = 80,000,
// N = 31, H = 5, R = 1, 10,001 steps of full-batch gradient descent)
// through the direct full layer (target: under 60 s on 2 cores) and the
// exact fast path (target: under 1 s). Run with -benchtime 1x.
func BenchmarkPaperSeparate(b *testing.B) {
	for _, path := range []Path{DirectPath, MomentsPath} {
		b.Run(path.String(), func(b *testing.B) {
			cfg, theta0 := paperConfig(b, Linear, 31, 80000, path)
			benchTrain(b, cfg, theta0, 10001, 0.5)
		})
	}
}

// BenchmarkSoftmax is softmax attention at D = 4, N = 15, P = 10⁴, 5,000
// steps of full-batch gradient descent (target: under 5 minutes). Run with
// -benchtime 1x.
func BenchmarkSoftmax(b *testing.B) {
	cfg, theta0 := paperConfig(b, Softmax, 15, 10000, DirectPath)
	benchTrain(b, cfg, theta0, 5000, 0.1)
}

// BenchmarkStep times one gradient evaluation of the paper's separate
// setting (P = 80,000) on each path; allocations per step are the
// goroutines of the parallel sum.
func BenchmarkStep(b *testing.B) {
	for _, path := range []Path{ColumnsPath, DirectPath, MomentsPath} {
		b.Run(path.String(), func(b *testing.B) {
			cfg, theta0 := paperConfig(b, Linear, 31, 80000, path)
			tr, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			grad := make([]float64, tr.Len())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sinkF = tr.Gradient(grad, theta0)
			}
		})
	}
}
