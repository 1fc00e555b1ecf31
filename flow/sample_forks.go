package flow

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/linattn/linattn/internal/share"
	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/ode/replay"
)

// maxSampleWorkers bounds the goroutines that sample a thinned continuous
// extension (Trajectory.sample): each beyond the first holds a System, a
// preconditioner and an integrator of its own (RunMemory.Forks).
const maxSampleWorkers = 4

// minSamplesPerWorker is the least number of output times that make a
// fork worth its set-up (a System and a preconditioner).
const minSamplesPerWorker = 16

// samplingWorkers returns how many goroutines sample a run's thinned
// continuous extension at nt output times on procs processors (the
// run's RunSettings.Workers; share.Procs): all of them, at most
// maxSampleWorkers and one per minSamplesPerWorker times.
func samplingWorkers(nt, procs int) int {
	return max(1, min(share.Procs(procs), maxSampleWorkers, nt/minSamplesPerWorker))
}

// sampleWorkers is samplingWorkers on the run's processors where the
// extension takes steps again (replay.Thinned) and belongs to a System's
// run, else 1.
func (tr *Trajectory) sampleWorkers(nt int) int {
	if tr.sys == nil || tr.dense == nil || !replay.Thinned(tr.dense) {
		return 1
	}
	return samplingWorkers(nt, tr.workers)
}

// fork returns a Trajectory of tr's run that evaluates its extension in
// another goroutine on procs processors: a copy of the System (clone),
// its functions and a preconditioner of the run's kind, and a fork of the
// extension (replay.Fork), whose values are tr's bit for bit.
func (tr *Trajectory) fork(procs int) (*Trajectory, error) {
	s, err := tr.sys.clone()
	if err != nil {
		return nil, err
	}
	s.setWorkers(procs)
	prob := ode.Problem{Func: s.Func(), Jac: s.Jac(), Precond: s.forkPreconditioner(tr.precond)}
	return &Trajectory{sys: s, dense: replay.Fork(tr.dense, prob, procs), pad: tr.pad, workers: procs}, nil
}

// shareAs sets the processors tr's own evaluations take to procs (its
// System's, its preconditioner's and its extension's replays'), while
// forks sample beside it, and returns the function that restores them.
func (tr *Trajectory) shareAs(procs int) (restore func()) {
	was := tr.sys.setWorkers(procs)
	setPrecondWorkers(tr.precond, procs)
	replay.SetWorkers(tr.dense, procs)
	return func() {
		tr.sys.setWorkers(was)
		setPrecondWorkers(tr.precond, tr.workers)
		replay.SetWorkers(tr.dense, tr.workers)
	}
}

// clone returns a System of the same data and model with scratch space of
// its own, to evaluate in another goroutine with the same results.
func (s *System) clone() (*System, error) {
	c, err := NewSystem(s.Data, s.Model)
	if err != nil {
		return nil, err
	}
	c.outer = s.outer
	return c, nil
}

// sampleGroups splits the output times into contiguous groups
// bounds[i]…bounds[i+1] for w goroutines, for times in increasing order:
// each group begins where the evaluations begin to replay from another
// kept state of the extension (replay.Origin), about
// groupsPerWorker·w of them spanning as many steps of the run each (at
// least groupMinSteps).
// Otherwise it splits them into w ranges of as many times. A group's
// replay is independent of the others', so the goroutines may take the
// groups in any order; within one it goes on from step to step.
func (tr *Trajectory) sampleGroups(times []float64, w int) []int {
	nt := len(times)
	if nt == 0 {
		return []int{0}
	}
	if !sort.Float64sAreSorted(times) {
		bounds := make([]int, w+1)
		for i := range bounds {
			bounds[i] = i * nt / w
		}
		return bounds
	}
	first := replay.Origin(tr.dense, times[0])
	span := max(groupMinSteps, (replay.Origin(tr.dense, times[nt-1])-first)/(groupsPerWorker*w))
	bounds, start := []int{0}, first
	for i := 1; i < nt; i++ {
		if o := replay.Origin(tr.dense, times[i]); o >= start+span {
			bounds, start = append(bounds, i), o
		}
	}
	return append(bounds, nt)
}

// groupsPerWorker is the number of groups of output times per goroutine
// that samples (sampleGroups): each begins with a restore of the replay
// (a preconditioner setup with fresh data), and the last to finish
// bounds how unevenly the goroutines end.
const groupsPerWorker = 16

// groupMinSteps is the fewest steps of the run a group of output times
// spans (sampleGroups): a restore of the merged full layer's replay sets
// its deflation up afresh, and on D = 32's run (3 732 steps, two
// goroutines) groups of 116 steps took 182 s of CPU, of 256 steps 170 s
// (one run each; 2 min 15 s and 2 min 8 s).
const groupMinSteps = 256

// sampleParallel runs fill on the groups of sampleGroups that are not
// done (skip) in w goroutines, the first on tr and each other on a fork
// of its own, and returns the first error in the order of the groups.
// One goroutine takes the groups in order, so that its replay goes on
// from one to the next; several take them one at a time, the last first:
// the replay's steps grow costlier along the run (the final approach's
// Newton–Krylov solves), so the cheap early groups are left to even out
// the goroutines' ends, where a split into w ranges of as many steps left
// one goroutine replaying alone for the last half hour of D = 64's
// sampling (merged full layer). The w goroutines take a share each of the
// run's processors (RunSettings.Workers; share.Split): sharing an
// evaluation beside the others would only add goroutines to the same
// processors. The values do not depend on which goroutine evaluates which
// group (replay.Fork). The forks' replays are added to tr.forkReplays.
func (tr *Trajectory) sampleParallel(times []float64, w int, skip func(lo, hi int) bool, fill func(on *Trajectory, lo, hi int) error) error {
	bounds := tr.sampleGroups(times, w)
	groups := len(bounds) - 1
	errs := make([]error, groups)
	run := func(on *Trajectory, g int) bool {
		if !skip(bounds[g], bounds[g+1]) {
			errs[g] = fill(on, bounds[g], bounds[g+1])
		}
		return errs[g] == nil
	}
	if w == 1 {
		for g := 0; g < groups && run(tr, g); g++ {
		}
		return firstError(errs)
	}
	procs := share.Split(tr.workers, w)
	forks := make([]*Trajectory, w)
	forks[0] = tr
	for i := 1; i < w; i++ {
		f, err := tr.fork(procs)
		if err != nil {
			return err
		}
		forks[i] = f
	}
	defer tr.shareAs(procs)()
	next := atomic.Int64{}
	next.Store(int64(groups))
	work := func(on *Trajectory) {
		for g := int(next.Add(-1)); g >= 0; g = int(next.Add(-1)) {
			if !run(on, g) {
				next.Store(-1) // the others stop after their current group
			}
		}
	}
	var wg sync.WaitGroup
	for _, f := range forks[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(f)
		}()
	}
	work(tr)
	wg.Wait()
	for _, f := range forks[1:] {
		tr.forkReplays.Add(replay.Stats(f.dense))
	}
	return firstError(errs)
}

// firstError returns the first error of errs that is not nil, or nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// replayStats returns the steps the sampling of tr's extension took again,
// its forks' included (replay.Stats).
func (tr *Trajectory) replayStats() ode.Stats {
	st := replay.Stats(tr.dense)
	st.Add(tr.forkReplays)
	st.PerMethod = nil
	return st
}
