package flow

import "context"

// reducedFor returns the reduced layer's System when the full layer's run
// from y0 is exactly the reduced flow: every task in-context and the extra
// blocks of y0 zero, so that they get exactly zero gradient and stay zero
// (docs/math.md, "The reduction is exact in context"). Otherwise nil.
func (s *System) reducedFor(y0 []float64) *System {
	if !s.Model.Layer.extra() || !s.Data.InContext() {
		return nil
	}
	for _, x := range y0[s.Model.flowLen(s.d):] {
		if x != 0 {
			return nil
		}
	}
	m := s.Model
	m.Layer = ReducedLayer
	red, err := NewSystem(s.Data, m)
	if err != nil {
		return nil
	}
	return red
}

// runReduced runs the full layer from y0 as the reduced flow red: the
// same steps and values as a reduced run, bit for bit, the extra blocks
// zero in every state, the test losses those of the full layer.
func (s *System) runReduced(ctx context.Context, red *System, y0 []float64, rs RunSettings) (*Trajectory, error) {
	nr := red.n
	pad := s.n - nr
	user := rs.Observer
	if user != nil {
		full := make([]float64, s.n)
		rs.Observer = func(t float64, y []float64, loss float64) error {
			copy(full, y)
			return user(t, full, loss)
		}
	}
	tests, every := rs.TestLosses, rs.StateEvery
	rs.TestLosses, rs.StateEvery = false, 0 // on the full states, below
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
	rs.TestLosses, rs.StateEvery = tests, every
	return s.finish(tr, err, rs)
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
