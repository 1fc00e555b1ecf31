package ode

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// stiffChain is y' = −λ_i y_i + sin(y_{i+1}) + a·sin(ωt)·[i = 0], λ_i
// from 1 to 2·10⁴: stiff, coupled, nonlinear, and forced so that a long
// solve keeps changing its steps and order.
func stiffChain(n int, t1 float64) (Problem, []float64) {
	lam := make([]float64, n)
	for i := range lam {
		lam[i] = 1 + 2e4*float64(i*i)/float64(n*n)
	}
	f := func(t float64, y, dy []float64) {
		for i := range y {
			dy[i] = -lam[i] * y[i]
			if i+1 < n {
				dy[i] += math.Sin(y[i+1])
			}
		}
		dy[0] += 0.5 * math.Sin(3*t)
	}
	y0 := make([]float64, n)
	for i := range y0 {
		y0[i] = 1 / float64(i+1)
	}
	return Problem{Func: f, T0: 0, T1: t1, Y0: y0}, lam
}

// jacobiPrecond is P = diag(1 + γλ_i), the diagonal of I − γJ of
// stiffChain: a preconditioner whose setup with jacOK keeps its data
// (λ, and the state of the fresh setup, which it does not need) and takes
// the new γ only, as Preconditioner allows.
type jacobiPrecond struct {
	lam   []float64
	gamma float64
	fresh int
}

func (p *jacobiPrecond) Setup(_ float64, _ []float64, gamma float64, jacOK bool) (bool, error) {
	p.gamma = gamma
	if !jacOK || p.fresh == 0 {
		p.fresh++
		return true, nil
	}
	return false, nil
}

func (p *jacobiPrecond) Solve(z, r []float64) {
	for i, x := range r {
		z[i] = x / (1 + p.gamma*p.lam[i])
	}
}

// statePrecond is P = diag(1 + γλ_i(1 + cos(y_i)/100)), y the state of
// its last fresh setup: an approximation of I − γJ for stiffChain whose
// data depend on the state, so that a replay set up from the wrong fresh
// setup would not give the solve's bits.
type statePrecond struct {
	lam, scale []float64
	gamma      float64
	fresh      int
}

func (p *statePrecond) Setup(_ float64, y []float64, gamma float64, jacOK bool) (bool, error) {
	p.gamma = gamma
	if jacOK && p.scale != nil {
		return false, nil
	}
	p.fresh++
	p.scale = make([]float64, len(y))
	for i, yi := range y {
		p.scale[i] = p.lam[i] * (1 + math.Cos(yi)/100)
	}
	return true, nil
}

func (p *statePrecond) Solve(z, r []float64) {
	for i, x := range r {
		z[i] = x / (1 + p.gamma*p.scale[i])
	}
}

// bdfSolutionCases are BDF solves of stiffChain with the dense LU of
// finite-difference Jacobians (modified Newton) and with GMRES and a
// preconditioner, at TEval times that fall inside steps.
func bdfSolutionCases(t1 float64) map[string]Problem {
	lu, lam := stiffChain(60, t1)
	kr, _ := stiffChain(60, t1)
	kr.Precond = &jacobiPrecond{lam: lam}
	ks, _ := stiffChain(60, t1)
	ks.Precond = &statePrecond{lam: lam}
	return map[string]Problem{"dense LU": lu, "GMRES": kr, "GMRES, state-dependent P": ks}
}

