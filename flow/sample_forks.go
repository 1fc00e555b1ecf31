package flow

import (
	"runtime"
	"sort"
	"sync"

	"github.com/linattn/linattn/ode"
)

// maxSampleWorkers bounds the goroutines that sample a thinned continuous
// extension (Trajectory.sample): each beyond the first holds a System, a
// preconditioner and an integrator of its own (RunMemory.Forks).
const maxSampleWorkers = 4

// minSamplesPerWorker is the least number of output times that make a
// fork worth its set-up (a System and a preconditioner).
const minSamplesPerWorker = 16

// samplingWorkers returns how many goroutines sample a run's thinned
// continuous extension at nt output times: the processors Go may use
// (runtime.GOMAXPROCS), at most maxSampleWorkers and one per
// minSamplesPerWorker times.
func samplingWorkers(nt int) int {
	return max(1, min(runtime.GOMAXPROCS(0), maxSampleWorkers, nt/minSamplesPerWorker))
}

// sampleWorkers is samplingWorkers where the extension takes steps again
// (ode.Solution.Thinned) and belongs to a System's run, else 1.
func (tr *Trajectory) sampleWorkers(nt int) int {
	if tr.sys == nil || tr.dense == nil || !tr.dense.Thinned() {
		return 1
	}
	return samplingWorkers(nt)
}

// fork returns a Trajectory of tr's run that evaluates its extension in
// another goroutine: a copy of the System (clone), its functions and a
// preconditioner of the run's kind, and a fork of the extension
// (ode.Solution.Fork), whose values are tr's bit for bit.
func (tr *Trajectory) fork() (*Trajectory, error) {
	s, err := tr.sys.clone()
	if err != nil {
		return nil, err
	}
	prob := ode.Problem{Func: s.Func(), Jac: s.Jac(), Precond: s.forkPreconditioner(tr.precond)}
	return &Trajectory{sys: s, dense: tr.dense.Fork(prob), pad: tr.pad}, nil
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

// sampleChunks splits the output times into w contiguous ranges
// bounds[i]…bounds[i+1] that cover about as many steps of the extension
// each (the work of a replay is its steps), for times in increasing
// order; otherwise into ranges of as many times.
func (tr *Trajectory) sampleChunks(times []float64, w int) []int {
	nt := len(times)
	bounds := make([]int, w+1)
	bounds[w] = nt
	if !sort.Float64sAreSorted(times) {
		for i := 1; i < w; i++ {
			bounds[i] = i * nt / w
		}
		return bounds
	}
	k0, k1 := tr.dense.StepOf(times[0]), tr.dense.StepOf(times[nt-1])
	for i := 1; i < w; i++ {
		k := k0 + i*(k1-k0)/w
		b := sort.Search(nt, func(j int) bool { return tr.dense.StepOf(times[j]) >= k })
		bounds[i] = max(bounds[i-1], b)
	}
	return bounds
}

// sampleParallel runs fill on the ranges of sampleChunks, the first on tr
// and each other on a fork of its own, in goroutines of their own, and
// returns the first error in the order of the ranges. The forks' replays
// are added to tr.forkReplays.
func (tr *Trajectory) sampleParallel(times []float64, w int, fill func(on *Trajectory, lo, hi int) error) error {
	bounds := tr.sampleChunks(times, w)
	forks := make([]*Trajectory, w)
	forks[0] = tr
	for i := 1; i < w; i++ {
		f, err := tr.fork()
		if err != nil {
			return err
		}
		forks[i] = f
	}
	errs := make([]error, w)
	var wg sync.WaitGroup
	for i := 1; i < w; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fill(forks[i], bounds[i], bounds[i+1])
		}()
	}
	errs[0] = fill(tr, bounds[0], bounds[1])
	wg.Wait()
	for _, f := range forks[1:] {
		tr.forkReplays.Add(f.dense.ReplayStats())
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// replayStats returns the steps the sampling of tr's extension took again,
// its forks' included (ode.Solution.ReplayStats).
func (tr *Trajectory) replayStats() ode.Stats {
	st := tr.dense.ReplayStats()
	st.Add(tr.forkReplays)
	st.PerMethod = nil
	return st
}
