package ode

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// TestBlockSourceStops: a dense solve long enough to fill full-size blocks
// starts the goroutine that makes them ahead, and ends it when it returns,
// whether it kept the solution or dropped it at DenseLimit.
func TestBlockSourceStops(t *testing.T) {
	const n = 400
	f := func(_ float64, y, dy []float64) {
		for i := range y {
			dy[i] = -float64(i%7+1) * y[i]
		}
	}
	y0 := make([]float64, n)
	for i := range y0 {
		y0[i] = 1
	}
	p := Problem{Func: f, T0: 0, T1: 10, Y0: y0}
	before := runtime.NumGoroutine()
	for _, lim := range []int{0, 3 * solutionBlockMax} {
		// DP5's steps cannot be thinned: at the limit the solution goes.
		res, err := Solve(context.Background(), p, Settings{Method: DP5, MaxStep: 0.005, Dense: true, DenseLimit: lim})
		if err != nil {
			t.Fatal(err)
		}
		if lim == 0 && (res.Solution == nil || res.Solution.size < 2*solutionBlockMax) {
			t.Fatalf("the solve stored too little to use full-size blocks")
		}
		if lim > 0 && res.Solution != nil {
			t.Errorf("DenseLimit %d: solution kept (%d values)", lim, res.Solution.size)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines after the solves, %d before", g, before)
	}
}

// TestThinnedSolution: with a DenseLimit a fraction of what the ROCK4 steps
// would store, the Solution thins them and replays the dropped ones, and
// gives, bit for bit, what the solve interpolated at TEval, in any order of
// the queries. Auto mixes DOP853 steps (always kept) into the runs of ROCK4
// steps.
func TestThinnedSolution(t *testing.T) {
	const n = 60
	lam := make([]float64, n) // y' = −λ_i y + sin(y_{i+1}): stiff, coupled, nonlinear
	for i := range lam {
		lam[i] = 1 + 2e4*float64(i*i)/float64(n*n)
	}
	f := func(_ float64, y, dy []float64) {
		for i := range y {
			dy[i] = -lam[i] * y[i]
			if i+1 < n {
				dy[i] += math.Sin(y[i+1])
			}
		}
	}
	y0 := make([]float64, n)
	for i := range y0 {
		y0[i] = 1 / float64(i+1)
	}
	p := Problem{Func: f, T0: 0, T1: 3, Y0: y0}
	teval := make([]float64, 301)
	for i := range teval {
		teval[i] = p.T1 * float64(i) / float64(len(teval)-1)
	}
	for _, m := range []Method{ROCK4, Auto} {
		full, err := Solve(context.Background(), p, Settings{Method: m, RTol: 1e-9, ATol: 1e-12, MaxStep: 0.005, TEval: teval, Dense: true})
		if err != nil {
			t.Fatal(err)
		}
		// An eighth of the ROCK4 steps' values, and all of the others.
		st := full.Stats.PerMethod
		rock4Values := st[len(st)-1].Steps * n
		limit := full.Solution.size - rock4Values + rock4Values/8
		res, err := Solve(context.Background(), p, Settings{Method: m, RTol: 1e-9, ATol: 1e-12, MaxStep: 0.005, TEval: teval, Dense: true, DenseLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		sol := res.Solution
		if sol == nil || sol.spacing < 8 || sol.size > limit {
			t.Fatalf("%s: solution %v: want it thinned to spacing ≥ 8 within %d values", m.Name(), sol != nil, limit)
		}
		y := make([]float64, n)
		for _, i := range rand.New(rand.NewPCG(1, 1)).Perm(len(teval)) {
			if _, err := sol.At(y, teval[i]); err != nil {
				t.Fatal(err)
			}
			for c := range y {
				if want := res.YEval[i*n+c]; math.Float64bits(y[c]) != math.Float64bits(want) {
					t.Fatalf("%s: At(%g)[%d] = %v, TEval %v", m.Name(), teval[i], c, y[c], want)
				}
			}
		}
		t.Logf("%s: %d steps, spacing %d, %d of %d values kept", m.Name(), sol.Steps(), sol.spacing, sol.size, full.Solution.size)
	}
}

// TestThinMixedBlockSizes: a step longer than solutionBlockMax (DOP853's
// nine vectors of a large state) has a block of its own, larger than those
// after it; thinning must move the kept steps past blocks too small for
// them. Steps are stored directly, with a state of n = 15000.
func TestThinMixedBlockSizes(t *testing.T) {
	const n = 15000
	s := newSolution(n, 1, func(_ float64, y, dy []float64) { copy(dy, y) })
	defer s.endSolve()
	vec := func(c float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = c
		}
		return v
	}
	rk := make([][]float64, 7)
	for i := range rk {
		rk[i] = vec(0)
	}
	tt := 0.0
	addRK := func() {
		s.add(tt, 1, tt+1, vec(tt), vec(tt), vec(tt+1), rk)
		tt++
	}
	addRK()
	for i := 0; i < 20; i++ {
		s.addHermite(tt, 1, tt+1, 1, 1, vec(tt), vec(tt+1))
		tt++
	}
	addRK()
	if !s.thin(s.size - 4*n) {
		t.Fatal("thin: could not thin the Hermite steps")
	}
	y := make([]float64, n)
	for _, k := range []int{0, 21} { // the RK steps keep their values
		if _, err := s.At(y, float64(k)); err != nil || y[0] != float64(k) {
			t.Errorf("At(%d) = %v, %v after thinning", k, y[0], err)
		}
	}
}

// TestThinRandomLayouts stores random sequences of steps (explicit steps of
// 3–7 vectors, of sizes below and above solutionBlockMax, and runs of
// Hermite steps), thins them to shrinking limits while more steps arrive,
// as a long solve does, and checks after every compaction that each step
// that keeps its values still reads them: y (and the vectors) equal to the
// step's start time, which is what was stored.
func TestThinRandomLayouts(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		n := 500 + rng.IntN(20000)
		s := newSolution(n, 1, func(_ float64, y, dy []float64) { copy(dy, y) })
		vec := func(c float64) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = c
			}
			return v
		}
		tt := 0.0
		for round := 0; round < 4; round++ {
			for i := 0; i < 60; i++ {
				if rng.IntN(4) == 0 {
					rk := make([][]float64, 3+rng.IntN(5))
					for j := range rk {
						rk[j] = vec(tt)
					}
					s.add(tt, 1, tt+1, vec(tt), vec(tt), vec(tt+1), rk)
				} else {
					s.addHermite(tt, 1, tt+1, 1, 1, vec(tt), vec(tt+1))
				}
				tt++
			}
			s.thin(s.size * (2 + rng.IntN(2)) / 4)
			for k, l := range s.loc {
				if l.vecs == hermiteBare {
					continue
				}
				want := s.t0[k]
				length := n
				if l.vecs >= 0 {
					length = n * (2 + int(l.vecs))
				}
				data := s.values(k)
				if len(data) < length {
					t.Fatalf("seed %d, round %d: step %d reads %d values, stored %d", seed, round, k, len(data), length)
				}
				for _, i := range []int{0, length - 1} {
					if data[i] != want {
						t.Fatalf("seed %d, round %d: step %d value %d = %v, want %v", seed, round, k, i, data[i], want)
					}
				}
			}
		}
		s.endSolve()
	}
}