// TestBDFSolutionEqualsTEval: a BDF solve's Solution gives, bit for bit,
// what the solve interpolated at TEval and the states it accepted at the
// steps' ends, in any order of the queries: with every knot kept (the
// Nordsieck arrays at the steps' ends), and thinned to DenseLimit, where
// At takes the dropped steps again from the kept knots (replay), with their
// rejected attempts, order changes and preconditioner setups.
func TestBDFSolutionEqualsTEval(t *testing.T) {
	for name, p := range bdfSolutionCases(3) {
		teval := make([]float64, 401)
		for i := range teval {
			teval[i] = p.T1 * math.Pow(float64(i)/float64(len(teval)-1), 2) // dense near the start, where the steps are short
		}
		var stepT, stepY []float64
		s := Settings{Method: BDF, RTol: 1e-8, ATol: 1e-10, TEval: teval, Dense: true,
			Observer: func(st *Step) error {
				stepT, stepY = append(stepT, st.T1), append(stepY, st.Y1...)
				return nil
			}}
		full, err := Solve(context.Background(), p, s)
		if err != nil {
			t.Fatal(err)
		}
		if full.Stats.Rejected == 0 {
			t.Errorf("%s: no rejected step: the replay of rejections is not tested", name)
		}
		sol := full.Solution
		if sol.bdf.spacing != 1 || len(sol.bdf.knots) != sol.Steps()+1 {
			t.Fatalf("%s: spacing %d, %d knots for %d steps; want every one kept", name, sol.bdf.spacing, len(sol.bdf.knots), sol.Steps())
		}
		checkAt(t, name+", all knots", sol, teval, full.YEval, stepT, stepY)
		if rs := sol.replayStats(); rs.Steps != 0 || rs.FuncEvals != 0 {
			t.Errorf("%s, all knots: replayed %+v, want nothing", name, rs)
		}
		stepT, stepY = stepT[:0], stepY[:0]
		s.DenseLimit = sol.size / 10
		res, err := Solve(context.Background(), p, s)
		if err != nil {
			t.Fatal(err)
		}
		if res.Solution == nil || res.Solution.bdf.spacing < 8 || res.Solution.size > s.DenseLimit {
			t.Fatalf("%s: solution %v: want it thinned to spacing ≥ 8 within %d values", name, res.Solution != nil, s.DenseLimit)
		}
		checkAt(t, name+", thinned", res.Solution, teval, res.YEval, stepT, stepY)
		if sp, ok := p.Precond.(*statePrecond); ok {
			checkHeldSetups(t, p, s, sp)
		}
		if rs := res.Solution.replayStats(); rs.Steps == 0 || rs.FuncEvals < rs.Steps || rs.Decompositions == 0 {
			t.Errorf("%s, thinned: replayed %+v, want steps, their evaluations and setups", name, rs)
		}
		t.Logf("%s: krylov %d jacs %d; %d steps (%d rejected), spacing %d, %d knots, %d setups, %d of %d values kept", name, full.Stats.KrylovIters, full.Stats.JacEvals, sol.Steps(), full.Stats.Rejected,
			res.Solution.bdf.spacing, len(res.Solution.bdf.knots), len(res.Solution.bdf.setups), res.Solution.size, sol.size)
	}
}

// checkHeldSetups: sampling a thinned BDF solve in increasing time, as a
// run samples its grid, sets the preconditioner up with fresh data at
// most as often as the solve did: a restore at a knot whose fresh setup
// the preconditioner holds from the replay takes γ alone (bdfReplayer.held).
func checkHeldSetups(t *testing.T, p Problem, s Settings, sp *statePrecond) {
	res, err := Solve(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, len(p.Y0))
	before := sp.fresh
	for _, tt := range s.TEval {
		if _, err := res.Solution.At(y, tt); err != nil {
			t.Fatal(err)
		}
	}
	replay := sp.fresh - before
	t.Logf("in increasing time: %d fresh setups in the replay, %d in the solve", replay, res.Stats.JacEvals)
	if replay > res.Stats.JacEvals {
		t.Errorf("%d fresh setups in the replay, more than the solve's %d", replay, res.Stats.JacEvals)
	}
}

// checkAt compares sol.At at teval (in random order) with yeval, and at
// the steps' ends stepT with stepY, bit for bit.
func checkAt(t *testing.T, name string, sol *Solution, teval, yeval, stepT, stepY []float64) {
	t.Helper()
	n := sol.n
	y := make([]float64, n)
	same := func(what string, tt float64, want []float64) {
		t.Helper()
		if _, err := sol.At(y, tt); err != nil {
			t.Fatal(err)
		}
		for c := range y {
			if math.Float64bits(y[c]) != math.Float64bits(want[c]) {
				t.Fatalf("%s: At(%v)[%d] = %v, %s %v", name, tt, c, y[c], what, want[c])
			}
		}
	}
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(len(teval)) {
		same("TEval", teval[i], yeval[i*n:(i+1)*n])
	}
	for _, i := range rand.New(rand.NewPCG(3, 4)).Perm(len(stepT)) {
		same("the step's end", stepT[i], stepY[i*n:(i+1)*n])
	}
}

