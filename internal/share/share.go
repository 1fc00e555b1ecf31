// Package share runs the parts of a computation on several goroutines.
//
// The parts write disjoint outputs and each is computed as one goroutine
// would compute it, so the results do not depend on how many goroutines
// share the work: bit for bit the same.
package share

import (
	"runtime"
	"sync"
	"sync/atomic"
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

// Workers returns the most goroutines that should share work of the
// given size (say, the values it reads): the processors Go may use, at
// most MaxWorkers, where size is at least threshold, else one. Free
// gives how many of them to use at the moment.
func Workers(size, threshold int) int {
	if size < threshold {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), MaxWorkers))
}

// MaxWorkers bounds Workers.
const MaxWorkers = 8

// busy counts the goroutines marked Busy.
var busy atomic.Int64

// Busy marks the calling goroutine as one of several that each keep a
// processor busy (the forks that sample a run, the workers of a sweep)
// until the returned function is called: while k of them run, Free leaves
// the other k − 1 processors to them. Sharing beside them would only add
// goroutines to the same processors, and the passes over memory that
// gain from a second processor cost more processor time shared.
func Busy() (done func()) {
	busy.Add(1)
	var once sync.Once
	return func() { once.Do(func() { busy.Add(-1) }) }
}

// Free returns how many of at most w goroutines to share work among now:
// w, or the processors Go may use less those that the other goroutines
// marked Busy keep, at least one.
func Free(w int) int {
	others := max(0, int(busy.Load())-1)
	return max(1, min(w, runtime.GOMAXPROCS(0)-others))
}
