// Package share runs the parts of a computation on several goroutines.
//
// The parts write disjoint outputs and each is computed as one goroutine
// would compute it, so the results do not depend on how many goroutines
// share the work: bit for bit the same.
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

// Workers returns the number of goroutines to share work of the given
// size among: the processors Go may use, at most MaxWorkers, where size
// is at least threshold, else one.
func Workers(size, threshold int) int {
	if size < threshold {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), MaxWorkers))
}

// MaxWorkers bounds Workers.
const MaxWorkers = 8
