package flow

import "context"

// runsReduced reports whether the full layer's run from y0 is exactly the
// reduced flow: every task in-context and the extra blocks of y0 zero, so
// that they get exactly zero gradient and stay zero (docs/math.md, "The
// reduction is exact in context").
func (s *System) runsReduced(y0 []float64) bool {
	if !s.Model.Layer.extra() || !s.Data.InContext() || len(y0) != s.n {
		return false
	}
	for _, x := range y0[s.Model.flowLen(s.d):] {
		if x != 0 {
			return false
		}
	}
	return true
}

// reducedModel returns the reduced layer's model that Run integrates for
// the full layer's run from y0 (runsReduced), or nil.
func (s *System) reducedModel(y0 []float64) *Model {
	if !s.runsReduced(y0) {
		return nil
	}
	m := s.Model
	m.Layer = ReducedLayer
	return &m
}

// reducedFor returns the reduced layer's System that Run integrates for
// the full layer's run from y0 (runsReduced), or nil. It reports the
// states and test losses of s (outer).
func (s *System) reducedFor(y0 []float64) *System {
	m := s.reducedModel(y0)
	if m == nil {
		return nil
	}
	red, err := NewSystem(s.Data, *m)
	if err != nil {
		return nil
	}
	red.outer = s
	return red
}

// testLosses returns the test losses of a state of s (original basis) as
// Run reports them: those of the full layer whose run s integrates
// (reducedFor), at the state with zero extra blocks, else s's own
// (TestLosses).
func (s *System) testLosses() func(y []float64) (icl, iwl, idg float64) {
	if s.outer == nil {
		return s.TestLosses
	}
	full := make([]float64, s.outer.n) // the extra blocks stay zero
	return func(y []float64) (icl, iwl, idg float64) {
		copy(full, y)
		return s.outer.TestLosses(full)
	}
}

// runReduced runs the full layer from y0 as the reduced flow red, with
// the settings rs resolved for s (Settings): the same steps and values as
// a reduced run, bit for bit, the extra blocks zero in every state, the
// test losses those of the full layer, and the states kept as StateEvery
// says, so that the run holds no more of them than a run of s would.
func (s *System) runReduced(ctx context.Context, red *System, y0 []float64, rs RunSettings) (*Trajectory, error) {
	nr := red.n
	pad := s.n - nr
	if user := rs.Observer; user != nil {
		full := make([]float64, s.n)
		rs.Observer = func(t float64, y []float64, loss float64) error {
			copy(full, y)
			return user(t, full, loss)
		}
	}
	tr, err := red.run(ctx, y0[:nr], rs)
	if tr == nil {
		return nil, err
	}
	tr.States = padRows(tr.States, nr, pad)
	tr.Final = padRows(tr.Final, nr, pad)
	for i := range tr.Transitions {
		if tr.Transitions[i].State != nil {
			tr.Transitions[i].State = padRows(tr.Transitions[i].State, nr, pad)
		}
	}
	tr.pad = pad
	return tr, err
}

// padRows appends pad zeros to each row of n values.
func padRows(x []float64, n, pad int) []float64 {
	rows := len(x) / n
	out := make([]float64, rows*(n+pad))
	for i := 0; i < rows; i++ {
		copy(out[i*(n+pad):], x[i*n:(i+1)*n])
	}
	return out
}