// TestBDFSolutionBounded: on a long solve (thousands of steps) the kept
// knots and setups stay within DenseLimit whatever the number of steps,
// and the thinned Solution still gives the solve's values.
func TestBDFSolutionBounded(t *testing.T) {
	p := bdfSolutionCases(300)["GMRES"]
	const limit = 40 * 60 * 7 // about 40 knots of order 5
	teval := []float64{0.5, 17.25, 150, 299.9}
	var steps int
	res, err := Solve(context.Background(), p, Settings{Method: BDF, RTol: 1e-8, ATol: 1e-10, MaxStep: 0.05, TEval: teval,
		Dense: true, DenseLimit: limit, Observer: func(*Step) error { steps++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	sol := res.Solution
	if sol == nil || steps < 5000 || sol.size > limit || len(sol.bdf.knots) > 40 {
		t.Fatalf("%d steps: solution %v, want %d knots at most, within %d values", steps, sol != nil, 40, limit)
	}
	checkAt(t, "long", sol, teval, res.YEval, nil, nil)
	t.Logf("%d steps, spacing %d, %d knots, %d setups, %d values", steps, sol.bdf.spacing, len(sol.bdf.knots), len(sol.bdf.setups), sol.size)
}

// TestSolutionFork: forks of a thinned Solution, each with its own copy of
// the problem (its own preconditioner), evaluated in goroutines of their
// own beside the original, each at every fourth output time so that all
// replay across the whole solve, give the solve's values bit for bit:
// BDF's steps (dense LU, GMRES, a state-dependent preconditioner) and
// ROCK4's Hermite steps. go test -race checks that they share nothing
// they write.
func TestSolutionFork(t *testing.T) {
	teval := make([]float64, 401)
	for i := range teval {
		teval[i] = 3 * math.Pow(float64(i)/float64(len(teval)-1), 2)
	}
	for name := range bdfSolutionCases(3) {
		p := bdfSolutionCases(3)[name]
		s := Settings{Method: BDF, RTol: 1e-8, ATol: 1e-10, TEval: teval, Dense: true}
		checkForks(t, name, p, s, func() Problem { return bdfSolutionCases(3)[name] })
	}
	p, _ := stiffChain(60, 3)
	s := Settings{Method: ROCK4, RTol: 1e-9, ATol: 1e-12, MaxStep: 0.005, TEval: teval, Dense: true}
	checkForks(t, "ROCK4", p, s, func() Problem { return p })
}

// checkForks solves p with s thinned to a tenth of its values and checks
// three forks (of problems from copy) and the Solution itself, run
// concurrently, against the solve's values at s.TEval.
func checkForks(t *testing.T, name string, p Problem, s Settings, copy func() Problem) {
	t.Helper()
	full, err := Solve(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	s.DenseLimit = full.Solution.size / 10
	res, err := Solve(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	sol, n := res.Solution, len(p.Y0)
	checkreplayOrigins(t, name, sol, s.TEval)
	all := []*Solution{sol}
	for range 3 {
		all = append(all, sol.fork(copy(), 1))
	}
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for w, f := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			y := make([]float64, n)
			for i := w; i < len(s.TEval); i += len(all) {
				if _, err := f.At(y, s.TEval[i]); err != nil {
					errs[w] = err
					return
				}
				for c := range y {
					if want := res.YEval[i*n+c]; math.Float64bits(y[c]) != math.Float64bits(want) {
						errs[w] = fmt.Errorf("At(%v)[%d] = %v, TEval %v", s.TEval[i], c, y[c], want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("%s, fork %d: %v", name, w, err)
		}
		if rs := all[w].replayStats(); rs.Steps == 0 {
			t.Errorf("%s, fork %d: took no step again: the replay is not tested", name, w)
		}
	}
}

// checkreplayOrigins checks that replayOrigin at each of times is the last
// step at or before t's step whose start sol keeps (a BDF knot, a Hermite
// step's y or a step stored whole), and that sol thinned some.
func checkreplayOrigins(t *testing.T, name string, sol *Solution, times []float64) {
	t.Helper()
	kept := func(k int) bool {
		if sol.bdf != nil {
			return sol.bdf.knotAt(k) != nil
		}
		return sol.loc[k].vecs != hermiteBare
	}
	replays := 0
	for _, tt := range times {
		k, o := sol.stepOf(tt), sol.replayOrigin(tt)
		if o < 0 || o > k || !kept(o) {
			t.Fatalf("%s: replayOrigin(%g) = %d with t in step %d: want a kept start at or before it", name, tt, o, k)
		}
		for j := o + 1; j <= k; j++ {
			if kept(j) {
				t.Fatalf("%s: replayOrigin(%g) = %d, but step %d ≤ %d is kept", name, tt, o, j, k)
			}
		}
		if o < k {
			replays++
		}
	}
	if replays == 0 {
		t.Errorf("%s: no time replays from an earlier step: replayOrigin is not tested", name)
	}
}
