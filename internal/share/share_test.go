package share

import (
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
