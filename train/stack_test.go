package train

import (
	"context"
	"math"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// TestStackGradient: the training loss of a stack (two and three layers,
// merged and separate, tied and not, a fixed length and the next-token
// loss) has the gradient its central differences give (step 1e-6, error
// O(h²)), and one layer through the stack's token-by-token evaluation is
// the one layer's loss on the same sequences (the direct path, which
// evaluates the features).
func TestStackGradient(t *testing.T) {
	const h = 1e-6
	for _, ntp := range []bool{false, true} {
		for _, fm := range []flow.Model{
			{Kind: flow.Merged, H: 2, Layers: 2, Tau: 1},
			{Kind: flow.Separate, H: 2, R: 2, Layers: 3, Tau: 1},
			{Kind: flow.Separate, H: 1, R: 3, Layers: 3, Tied: true, Tau: 1},
		} {
			cfg := smallConfig(t, smallCase{kind: fm.Kind, ntp: ntp, icl: 0.5}, AutoPath)
			cfg.Model.Model = fm
			tr := newTrainer(t, cfg)
			theta := randomWeights(tr.Len(), 0.5, 4)
			grad := make([]float64, len(theta))
			tr.Gradient(grad, theta)
			var worst float64
			for i, d := range centralGradient(tr, theta, h) {
				worst = max(worst, math.Abs(grad[i]-d))
			}
			if worst > 1e-7 {
				t.Errorf("%+v, next-token %v: the gradient is %.3g off central differences", fm, ntp, worst)
			}
		}
	}
	// One layer, as a stack's token-by-token evaluation and as the layer,
	// on the same sequences (a function of the seed, set and index).
	cfg := smallConfig(t, smallCase{kind: flow.Merged, icl: 0.5}, DirectPath)
	cfg.Model.Layer = flow.ReducedLayer
	one := newTrainer(t, cfg)
	theta := randomWeights(one.Len(), 0.5, 5)
	st := newStackObjective(sampleRaw(newSampler(cfg.Data, cfg.Seed), setTrain, cfg.P), &cfg.Model, one.shape)
	if a, b := st.eval(theta, nil, nil), one.Loss(theta); math.Abs(a-b) > 1e-12*b {
		t.Errorf("one layer token by token: loss %.15g, the layer's %.15g", a, b)
	}
}

// TestStackTrainingFollowsFlow: gradient descent on sampled sequences
// follows the exact flow of the stack with t/τ = 2η per step: after 300
// steps of η = 0.1 on P = 4 000 sequences the population loss at the
// trained weights (flow.System.Loss) is within 3% of the exact flow's at
// the same time, having fallen by half (the difference is the sampling of
// the data, O(1/√P), and the step, O(η)).
func TestStackTrainingFollowsFlow(t *testing.T) {
	data, err := law.NewData([]float64{0.5, 0.3, 0.2}, law.RandomRotation(3, 1), law.Lengths{N: 8})
	if err != nil {
		t.Fatal(err)
	}
	m := Model{Model: flow.Model{Kind: flow.Merged, H: 2, Layers: 2, Tau: 1}, D: 3}
	tr := newTrainer(t, Config{Model: m, Data: data, P: 4000, Seed: 3})
	s, err := flow.NewSystem(data, m.Model)
	if err != nil {
		t.Fatal(err)
	}
	y0, _ := s.Init(0.3, 2)
	const lr, steps = 0.1, 300
	gd, err := tr.GD(context.Background(), y0, GDSettings{LR: lr, Steps: steps, Samples: 11})
	if err != nil {
		t.Fatal(err)
	}
	T := tr.Time(lr, steps)
	exact, err := s.Run(context.Background(), y0, flow.RunSettings{T: T, Times: []float64{0, T}})
	if err != nil {
		t.Fatal(err)
	}
	n := s.Len()
	got, want := s.Loss(gd.States[len(gd.States)-n:]), exact.Loss[1]
	t.Logf("population loss at the trained weights %.5g, the flow's %.5g (from %.5g)", got, want, exact.Loss[0])
	if math.Abs(got-want) > 0.03*want || !(want < 0.5*exact.Loss[0]) {
		t.Errorf("after %d steps: the trained weights' population loss %.5g, the flow's %.5g (from %.5g)", steps, got, want, exact.Loss[0])
	}
}

// TestUnrestrictedGradient: the unrestricted transformer's training loss
// (two and three layers, two heads, a fixed length and the next-token
// loss) has the gradient its central differences give; and one layer
// whose blocks are the reduced layer's (W^V = v e_D e_Dᵀ, W^KQ = [[U, 0],
// [0, 0]]) has the reduced layer's loss on the same sequences: the query
// as a key adds v·0.
func TestUnrestrictedGradient(t *testing.T) {
	const h = 1e-6
	for _, ntp := range []bool{false, true} {
		for _, layers := range []int{2, 3} {
			cfg := smallConfig(t, smallCase{kind: flow.Merged, blocks: flow.FullLayer, ntp: ntp, icl: 0.5}, AutoPath)
			cfg.Model.Layers, cfg.Model.Unrestricted = layers, true
			tr := newTrainer(t, cfg)
			theta := randomWeights(tr.Len(), 0.4, 6)
			grad := make([]float64, len(theta))
			tr.Gradient(grad, theta)
			var worst float64
			for i, d := range centralGradient(tr, theta, h) {
				worst = max(worst, math.Abs(grad[i]-d))
			}
			if worst > 1e-7 {
				t.Errorf("L = %d, next-token %v: the gradient is %.3g off central differences", layers, ntp, worst)
			}
		}
	}
	cfg := smallConfig(t, smallCase{kind: flow.Merged, blocks: flow.ReducedLayer, icl: 0.5}, DirectPath)
	one := newTrainer(t, cfg)
	y := randomWeights(one.Len(), 0.5, 7) // v (2), U (2 × 3 × 3)
	m := cfg.Model
	m.Layer, m.Unrestricted = flow.FullLayer, true
	theta := make([]float64, m.Len())
	d1 := m.D + 1
	for hd := 0; hd < m.H; hd++ {
		v, kq := transformerWeights(theta, d1, m.H, 0, hd)
		v[d1*d1-1] = y[hd]
		for a := 0; a < m.D; a++ {
			copy(kq[a*d1:a*d1+m.D], y[m.H+hd*m.D*m.D+a*m.D:m.H+hd*m.D*m.D+(a+1)*m.D])
		}
	}
	ut := newTransformerObjective(sampleRaw(newSampler(cfg.Data, cfg.Seed), setTrain, cfg.P), &m, one.shape)
	if a, b := ut.eval(theta, nil, nil), one.Loss(y); math.Abs(a-b) > 1e-12*b {
		t.Errorf("one unrestricted layer in the reduced form: loss %.15g, the reduced layer's %.15g", a, b)
	}
}
