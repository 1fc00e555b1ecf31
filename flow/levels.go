package flow

// Levels returns the loss levels whose first falling crossings are the
// drops that Run records in Trajectory.Transitions (M and Level set, T and
// State zero), in order: half-way between L(M_{m−1}) and L(M_m) for
// m = 1..D (separate), or between L(M_0) and L* (merged, m = D). Other
// trajectories of the same model, such as finite-data training, are
// compared with the flow through them.
func (s *System) Levels() []Transition { return s.levels() }
