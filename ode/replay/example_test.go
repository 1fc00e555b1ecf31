package replay_test

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/ode/odetest"
	"github.com/linattn/linattn/ode/replay"
)

// Two goroutines evaluate a thinned ROCK4 extension of the Brusselator
// (HNW II, IV.10), each the times of its own replays, one on the Solution
// and one on a fork: they give the states the solve computed at those
// times (Result.YEval), bit for bit, and the fork takes steps again.
func Example() {
	p := odetest.Brusselator(20).Problem
	times := make([]float64, 101)
	for i := range times {
		times[i] = p.T1 * float64(i) / 100
	}
	s := ode.Settings{Method: ode.ROCK4, RTol: 1e-8, ATol: 1e-10, TEval: times, Dense: true, DenseLimit: 2000}
	res, err := ode.Solve(context.Background(), p, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	sol := res.Solution
	fork := replay.Fork(sol, p, 1) // Brusselator's Func keeps no state: a copy of itself
	// Number the origins of the replays in time order; the goroutines
	// take the odd and the even ones.
	group, last := make([]int, len(times)), -1
	for i, t := range times {
		if i > 0 {
			group[i] = group[i-1]
		}
		if o := replay.Origin(sol, t); o != last {
			group[i], last = group[i]+1, o
		}
	}
	n := len(p.Y0)
	same := [2]bool{true, true}
	var wg sync.WaitGroup
	for w, on := range []*ode.Solution{sol, fork} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			y := make([]float64, n)
			for i, t := range times {
				if group[i]%2 != w {
					continue // the other goroutine's
				}
				on.At(y, t)
				for c := range y {
					same[w] = same[w] && math.Float64bits(y[c]) == math.Float64bits(res.YEval[i*n+c])
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println("thinned:", replay.Thinned(sol))
	fmt.Println("the solve's values:", same[0] && same[1])
	fmt.Println("the fork replayed steps:", replay.Stats(fork).Steps > 0)
	// Output:
	// thinned: true
	// the solve's values: true
	// the fork replayed steps: true
}
