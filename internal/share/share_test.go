package share

import (
	"runtime"
	"sync"
	"testing"
)

// TestRanges checks that the ranges cover [0, n) once, in order, each
// but the last a multiple of align, for every worker count.
func TestRanges(t *testing.T) {
	for _, n := range []int{0, 1, 7, 64, 65, 1000} {
		for _, align := range []int{1, 4, 16} {
			for workers := 1; workers <= 5; workers++ {
				var mu sync.Mutex
				seen := make([]int, n)
				got := map[int][2]int{}
				Ranges(n, workers, align, func(w, lo, hi int) {
					mu.Lock()
					defer mu.Unlock()
					if lo >= hi {
						t.Errorf("n %d align %d workers %d: empty range %d [%d, %d)", n, align, workers, w, lo, hi)
					}
					got[w] = [2]int{lo, hi}
					for i := lo; i < hi; i++ {
						seen[i]++
					}
				})
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("n %d align %d workers %d: index %d covered %d times", n, align, workers, i, c)
					}
				}
				for w := 0; w < len(got); w++ {
					r, ok := got[w]
					if !ok || (w > 0 && r[0] != got[w-1][1]) || (r[1] != n && (r[1]-r[0])%align != 0) {
						t.Errorf("n %d align %d workers %d: ranges %v", n, align, workers, got)
						break
					}
				}
			}
		}
	}
}

// TestProcs checks the processors a computation takes: those Go may use
// for 0, at most MaxWorkers, what its caller allows otherwise; its share
// beside k − 1 others; and Workers's one goroutine below the threshold.
func TestProcs(t *testing.T) {
	all := min(runtime.GOMAXPROCS(0), MaxWorkers)
	for i, c := range []struct{ got, want int }{
		{Procs(0), all}, {Procs(-1), all}, {Procs(1), 1}, {Procs(3), 3}, {Procs(100), MaxWorkers},
		{Split(4, 2), 2}, {Split(3, 2), 1}, {Split(2, 3), 1}, {Split(8, 1), 8}, {Split(0, 1), all}, {Split(5, 0), 5},
		{Workers(99, 100, 4), 1}, {Workers(100, 100, 4), 4}, {Workers(100, 100, 0), all},
		{GemvWorkers(1, gemvMin-1, 4), 1}, {GemvWorkers(2, gemvMin/2, 4), 4},
	} {
		if c.got != c.want {
			t.Errorf("case %d: got %d, want %d", i, c.got, c.want)
		}
	}
}
