package flow

import (
	"context"
	"testing"
)

// TestRunBytesStates: RunBytes counts the states a run holds: those that
// StateEvery (from StateBytes) keeps, of the full layer's length also
// where Run integrates the reduced flow, and with BDF (under fixed tasks,
// MethodFor) at n = 200 ≤ ode.MaxDenseDim ode's dense LU (2n²) and a
// Krylov space of 2·5 + 1 vectors, with no preconditioner.
func TestRunBytesStates(t *testing.T) {
	t.Parallel()
	for _, c := range []float64{0.5, 1} {
		s := icliwlSystem(t, c, 1) // merged full layer, D = 4, H = 8: n = 8 + 8·16 + 2·8·4 = 200
		rs := RunSettings{T: 300, Samples: 101, StateBytes: 20 * 200 * 8}
		m := s.RunBytes(nil, rs)
		tr, err := s.Run(context.Background(), nil, rs)
		if err != nil {
			t.Fatal(err)
		}
		if m.Kept != len(tr.StateIndex) || m.States != float64(8*len(tr.States)) || m.Recorder != m.States {
			t.Errorf("c = %g: RunBytes counts %d states in %g bytes, the run holds %d in %d", c, m.Kept, m.States, len(tr.StateIndex), 8*len(tr.States))
		}
		n := float64(s.Len())
		if c < 1 && (m.Solver != 8*(solverVectors*n+2*n*n) || m.Krylov != 8*11*n || m.Precond != 0) {
			t.Errorf("c = %g, BDF: solver %g, Krylov %g, preconditioner %g bytes", c, m.Solver, m.Krylov, m.Precond)
		}
	}
}
