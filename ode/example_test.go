package ode_test

import (
	"context"
	"fmt"

	"github.com/linattn/linattn/ode"
)

// A ball thrown upwards at 10 m/s under gravity, y = (height, velocity):
// a terminal event stops the solve when it lands, at t = 2·10/9.81 s, and
// the height is reported at two requested times.
func ExampleSolve() {
	const g = 9.81
	p := ode.Problem{
		Func: func(_ float64, y, dy []float64) { dy[0], dy[1] = y[1], -g },
		T0:   0, T1: 10,
		Y0: []float64{0, 10},
	}
	landed := ode.Event{Func: func(_ float64, y []float64) float64 { return y[0] }, Direction: ode.Falling, Terminal: true}
	res, err := ode.Solve(context.Background(), p, ode.Settings{
		Method: ode.DOP853, RTol: 1e-10, ATol: 1e-12,
		TEval:  []float64{0.5, 1},
		Events: []ode.Event{landed},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, t := range res.TEval {
		fmt.Printf("height at %.1f s: %.3f m\n", t, res.YEval[2*i])
	}
	fmt.Printf("%v at t = %.6f s (exact %.6f), velocity %.4f m/s\n", res.Status, res.T, 2*10/g, res.Y[1])
	// Output:
	// height at 0.5 s: 3.774 m
	// height at 1.0 s: 5.095 m
	// TerminalEvent at t = 2.038736 s (exact 2.038736), velocity -10.0000 m/s
}

// Auto integrates a problem that is stiff only part of the time: Van der
// Pol's oscillator with ε = 10⁻³ is stiff on its slow branches and not in
// its fast jumps. The statistics say which method took how many steps.
func ExampleNewAuto() {
	const eps = 1e-3
	p := ode.Problem{
		Func: func(_ float64, y, dy []float64) { dy[0], dy[1] = y[1], ((1-y[0]*y[0])*y[1]-y[0])/eps },
		T0:   0, T1: 3,
		Y0: []float64{2, 0},
	}
	m, _ := ode.NewAuto(ode.DOP853, ode.Rodas5P)
	res, err := ode.Solve(context.Background(), p, ode.Settings{Method: m, RTol: 1e-8, ATol: 1e-8})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("y(3) = %.5f\n", res.Y[0])
	for _, pm := range res.Stats.PerMethod {
		fmt.Printf("%s took steps: %v\n", pm.Name, pm.Steps > 0)
	}
	// Output:
	// y(3) = -1.61771
	// DOP853 took steps: true
	// Rodas5P took steps: true
}
