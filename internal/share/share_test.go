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

// TestFree checks that goroutines marked Busy leave Free the processors
// the others do not keep.
func TestFree(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if got := Free(64); got != procs {
		t.Fatalf("nothing busy: Free(64) = %d, want GOMAXPROCS = %d", got, procs)
	}
	if got := Free(1); got != 1 {
		t.Fatalf("Free(1) = %d, want 1", got)
	}
	a := Busy()
	if got := Free(64); got != procs {
		t.Errorf("one busy goroutine: Free(64) = %d, want %d (its own processors)", got, procs)
	}
	b := Busy()
	if got, want := Free(64), max(1, procs-1); got != want {
		t.Errorf("two busy goroutines: Free(64) = %d, want %d", got, want)
	}
	b()
	b() // a second call changes nothing
	if got := Free(64); got != procs {
		t.Errorf("one left busy: Free(64) = %d, want %d", got, procs)
	}
	a()
}
