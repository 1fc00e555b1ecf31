package train

import (
	"context"
	"math"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// TestSoftmaxDrops is the paper's softmax experiment (figure softmax-attn:
// its D = 4 setting with the softmax activation) made small enough for
// CI: λ = 0.4, 0.3, 0.2, 0.1, N = 10, P = 300 sequences, H = 4 heads,
// w_init = 0.01, full-batch gradient descent at η = 0.2: 4000 steps for the
// separate model (its last drop ends by step 3000), 1000 for the merged
// one, whose plateau is short. The
// separate model (rank 1) sheds its loss in several abrupt drops with
// plateaus between them, the merged model in one (FastDrops, which counts
// only drops after a plateau). Measured: the separate model drops from
// 0.905 at step ≈ 1750, from 0.66 at ≈ 2200 and from 0.40 at ≈ 2900; the
// merged one from 0.92 over steps 70–170, after a plateau, then decreases
// slowly.
func TestSoftmaxDrops(t *testing.T) {
	nu, _ := law.NuFixed(10)
	data, err := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []flow.Kind{flow.Separate, flow.Merged} {
		m := Model{Model: flow.Model{Kind: kind, H: 4, Layer: flow.FullLayer, Tau: 1}, D: 4, Attention: Softmax}
		if kind == flow.Separate {
			m.R = 1
		}
		tr := newTrainer(t, Config{Model: m, Data: withLaw(t, data, law.Lengths{N: 10}, 1, 1), P: 300, Seed: 1})
		s, _ := flow.NewSystem(data, flow.Model{Kind: kind, H: m.H, R: m.R, Tau: 1})
		y0, _ := s.Init(0.01, 3)
		theta, _ := m.FromFlow(y0)
		steps := 4000
		if kind == flow.Merged {
			steps = 1000
		}
		res, err := tr.GD(context.Background(), theta, everyStep(0.2, steps, nil))
		if err != nil {
			t.Fatal(err)
		}
		drops := FastDrops(res.Loss)
		t.Logf("%v softmax: %d drops %+v; loss %.4g → %.4g", kind, len(drops), drops, res.Loss[0], res.FinalLoss)
		switch {
		case kind == flow.Separate && len(drops) < 3:
			t.Errorf("separate softmax attention: %d loss drops, want ≥ 3", len(drops))
		case kind == flow.Merged && (len(drops) != 1 || drops[0].Start == 0):
			t.Errorf("merged softmax attention: drops %+v, want one after a plateau", drops)
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

// TestFastDropsNeedsAPlateau: a constant curve has no drops, nor has one
// that falls from its first sample (e^{−t}); a plateau then a fall
// (1 − tanh) has one, starting after the plateau.
func TestFastDropsNeedsAPlateau(t *testing.T) {
	n := 1000
	flat, decay, step := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range flat {
		x := float64(i) / float64(n)
		flat[i] = 1
		decay[i] = math.Exp(-20 * x)
		step[i] = 1 - math.Tanh(40*(x-0.5))
	}
	if d := FastDrops(flat); d != nil {
		t.Errorf("constant curve: drops %+v", d)
	}
	if d := FastDrops(decay); d != nil {
		t.Errorf("decay from t = 0: drops %+v, want none", d)
	}
	if d := FastDrops(step); len(d) != 1 || d[0].Start < n/4 || d[0].End > 3*n/4 {
		t.Errorf("plateau then drop at the middle: drops %+v, want one around sample %d", d, n/2)
	}
}
