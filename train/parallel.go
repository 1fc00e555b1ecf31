package train

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// blockSize is the number of sequences of a block. Sums over sequences are
// taken block by block, each block's sequentially, and the block sums are
// added in block order, so results do not depend on the number of
// goroutines.
const blockSize = 256

// numBlocks returns the number of blocks of n sequences.
func numBlocks(n int) int { return (n + blockSize - 1) / blockSize }

// blockRange returns the sequences [lo, hi) of block b of n.
func blockRange(b, n int) (lo, hi int) { return b * blockSize, min((b+1)*blockSize, n) }

// workers returns the number of goroutines to use: GOMAXPROCS.
func workers() int { return max(1, runtime.GOMAXPROCS(0)) }

// forBlocks calls fn(worker, block) for every block 0..nb−1, on up to nw
// goroutines; worker ∈ [0, nw) indexes per-goroutine scratch. fn must write
// its results to per-block storage.
func forBlocks(nb, nw int, fn func(worker, block int)) {
	nw = min(nw, nb)
	if nw <= 1 {
		for b := 0; b < nb; b++ {
			fn(0, b)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < nw; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1)) - 1
				if b >= nb {
					return
				}
				fn(w, b)
			}
		}()
	}
	wg.Wait()
}

// forBlocksOrdered calls compute(worker, block) for every block on up to nw
// goroutines, nw blocks at a time, and after each such wave reduce(worker,
// block) for its blocks in block order: memory for nw partial results
// instead of nb.
func forBlocksOrdered(nb, nw int, compute, reduce func(worker, block int)) {
	nw = max(1, min(nw, nb))
	for b0 := 0; b0 < nb; b0 += nw {
		n := min(nw, nb-b0)
		forBlocks(n, n, func(w, k int) { compute(k, b0+k) })
		for k := 0; k < n; k++ {
			reduce(k, b0+k)
		}
	}
}
