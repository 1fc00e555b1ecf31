package train_test

import (
	"context"
	"fmt"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/train"
)

// The paper's D = 3 separate model trained on P = 2·10⁵ sequences by
// full-batch gradient descent from the initial state of a flow run, beside
// the population flow: its drop times are within a few percent of the
// flow's. The loss is the training loss; the data seed is 1.
func ExampleTrainer_GD() {
	nu, _ := law.NuFixed(31)
	data, _ := law.NewData([]float64{0.5, 0.3, 0.2}, law.RandomRotation(3, 1), law.Lengths{Nu: nu})
	s, _ := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: 3, R: 1, Tau: 1})
	y0, _ := s.Init(0.01, 3)
	m := train.Model{Model: flow.Model{Kind: flow.Separate, H: 3, R: 1, Layer: flow.ReducedLayer, Tau: 1}, D: 3}
	sampled, _ := data.WithLengths(law.Lengths{N: 31}) // sequences need N itself, not only ν
	tr, err := train.New(train.Config{Model: m, Data: sampled, P: 200000, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	const lr, steps = 0.5, 9000 // t/τ = 2η·steps = 9000
	res, err := tr.GD(context.Background(), y0, train.GDSettings{LR: lr, Steps: steps, Levels: s.Levels()})
	if err != nil {
		fmt.Println(err)
		return
	}
	pop, _ := s.Run(context.Background(), y0, flow.RunSettings{T: 9000})
	fmt.Println("path:", tr.Path())
	for i, d := range res.Transitions {
		fmt.Printf("drop %d at t = %.0f τ (flow: %.0f τ)\n", d.M, d.T, pop.Transitions[i].T)
	}
	fmt.Printf("final training loss %.4f (L* = %.4f)\n", res.FinalLoss, data.MinLoss())
	// Output:
	// path: moments
	// drop 1 at t = 1126 τ (flow: 1127 τ)
	// drop 2 at t = 2176 τ (flow: 2261 τ)
	// drop 3 at t = 6305 τ (flow: 6180 τ)
	// final training loss 0.1133 (L* = 0.1133)
}
