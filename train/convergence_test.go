package train

import (
	"context"
	"flag"
	"math"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
)

// flowExample is a problem with its population flow run from the paper's
// initialization until converged.
type flowExample struct {
	name  string
	data  *law.Data
	sys   *flow.System
	y0    []float64
	model Model
	lr    float64
	run   *flow.Trajectory
	// plateaus are the flow's observed plateau levels.
	plateaus []float64
}

func newFlowExample(t *testing.T, name string, eigs []float64, kind flow.Kind, h int, lr float64) *flowExample {
	t.Helper()
	nu, _ := law.NuFixed(31)
	data, err := law.NewData(eigs, law.RandomRotation(len(eigs), 1), law.Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	m := Model{Model: flow.Model{Kind: kind, H: h, Layer: flow.ReducedLayer, Tau: 1}, D: len(eigs)}
	if kind == flow.Separate {
		m.R = 1
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: kind, H: h, R: m.R, Tau: 1})
	if err != nil {
		t.Fatal(err)
	}
	y0, _ := s.Init(0.01, 3)
	run, err := s.Run(context.Background(), y0, flow.RunSettings{})
	if err != nil {
		t.Fatal(err)
	}
	ex := &flowExample{name: name, data: data, sys: s, y0: y0, model: m, lr: lr, run: run}
	// The flow's plateau levels read off a fine grid, as the training run's.
	grid := flow.LinearGrid(run.FinalT, 20001)
	sampled, err := s.Run(context.Background(), y0, flow.RunSettings{T: run.FinalT, Times: grid})
	if err != nil {
		t.Fatal(err)
	}
	ex.plateaus = flow.ObservedPlateaus(grid, sampled.Loss, sampled.Transitions, run.FinalT)
	return ex
}

// gdErrors runs full-batch gradient descent on P sequences of data seed
// seed to 1.3 times the flow's convergence time, and returns the relative
// errors of its drop times and of its observed plateau levels against the
// flow's (the flow's own levels read off the same way).
func (ex *flowExample) gdErrors(t *testing.T, p int, seed uint64) (drops, plateaus []float64) {
	t.Helper()
	tr := newTrainer(t, Config{Model: ex.model, Data: withLaw(t, ex.data, law.Lengths{N: 31}, 1, 1), P: p, Seed: seed, Path: MomentsPath})
	T := 1.3 * ex.run.FinalT
	steps := int(T / tr.Time(ex.lr, 1))
	res, err := tr.GD(context.Background(), ex.y0, everyStep(ex.lr, steps, ex.sys.Levels()))
	if err != nil {
		t.Fatal(err)
	}
	got := res.Transitions
	if len(got) != len(ex.run.Transitions) {
		t.Fatalf("%s, P = %d, seed %d: %d drops, the flow %d", ex.name, p, seed, len(got), len(ex.run.Transitions))
	}
	for i, tn := range ex.run.Transitions {
		drops = append(drops, (got[i].T-tn.T)/tn.T)
	}
	obs := flow.ObservedPlateaus(res.Times, res.Loss, got, res.FinalT)
	for i, want := range ex.plateaus {
		plateaus = append(plateaus, (obs[i]-want)/want)
	}
	return drops, plateaus
}

// everyStep is gradient descent sampled at every step, with the drops of
// levels.
func everyStep(lr float64, steps int, levels []flow.Transition) GDSettings {
	return GDSettings{LR: lr, Steps: steps, Grid: flow.GridLinear, Samples: steps + 1, Levels: levels}
}

func meanAbs(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += math.Abs(v)
	}
	return s / float64(len(x))
}

