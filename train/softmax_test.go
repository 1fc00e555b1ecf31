package train

import (
	"context"
	"testing"

	"github.com/linattn/linattn/flow"
)

// TestSoftmaxDrops is the paper's softmax experiment (figure softmax-attn:
// its D = 4 setting with the softmax activation) made small enough for
// CI: λ = 0.4, 0.3, 0.2, 0.1, N = 10, P = 300 sequences, H = 4 heads,
// w_init = 0.01, 5000 steps of full-batch gradient descent at η = 0.2.
// The separate model (rank 1) sheds its loss in several abrupt drops with
// plateaus between them, the merged model in one (FastDrops). Measured:
// the separate model drops from 0.905 at step ≈ 1750, from 0.66 at ≈ 2200
// and from 0.40 at ≈ 2900; the merged one from 0.92 within its first 300
// steps, then decreases slowly.
func TestSoftmaxDrops(t *testing.T) {
	nu, _ := flow.NuFixed(10)
	data, err := flow.NewData([]float64{0.4, 0.3, 0.2, 0.1}, flow.RandomRotation(4, 1), nu)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []flow.Kind{flow.Separate, flow.Merged} {
		m := Model{Kind: kind, D: 4, H: 4, Attention: Softmax, Blocks: Full}
		if kind == flow.Separate {
			m.R = 1
		}
		tr := newTrainer(t, Config{Model: m, Task: Task{Data: data, N: 10, ICL: 1}, P: 300, Seed: 1, Tau: 1})
		s, _ := flow.NewSystem(data, flow.Model{Kind: kind, H: m.H, R: m.R, Tau: 1})
		y0, _ := s.Init(0.01, 3)
		theta, _ := m.FromFlow(y0)
		res, err := tr.GD(context.Background(), theta, GDSettings{LR: 0.2, Steps: 5000})
		if err != nil {
			t.Fatal(err)
		}
		drops := FastDrops(res.Loss)
		t.Logf("%v softmax: %d drops %+v; loss %.4g → %.4g", kind, len(drops), drops, res.Loss[0], res.Loss[5000])
		switch {
		case kind == flow.Separate && len(drops) < 3:
			t.Errorf("separate softmax attention: %d loss drops, want ≥ 3", len(drops))
		case kind == flow.Merged && len(drops) != 1:
			t.Errorf("merged softmax attention: %d loss drops, want 1", len(drops))
		}
	}
}

// TestFastDropsOnFlow: on the population flow's loss (package flow, 10⁴
// equally spaced samples until converged) FastDrops counts the drops the
// theory predicts: D = 3 for the separate model with λ = 0.5, 0.3, 0.2
// (drops at t ≈ 1127, 2261, 6180), one for the merged model.
func TestFastDropsOnFlow(t *testing.T) {
	for _, c := range []struct {
		kind flow.Kind
		h    int
		want int
	}{{flow.Separate, 3, 3}, {flow.Merged, 3, 1}} {
		ex := newFlowExample(t, c.kind.String(), []float64{0.5, 0.3, 0.2}, c.kind, c.h, 0)
		run, err := ex.sys.Run(context.Background(), ex.y0, flow.RunSettings{T: ex.run.FinalT, Times: flow.LinearGrid(ex.run.FinalT, 10000)})
		if err != nil {
			t.Fatal(err)
		}
		if got := FastDrops(run.Loss); len(got) != c.want {
			t.Errorf("%v flow: %d drops %+v, want %d", c.kind, len(got), got, c.want)
		}
	}
}
