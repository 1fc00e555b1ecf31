package flow_test

import (
	"context"
	"fmt"
	"log"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// The paper's D = 4 example, integrated until converged: what `linattn run`
// computes with its defaults (the same 2001 samples of the loss and the
// weights, the same drops, the same status).
func ExampleSystem_Run() {
	data, _ := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{N: 31})
	s, _ := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: 4, R: 1, Tau: 1})
	y0, _ := s.Init(0.01, 3)
	tr, err := s.Run(context.Background(), y0, flow.RunSettings{}) // until converged, on the drops grid
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("plateau levels %.6f\n", data.PlateauLevels())
	for _, d := range tr.Transitions {
		fmt.Printf("drop %d at t = %.2f τ\n", d.M, d.T)
	}
	fmt.Printf("%v at t = %.1f τ, final loss %.10f, %d samples\n", tr.Status, tr.FinalT, tr.FinalLoss, len(tr.Times))
	// The loss curve at round times, from the run's continuous extension
	// (the output grid's own times follow the drops, and move with the
	// last bits of the processor's arithmetic).
	times := []float64{0, 2750, 4500, 6250, 15000, 28400}
	_, loss, err := tr.Sample(times)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, t := range times {
		fmt.Printf("t = %7.1f τ  loss %.6f\n", t, loss[i])
	}
	// Output:
	// plateau levels [1.000000 0.640580 0.377372 0.209805 0.135995]
	// drop 1 at t = 2754.04 τ
	// drop 2 at t = 5836.91 τ
	// drop 3 at t = 6251.45 τ
	// drop 4 at t = 28381.38 τ
	// converged at t = 28504.2 τ, final loss 0.1359959356, 2001 samples
	// t =     0.0 τ  loss 1.000000
	// t =  2750.0 τ  loss 0.936219
	// t =  4500.0 τ  loss 0.640579
	// t =  6250.0 τ  loss 0.302385
	// t = 15000.0 τ  loss 0.209805
	// t = 28400.0 τ  loss 0.156259
}

// The paper's in-context against in-weight experiment (appendix
// supp:icl-iwl: merged key–query, D = 4, Λ = I/4, N = 31, H = 8) with half
// of the training sequences labeled by one fixed task: the exact in-weight
// test loss of the full layer, until converged. It falls as the layer
// memorizes the task, then rises above its start as in-context learning
// takes over, and settles after a late second drop.
func ExampleSystem_TestLosses() {
	data, _ := law.NewData(law.White(4, 0.25), nil, law.Lengths{N: 31})
	data, _ = data.WithTasks(law.Tasks{ICL: 0.5, Fixed: law.FixedTasks(4, 1, 3)})
	s, _ := flow.NewSystem(data, flow.Model{Kind: flow.Merged, H: 8, Tau: 1, Layer: flow.FullLayer})
	y0, _ := s.Init(2e-5, 3)
	tr, err := s.Run(context.Background(), y0, flow.RunSettings{Grid: flow.GridLog})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 1150; i < len(tr.Times); i += 100 { // log-spaced: every 100th sample
		fmt.Printf("t = %7.1f τ  in-weight test loss %.4f\n", tr.Times[i], tr.TestIWL[i])
	}
	// Output:
	// t =    23.9 τ  in-weight test loss 0.9996
	// t =    47.7 τ  in-weight test loss 0.3932
	// t =    95.2 τ  in-weight test loss 1.0059
	// t =   190.1 τ  in-weight test loss 1.0768
	// t =   379.4 τ  in-weight test loss 1.1083
	// t =   757.3 τ  in-weight test loss 1.1114
	// t =  1511.5 τ  in-weight test loss 1.1098
	// t =  3017.0 τ  in-weight test loss 1.0421
	// t =  6021.7 τ  in-weight test loss 1.0412
}

// The full layer under a task law, as linattn run -layer full -icl 0.5
// -tasks 4 -noise 0.1 -task-eigs 4,2,1,0.5 -task-eigvecs random:5 runs it
// (every error checked, zero settings: the run's defaults): half the
// sequences in-context with w ~ N(0, Ω), the others labeled by one of four
// fixed tasks, label noise σ² = 0.1, until converged from the paper's
// start; the exact in-context, in-weight and in-distribution test losses
// at the end.
func ExampleSystem_TestLosses_taskLaw() {
	omega, err := law.Covariance([]float64{4, 2, 1, 0.5}, law.RandomRotation(4, 5))
	if err != nil {
		log.Fatal(err)
	}
	data, err := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{N: 31})
	if err != nil {
		log.Fatal(err)
	}
	data, err = data.WithTasks(law.Tasks{ICL: 0.5, Fixed: law.FixedTasks(4, 4, 3), Noise: 0.1, Cov: omega})
	if err != nil {
		log.Fatal(err)
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Merged, H: 5, Layer: flow.FullLayer})
	if err != nil {
		log.Fatal(err)
	}
	tr, err := s.Run(context.Background(), nil, flow.RunSettings{}) // nil: the paper's start
	if err != nil {
		log.Fatal(err)
	}
	last := len(tr.Times) - 1
	fmt.Printf("in-context %.4f, in-weight %.4f, in-distribution %.4f\n", tr.TestICL[last], tr.TestIWL[last], tr.TestIDG[last])
	// Output:
	// in-context 0.3255, in-weight 1.1264, in-distribution 0.2195
}