// TestSolutionNeedsPureFunc shows what the Func contract protects: the
// Solution of a ROCK4 solve evaluates f again at its Hermite steps, so when
// f changes after Solve returns (here its rate k), At no longer gives what
// the solve interpolated at TEval; with f unchanged it does, bit for bit.
func TestSolutionNeedsPureFunc(t *testing.T) {
	t.Parallel()
	k := 1.0
	f := func(_ float64, y, dy []float64) {
		for i := range y {
			dy[i] = -k * float64(i+1) * y[i]
		}
	}
	p := Problem{Func: f, T1: 2, Y0: []float64{1, 1, 1}}
	res, err := Solve(context.Background(), p, Settings{Method: ROCK4, TEval: []float64{0.7}, Dense: true})
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, 3)
	differs := func() bool {
		res.Solution.At(y, 0.7)
		for i := range y {
			if y[i] != res.YEval[i] {
				return true
			}
		}
		return false
	}
	if differs() {
		t.Fatalf("pure f: At(0.7) = %v, the solve gave %v", y, res.YEval)
	}
	k = 2                   // violates the contract
	res.Solution.At(y, 1.9) // leave the step At cached f for
	if !differs() {
		t.Errorf("f changed after the solve, and At(0.7) still equals the solve's value: the Solution does not call f again?")
	}
}
