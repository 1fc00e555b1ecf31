package flow

import "testing"

// TestSolverMetaWithoutMethod: a Trajectory that resolved no method (one
// not made by Run, such as NewTrajectory's) describes its solver with no
// method's name rather than panicking.
func TestSolverMetaWithoutMethod(t *testing.T) {
	t.Parallel()
	tr := NewTrajectory(nil)
	tr.FinalT = 2
	if m := tr.SolverMeta(); m.Method != "" || m.TEnd != 2 {
		t.Errorf("SolverMeta = %+v, want no method and t_end 2", m)
	}
}
