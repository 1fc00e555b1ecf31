// Command first is the README's first program: the paper's D = 4 example
// integrated until converged, as linattn run computes it by default.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

func main() {
	data, _ := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{N: 31})
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: 4, R: 1}) // τ = 1: Tau 0 means 1
	if err != nil {
		log.Fatal(err)
	}
	y0, _ := s.Init(0.01, 3)
	tr, err := s.Run(context.Background(), y0, flow.RunSettings{}) // until converged
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v, final loss %.10f\n", tr.Status, tr.FinalLoss)
	// Each drop's m, time and level; its state is in tr.Transitions[i].State.
	fmt.Println(tr.Transitions)
	for i := 0; i < len(tr.Times); i += 500 { // the loss curve of out/run.npz, every 500th sample
		fmt.Printf("t = %7.1f  loss %.6f\n", tr.Times[i], tr.Loss[i])
	}
}
