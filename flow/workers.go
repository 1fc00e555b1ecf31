package flow

import (
	"github.com/linattn/linattn/internal/share"
	"github.com/linattn/linattn/law"
)

// setWorkers sets the processors the evaluations of s may share their
// work among, procs or for 0 all of them (RunSettings.Workers;
// share.Procs), in each of its parts that shares: the full layer's
// products and moments, and its test losses'. The linearizations and
// preconditioners made afterwards take them (NewLinearization,
// Preconditioner). It returns the count s had, for Run to restore.
func (s *System) setWorkers(procs int) (was int) {
	was, s.workers = s.workers, procs
	if f := s.law.full; f != nil {
		f.coef.prod.share(procs)
		shareMoments(f.train, procs)
	}
	if t := &s.law.tests; t.coef != nil {
		t.share(procs)
	}
	return was
}

// shareMoments lets the moments mo share their products among procs
// processors where they apply ZZ without forming it (law.Operator; the
// dense moments do not share).
func shareMoments(mo featureMoments, procs int) {
	if op, ok := mo.(*law.Operator); ok {
		op.SetWorkers(procs)
	}
}

// shareWith returns the processors each of k goroutines that evaluate
// side by side on copies of s gets of s's (share.Split).
func (s *System) shareWith(k int) int { return share.Split(s.workers, k) }