// TestGDApproachesPopulationFlow is the paper's claim that training on
// finitely many sequences follows the population flow: full-batch gradient
// descent on the exact fast path, from the flow's initial state, at a
// learning rate whose own error is below 1% (checked on the population
// moments, P = ∞), for four data seeds at P = 2·10⁴ and 2·10⁵.
//
// The drop times of one data set scatter around the flow's: measured, at
// P = 2·10⁵ the separate model's drops are off by 0.1–6.5% (one seed's
// second drop), the merged model's by 0.1–1.2%; at P = 2·10⁴ by up to 46%
// and 4%. So the assertions are on the mean over seeds: at P = 2·10⁵ drop
// times within 5% and plateau levels within 1%, and both errors smaller by
// a factor 1.5 at least than at P = 2·10⁴ (their sampling error scales as
// P^{−1/2}, a factor 3.2, but a mean over four seeds is itself uncertain
// by a third; measured factors: 2.3 to 6.8). The separate example has three eigenvalues 0.5, 0.3,
// 0.2; in the paper's D = 4 example the third and fourth drops follow each
// other closely and scatter by ±45% at P = 2·10⁵ (±4% at 2·10⁶), which
// docs/training.md reports.
func TestGDApproachesPopulationFlow(t *testing.T) {
	examples := []*flowExample{
		newFlowExample(t, "separate", []float64{0.5, 0.3, 0.2}, flow.Separate, 3, 0.5),
		newFlowExample(t, "merged", []float64{0.4, 0.3, 0.2, 0.1}, flow.Merged, 4, 0.01),
	}
	for _, ex := range examples {
		tr := newTrainer(t, Config{Model: ex.model, Data: withLaw(t, ex.data, law.Lengths{N: 31}, 1, 1), P: 1})
		pop, err := ex.data.Moments(flow.ReducedLayer.Pairs(ex.data.Dim()), law.Training, false)
		if err != nil {
			t.Fatal(err)
		}
		tr.train = newLinearObjective(tr.coef, newMomentsObjective(pop))
		res, err := tr.GD(context.Background(), ex.y0, GDSettings{LR: ex.lr, Steps: int(1.3 * ex.run.FinalT / tr.Time(ex.lr, 1)), Levels: ex.sys.Levels()})
		if err != nil {
			t.Fatal(err)
		}
		for i, tn := range res.Transitions {
			if e := math.Abs(tn.T-ex.run.Transitions[i].T) / ex.run.Transitions[i].T; e > 0.01 {
				t.Errorf("%s: gradient descent on the population moments drops at t = %.6g, the flow at %.6g: its learning rate's error %.2g is not small", ex.name, tn.T, ex.run.Transitions[i].T, e)
			}
		}
		var errs [2][2]float64 // [P index][drops, plateaus]
		for pi, p := range []int{20000, 200000} {
			var drops, plateaus []float64
			for seed := uint64(1); seed <= 4; seed++ {
				d, pl := ex.gdErrors(t, p, seed)
				drops, plateaus = append(drops, d...), append(plateaus, pl...)
			}
			errs[pi] = [2]float64{meanAbs(drops), meanAbs(plateaus)}
			t.Logf("%s, P = %d: drop times off by %.3g (mean over seeds and drops), plateau levels by %.3g", ex.name, p, errs[pi][0], errs[pi][1])
		}
		if errs[1][0] > 0.05 || errs[1][1] > 0.01 {
			t.Errorf("%s, P = 2e5: mean drop-time error %.3g (want ≤ 5%%), plateau-level error %.3g (want ≤ 1%%)", ex.name, errs[1][0], errs[1][1])
		}
		if errs[1][0] > errs[0][0]/1.5 || errs[1][1] > errs[0][1]/1.5 {
			t.Errorf("%s: errors %.3g, %.3g at P = 2e4 and %.3g, %.3g at P = 2e5: want them smaller by a factor 1.5", ex.name, errs[0][0], errs[0][1], errs[1][0], errs[1][1])
		}
	}
}

// TestGDFirstOrderInLR: at fixed data, gradient descent is the Euler map
// of the gradient flow of the training loss, so its error at a fixed time
// is first order in η: halving η halves it. The flow is integrated by the
// ode package (DOP853, rtol 1e-12) on the exact fast path; the time T = 1500
// is inside the first drop of the separate example (t₁ ≈ 1130), where the
// weights move fastest.
func TestGDFirstOrderInLR(t *testing.T) {
	ex := newFlowExample(t, "separate", []float64{0.5, 0.3, 0.2}, flow.Separate, 3, 0)
	tr := newTrainer(t, Config{Model: ex.model, Data: withLaw(t, ex.data, law.Lengths{N: 31}, 1, 1), P: 2000, Seed: 5, Path: MomentsPath})
	const T = 1500
	fl, err := tr.Flow(context.Background(), ex.y0, FlowSettings{T: T, Method: ode.DOP853, RTol: 1e-12, ATol: 1e-16})
	if err != nil {
		t.Fatal(err)
	}
	var errs []float64
	for _, lr := range []float64{0.4, 0.2, 0.1, 0.05} {
		res, err := tr.GD(context.Background(), ex.y0, GDSettings{LR: lr, Steps: int(math.Round(T / (2 * lr)))})
		if err != nil {
			t.Fatal(err)
		}
		errs = append(errs, relDiff(res.Final, fl.Final))
	}
	t.Logf("‖θ_GD(T) − θ_flow(T)‖∞/‖θ_flow(T)‖∞ at η = 0.4, 0.2, 0.1, 0.05: %.3g", errs)
	for i := 1; i < len(errs); i++ {
		if r := errs[i-1] / errs[i]; r < 1.8 || r > 2.2 {
			t.Errorf("halving η from %g divides the error by %.3f, want 2 ± 0.2 (first order)", 0.4/math.Pow(2, float64(i-1)), r)
		}
	}
}

