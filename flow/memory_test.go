package flow

import (
	"context"
	"testing"

	"github.com/linattn/linattn/flow/internal/deflation"
)

// TestRunBytesStates: RunBytes counts the states a run holds: at most
// those that StateEvery (from StateBytes) keeps, of the full layer's
// length also where Run integrates the reduced flow, and no recorder's
// besides (they are the output's) but its record of values at the steps;
// with BDF (under fixed tasks,
// Plan.Method) at n = 200 ≤ ode.MaxDenseDim ode's dense LU (2n²) and a
// Krylov space of 2·5 + 2 vectors, with no preconditioner.
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
		rows := len(tr.StateTimes)
		if m.Kept > 20 || 2*rows < m.Kept || rows > m.Kept || m.States != float64(8*m.Kept*s.Len()) || len(tr.States) != rows*s.Len() || m.Recorder != 8*5*maxStepNodes {
			t.Errorf("c = %g: RunBytes counts %d states in %g bytes and %g of the recorder's, the run holds %d", c, m.Kept, m.States, m.Recorder, rows)
		}
		n := float64(s.Len())
		if c < 1 && (m.Solver != 8*(solverVectors*n+2*n*n) || m.Krylov != 8*12*n || m.Precond != 0) {
			t.Errorf("c = %g, BDF: solver %g, Krylov %g, preconditioner %g bytes", c, m.Solver, m.Krylov, m.Precond)
		}
	}
}

// TestPrecondOf: precondOf, which RunBytes and the first pass's dense
// bound read without building a preconditioner, names the kind
// System.Preconditioner builds: none for the merged full layer below
// deflateMinDim (n = 200) or the separate one below ode.MaxDenseDim, the
// deflation from deflateMinDim for the merged one (D = H = 6: n = 294),
// the block preconditioner for the separate model's reduced layer on the
// paper's task alone.
func TestPrecondOf(t *testing.T) {
	t.Parallel()
	lam := []float64{0.3, 0.25, 0.2, 0.12, 0.08, 0.05}
	for _, tc := range []struct {
		m     Model
		d     int
		noise float64
		want  Precond
	}{
		{Model{Kind: Merged, H: 8, Layer: FullLayer}, 4, 0, NoPrecond},
		{Model{Kind: Merged, H: 6, Layer: FullLayer}, 6, 0, DeflationPrecond},
		{Model{Kind: Separate, H: 6, R: 1, Layer: FullLayer}, 6, 0, NoPrecond},
		{Model{Kind: Separate, H: 6, R: 1}, 6, 0, BlockPrecond},
		{Model{Kind: Separate, H: 6, R: 1}, 6, 0.1, NoPrecond},
		{Model{Kind: Merged, H: 6}, 6, 0, NoPrecond},
	} {
		tasks := lawCase{lam: lam[:tc.d], n: 31, icl: 1, k: 1, noise: tc.noise, m: tc.m}
		s := newSys(t, lawData(t, tasks, 1), tc.m)
		got := NoPrecond
		switch s.Preconditioner().(type) {
		case *deflation.Precond:
			got = DeflationPrecond
		case *blockPrecond:
			got = BlockPrecond
		}
		if p := precondOf(tc.m, tc.d, s.Data.Standard()); p != got || p != tc.want {
			t.Errorf("%+v at D = %d, σ² = %g (n = %d): precondOf %d, Preconditioner %d, want %d", tc.m, tc.d, tc.noise, s.Len(), p, got, tc.want)
		}
	}
}
