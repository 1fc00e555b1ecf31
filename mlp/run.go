package mlp

import (
	"context"
	"fmt"

	"github.com/linattn/linattn/ode"
)

// Trajectory is the flow sampled at given times: States[k] (a copy of the
// state, Len numbers) and Loss[k] at Times[k].
type Trajectory struct {
	Times, Loss []float64
	States      [][]float64
	Stats       ode.Stats
}

// Run integrates the flow from y0 with DOP853 at relative and absolute
// tolerances rtol and atol and returns it at the given times (increasing,
// from 0). The flow is not stiff at the sizes this package is for.
func (n *Net) Run(ctx context.Context, y0, times []float64, rtol, atol float64) (*Trajectory, error) {
	n.check("y0", y0)
	if len(times) == 0 || times[0] < 0 {
		return nil, fmt.Errorf("mlp: %d output times, want at least one, from t ≥ 0", len(times))
	}
	for k := 1; k < len(times); k++ {
		if !(times[k] >= times[k-1]) {
			return nil, fmt.Errorf("mlp: output time %d is %g after %g, want increasing times", k, times[k], times[k-1])
		}
	}
	p := ode.Problem{Func: func(_ float64, y, dy []float64) { n.Deriv(dy, y) }, T0: 0, T1: times[len(times)-1], Y0: y0}
	res, err := ode.Solve(ctx, p, ode.Settings{Method: ode.DOP853, RTol: rtol, ATol: atol, MaxSteps: 1 << 22, TEval: times})
	if err != nil {
		return nil, fmt.Errorf("mlp: %w", err)
	}
	m := n.Len()
	tr := &Trajectory{Times: append([]float64(nil), res.TEval...), Stats: res.Stats}
	for k := range tr.Times {
		y := append([]float64(nil), res.YEval[k*m:(k+1)*m]...)
		tr.States = append(tr.States, y)
		tr.Loss = append(tr.Loss, n.Loss(y))
	}
	if len(tr.Times) != len(times) {
		return tr, fmt.Errorf("mlp: the solve stopped at t = %g (%v) before the last output time %g", res.T, res.Status, times[len(times)-1])
	}
	return tr, nil
}