// convFull runs TestFiniteDataConvergesToExactFlow at P = 2·10⁴, 2·10⁵ and
// 2·10⁶ (about two minutes on two cores): go test ./train -run
// FiniteDataConverges -conv.full.
var convFull = flag.Bool("conv.full", false, "TestFiniteDataConvergesToExactFlow: P up to 2·10⁶")

// TestFiniteDataConvergesToExactFlow: the full layer trained on P sampled
// sequences with half of them labeled by one fixed task (the paper's
// in-context against in-weight setting: merged, D = 4, Λ = I/4, N = 31,
// H = 8, c = 0.5) converges to the exact population flow as P grows, like
// P^{−1/2}. The training is the gradient flow of the training loss (the
// η → 0 limit of full-batch descent, whose own error at any η the paper's
// time scale allows would hide the sampling error at large P), from the
// flow's initial weights, to t = 3000 past both drops; four data seeds at
// each P. The distance is the mean over seeds of the relative errors of
// the drop times (crossings of the exact flow's half-way levels), of the
// observed plateau levels and of the final test losses (the trained
// weights on the exact test populations), averaged over the three: each
// tenfold P must divide it by 3.2 ± 1. Measured: 0.0131, 0.00528 and
// 0.00174 at P = 2·10⁴, 2·10⁵, 2·10⁶ (ratios 2.5 and 3.0).
func TestFiniteDataConvergesToExactFlow(t *testing.T) {
	ps := []int{20_000, 200_000}
	if *convFull {
		ps = append(ps, 2_000_000)
	}
	data, err := law.NewData(law.White(4, 0.25), nil, law.Lengths{Nu: 1})
	if err != nil {
		t.Fatal(err)
	}
	data = withLawK(t, data, law.Lengths{N: 31}, 0.5, 1, 3)
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Merged, H: 8, Tau: 1, Layer: flow.FullLayer})
	if err != nil {
		t.Fatal(err)
	}
	y0, _ := s.Init(2e-5, 3)
	const T = 3000
	exact, err := s.Run(context.Background(), y0, flow.RunSettings{T: T})
	if err != nil || len(exact.Transitions) != 2 {
		t.Fatalf("exact flow: %v, drops %v", err, exact.Transitions)
	}
	var dist []float64
	for _, p := range ps {
		var sum [3]float64
		for seed := uint64(1); seed <= 4; seed++ {
			d := finiteDataDistance(t, s, exact, y0, p, seed)
			for k := range sum {
				sum[k] += d[k] / 4
			}
		}
		dist = append(dist, (sum[0]+sum[1]+sum[2])/3)
		t.Logf("P = %d: drop times off by %.3g, plateau levels by %.3g, final test losses by %.3g; distance %.3g",
			p, sum[0], sum[1], sum[2], dist[len(dist)-1])
	}
	for i := 1; i < len(dist); i++ {
		if r := dist[i-1] / dist[i]; r < 2.2 || r > 4.2 {
			t.Errorf("P = %d → %d divides the distance by %.2f, want 3.2 ± 1 (P^(−1/2))", ps[i-1], ps[i], r)
		}
	}
}

// finiteDataDistance trains on p sequences of data seed seed and returns
// the mean relative errors of its drop times, plateau levels and final
// test losses against the exact flow.
func finiteDataDistance(t *testing.T, s *flow.System, exact *flow.Trajectory, y0 []float64, p int, seed uint64) [3]float64 {
	t.Helper()
	var levels []flow.Transition
	for _, tn := range exact.Transitions {
		levels = append(levels, flow.Transition{M: tn.M, Level: tn.Level})
	}
	m := Model{Model: flow.Model{Kind: flow.Merged, H: 8, Layer: flow.FullLayer, Tau: 1}, D: 4}
	tr := newTrainer(t, Config{Model: m, Data: s.Data, P: p, Seed: seed, Path: MomentsPath})
	res, err := tr.Flow(context.Background(), y0, FlowSettings{T: exact.FinalT, Levels: levels})
	if err != nil {
		t.Fatal(err)
	}
	var d [3]float64
	for i, tn := range exact.Transitions {
		e := 1.0 // a drop not reached is off by its whole time
		if i < len(res.Transitions) {
			e = math.Abs(res.Transitions[i].T-tn.T) / tn.T
		}
		d[0] += e / float64(len(exact.Transitions))
	}
	obs := flow.ObservedPlateaus(res.Times, res.Loss, res.Transitions, res.FinalT)
	for i, l := range exact.Plateaus {
		e := 1.0
		if i < len(obs) {
			e = math.Abs(obs[i]-l) / l
		}
		d[1] += e / float64(len(exact.Plateaus))
	}
	icl, iwl, _ := s.TestLosses(res.Final)
	last := len(exact.Times) - 1
	d[2] = (math.Abs(icl-exact.TestICL[last])/exact.TestICL[last] + math.Abs(iwl-exact.TestIWL[last])/exact.TestIWL[last]) / 2
	return d
}
