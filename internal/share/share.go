// Package share runs the parts of a computation on several goroutines.
//
// The parts write disjoint outputs and each is computed as one goroutine
// would compute it, so the results do not depend on how many goroutines
// share the work: bit for bit the same. How many processors a computation
// may take is the caller's to say, explicitly (Procs): a computation that
// runs beside others (the runs of a sweep, the goroutines that sample a
// run) is given its share of them (Split).
package share

import (
	"runtime"
	"sync"
)

// Ranges calls part(w, lo, hi) for w = 0 … workers−1 on consecutive
// ranges [lo, hi) that cover [0, n), each range but the last a multiple of
// align long (align ≥ 1), part 0 on the calling goroutine and the others
// on goroutines of their own, and returns when all are done. Ranges that
// would be empty are not called.
func Ranges(n, workers, align int, part func(w, lo, hi int)) {
	units := (n + align - 1) / align
	workers = max(1, min(workers, units))
	if workers == 1 {
		if n > 0 {
			part(0, 0, n)
		}
		return
	}
	bound := func(w int) int { return min(n, w*units/workers*align) }
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part(w, bound(w), bound(w+1))
		}()
	}
	part(0, 0, bound(1))
	wg.Wait()
}

// MaxWorkers bounds the goroutines that share one piece of work.
const MaxWorkers = 8

// Procs returns the processors a computation may take when its caller
// allows procs of them: procs, or for procs ≤ 0 those Go may use
// (runtime.GOMAXPROCS), at most MaxWorkers.
func Procs(procs int) int {
	if procs <= 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	return min(procs, MaxWorkers)
}

// Workers returns how many goroutines should share work of the given size
// (say, the values it reads) on procs processors (Procs): all of them
// where size is at least threshold, below which one goroutine is faster,
// else one.
func Workers(size, threshold, procs int) int {
	if size < threshold {
		return 1
	}
	return Procs(procs)
}

// Split returns the processors each of k computations that run side by
// side gets of procs (Procs): an equal share, at least one. The passes
// over memory that gain from a second processor cost more processor time
// shared, so a computation that shares beside others only slows them.
func Split(procs, k int) int { return max(1, Procs(procs)/max(1, k)) }
