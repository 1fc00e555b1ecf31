package figures_test

import (
	"context"
	"fmt"
	"io"

	"github.com/linattn/linattn/figures"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// The figure of a run computed in Go, as linattn plot draws out/run.npz:
// the loss with the plateau levels and the drops, the value weights, the
// key alignment.
func ExampleRun() {
	nu, _ := law.NuFixed(31)
	data, _ := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{Nu: nu})
	s, _ := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: 4, R: 1, Tau: 1})
	y0, _ := s.Init(0.01, 3)
	tr, err := s.Run(context.Background(), y0, flow.RunSettings{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fig, err := figures.Run(s, tr, figures.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fig.Title)
	for _, row := range fig.Grid {
		p := row[0]
		held := 0
		for _, c := range p.Curves {
			if c.Dotted { // the converged run's final state, drawn on to the end of the axis
				held++
			}
		}
		fmt.Printf("%q: %d curves, %d held, %d reference levels\n", p.YLabel, len(p.Curves)-held, held, len(p.HLines))
	}
	fmt.Println(fig.Write(io.Discard, "svg", figures.Size{})) // or fig.Save("run.png", figures.Size{})
	// Output:
	// separate key–query, D = 4, H = 4, R = 1, ν = 0.03226
	// "loss": 1 curves, 1 held, 5 reference levels
	// "value weight vᵢ": 4 curves, 4 held, 0 reference levels
	// "key alignment": 4 curves, 4 held, 0 reference levels
	// <nil>
}
