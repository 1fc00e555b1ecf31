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

// sumPredictions adds the losses of the predictions of the selected
// sequences of set (batch, or all of them), the prefixes shape.first to
// shape.last of each weighted by shape.weight/n, in blocks of sequences on
// up to nw workers: begin(worker, block) readies the block's gradient
// accumulator, and term(worker, block, q, np, wt) returns one prediction's
// loss, adding its gradient there. The blocks' losses are kept in loss and
// summed in block order, so that the total does not depend on the workers;
// nb is the number of blocks.
func sumPredictions(set *rawSet, batch []int32, shape sequenceShape, nw int, loss []float64,
	begin func(worker, block int), term func(worker, block int, q *sequence, np int, wt float64) float64) (total float64, nb int) {
	sel := selection{n: set.n, batch: batch}
	n := sel.len()
	wt := shape.weight / float64(n)
	nb = numBlocks(n)
	forBlocks(nb, nw, func(k, b int) {
		begin(k, b)
		lo, hi := blockRange(b, n)
		var sum float64
		var q sequence
		for i := lo; i < hi; i++ {
			set.at(&q, sel.at(i))
			for np := shape.first; np <= shape.last; np++ {
				sum += term(k, b, &q, np, wt)
			}
		}
		loss[b] = sum
	})
	for b := range nb {
		total += loss[b]
	}
	return total, nb
}
