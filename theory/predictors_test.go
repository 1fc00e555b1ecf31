package theory

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// randomContext draws a context of n pairs in R^d with labels w·x + noise.
func randomContext(rng *rand.Rand, d, n int, w []float64, noise float64) Context {
	c := Context{D: d, X: make([]float64, n*d), Y: make([]float64, n)}
	for i := range c.X {
		c.X[i] = rng.NormFloat64()
	}
	for i := range c.Y {
		c.Y[i] = floats.Dot(c.X[i*d:(i+1)*d], w) + noise*rng.NormFloat64()
	}
	return c
}

func randomTasks(rng *rand.Rand, k, d int) *mat.Dense {
	t := mat.NewDense(k, d, nil)
	for i := range k {
		for j := range d {
			t.Set(i, j, rng.NormFloat64())
		}
	}
	return t
}

// TestRidgeWeights checks ŵ against the normal equations and, at λ = 0,
// against interpolation with ŵ in the row space of X (minimum norm).
func TestRidgeWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	w := []float64{1, -0.5, 2, 0.3, -1}
	for _, n := range []int{2, 5, 12} {
		c := randomContext(rng, 5, n, w, 0.3)
		x := mat.NewDense(n, 5, c.X)
		for _, lambda := range []float64{0.25, 3} {
			r, err := NewRidge(lambda)
			if err != nil {
				t.Fatal(err)
			}
			wh, err := r.Weights(nil, c)
			if err != nil {
				t.Fatal(err)
			}
			// (XᵀX + λI)ŵ − Xᵀy = 0.
			var g, res, b mat.VecDense
			var xtx mat.Dense
			xtx.Mul(x.T(), x)
			g.MulVec(&xtx, mat.NewVecDense(5, wh))
			g.AddScaledVec(&g, lambda, mat.NewVecDense(5, wh))
			b.MulVec(x.T(), mat.NewVecDense(n, c.Y))
			res.SubVec(&g, &b)
			if mat.Norm(&res, 2) > 1e-12*mat.Norm(&b, 2) {
				t.Errorf("n = %d, λ = %v: normal-equation residual %v", n, lambda, mat.Norm(&res, 2))
			}
		}
		r, _ := NewRidge(0)
		wh, err := r.Weights(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		var fit mat.VecDense
		fit.MulVec(x, mat.NewVecDense(5, wh))
		if n <= 5 {
			// Interpolates, and ŵ = Xᵀa lies in the row space.
			for i := range n {
				if math.Abs(fit.AtVec(i)-c.Y[i]) > 1e-10 {
					t.Errorf("n = %d, λ = 0: fit %v, label %v", n, fit.AtVec(i), c.Y[i])
				}
			}
			var a mat.VecDense
			if err := a.SolveVec(x.T(), mat.NewVecDense(5, wh)); err != nil {
				t.Fatal(err)
			}
			var back mat.VecDense
			back.MulVec(x.T(), &a)
			if !floats.EqualApprox(back.RawVector().Data, wh, 1e-10) {
				t.Errorf("n = %d, λ = 0: ŵ = %v not in the row space of X", n, wh)
			}
		}
	}
	// An empty context predicts zero.
	r, _ := NewRidge(0.25)
	wh, err := r.Weights([]float64{7, 7}, Context{D: 2})
	if err != nil || wh[0] != 0 || wh[1] != 0 {
		t.Errorf("empty context: ŵ = %v, %v", wh, err)
	}
}

// TestRidgeErrorD1 compares the Monte Carlo error of the Bayes ridge
// predictor at D = 1 with its exact value: the posterior variance of w
// given the tokens is σ²/(σ² + Σ x_n²) with Σ x_n² = σ_x² S, S ~ χ²_N, so
//
//	E[(y_q − ŷ_q)²] = σ² + σ_x² E[σ²/(σ² + σ_x² S)],
//
// the expectation by Gauss–Legendre quadrature over the χ²_N density.
func TestRidgeErrorD1(t *testing.T) {
	for _, s := range []Setting{
		{D: 1, N: 4, TokenVar: 2, NoiseVar: 0.5},
		{D: 1, N: 1, TokenVar: 1, NoiseVar: 0.25},
		{D: 1, N: 16, TokenVar: 0.5, NoiseVar: 1},
	} {
		chi := distuv.ChiSquared{K: float64(s.N)}
		post := quad.Fixed(func(u float64) float64 {
			return chi.Prob(u) * s.NoiseVar / (s.NoiseVar + s.TokenVar*u)
		}, 0, 400, 4000, nil, 0)
		want := s.NoiseVar + s.TokenVar*post
		r, _ := NewRidge(s.NoiseVar)
		est, err := ExpectedError(s, r, nil, 40000, 3)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(est.Mean-want) > 4.5*est.StdErr {
			t.Errorf("%+v: ridge error %v ± %v, exact %v", s, est.Mean, est.StdErr, want)
		}
	}
}

// TestRidgeErrorNoiseless: with σ² = 0 and λ = 0 the minimum-norm
// interpolant recovers w on the span of the N tokens, so the error is
// σ_x² E‖(I − P)w‖² = σ_x² max(D − N, 0) exactly.
func TestRidgeErrorNoiseless(t *testing.T) {
	r, _ := NewRidge(0)
	for _, n := range []int{0, 1, 3, 6, 9} {
		s := Setting{D: 6, N: n, TokenVar: 1.5, NoiseVar: 0}
		est, err := ExpectedError(s, r, nil, 4000, 5)
		if err != nil {
			t.Fatal(err)
		}
		want := s.TokenVar * float64(max(s.D-n, 0))
		if math.Abs(est.Mean-want) > 4.5*est.StdErr+1e-12 {
			t.Errorf("N = %d: error %v ± %v, want %v", n, est.Mean, est.StdErr, want)
		}
	}
}

// TestDMMSEOneTask: with K = 1 the posterior is the task itself, so
// ŵ = w₀ for every context; the error on fresh tasks is
// σ_x²(D + ‖w₀‖²) + σ², on the set exactly σ².
func TestDMMSEOneTask(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	w0 := []float64{0.5, -1, 2}
	tasks := mat.NewDense(1, 3, w0)
	m, err := NewDMMSE(tasks, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 2, 10} {
		c := randomContext(rng, 3, n, []float64{1, 1, 1}, 0.5)
		wh, err := m.Weights(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		if !floats.Equal(wh, w0) {
			t.Errorf("N = %d: ŵ = %v, want w₀ = %v", n, wh, w0)
		}
	}
	s := Setting{D: 3, N: 8, TokenVar: 2, NoiseVar: 0.25}
	fresh, err := ExpectedError(s, m, nil, 20000, 11)
	if err != nil {
		t.Fatal(err)
	}
	want := s.TokenVar*(3+floats.Dot(w0, w0)) + s.NoiseVar
	if math.Abs(fresh.Mean-want) > 4.5*fresh.StdErr {
		t.Errorf("fresh tasks: %v ± %v, want %v", fresh.Mean, fresh.StdErr, want)
	}
	own, err := ExpectedError(s, m, tasks, 100, 11)
	if err != nil {
		t.Fatal(err)
	}
	if own.Mean != s.NoiseVar || own.StdErr != 0 {
		t.Errorf("tasks from the set: %v ± %v, want exactly %v", own.Mean, own.StdErr, s.NoiseVar)
	}
}

// TestDMMSEWeights checks the posterior against its definition with the
// residuals ‖y − Xw_k‖² computed directly, and the σ² = 0 and empty-context
// limits.
func TestDMMSEWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	tasks := randomTasks(rng, 6, 4)
	c := randomContext(rng, 4, 5, tasks.RawRowView(2), 0.7)
	x := mat.NewDense(5, 4, c.X)
	for _, noise := range []float64{0.1, 0.5, 4} {
		m, _ := NewDMMSE(tasks, noise)
		wh, err := m.Weights(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]float64, 6)
		for k := range p {
			var fit mat.VecDense
			fit.MulVec(x, tasks.RowView(k))
			r := floats.Distance(fit.RawVector().Data, c.Y, 2)
			p[k] = math.Exp(-r * r / (2 * noise))
		}
		floats.Scale(1/floats.Sum(p), p)
		want := make([]float64, 4)
		for k := range p {
			floats.AddScaled(want, p[k], tasks.RawRowView(k))
		}
		if !floats.EqualApprox(wh, want, 1e-12) {
			t.Errorf("σ² = %v: ŵ = %v, want %v", noise, wh, want)
		}
	}
	// σ² = 0 from the set and N ≥ 1: the true task exactly.
	m, _ := NewDMMSE(tasks, 0)
	c0 := randomContext(rng, 4, 3, tasks.RawRowView(4), 0)
	if wh, _ := m.Weights(nil, c0); !floats.EqualApprox(wh, tasks.RawRowView(4), 1e-15) {
		t.Errorf("σ² = 0: ŵ = %v, want task 4 = %v", wh, tasks.RawRowView(4))
	}
	// Empty context: the mean task.
	mean := make([]float64, 4)
	for k := range 6 {
		floats.AddScaled(mean, 1.0/6, tasks.RawRowView(k))
	}
	if wh, _ := m.Weights(nil, Context{D: 4}); !floats.EqualApprox(wh, mean, 1e-15) {
		t.Errorf("empty context: ŵ = %v, want the mean task %v", wh, mean)
	}
}

// TestDMMSEAgainstRidge: ridge is Bayes for fresh tasks and dMMSE for tasks
// from the set, so with common random numbers dMMSE loses on fresh tasks
// and wins on the set; as K grows the task set fills the Gaussian prior and
// dMMSE's error on fresh tasks falls to ridge's.
func TestDMMSEAgainstRidge(t *testing.T) {
	s := Setting{D: 2, N: 6, TokenVar: 1, NoiseVar: 0.25}
	rng := rand.New(rand.NewPCG(9, 9))
	r, _ := NewRidge(s.NoiseVar)
	const samples = 2000
	ridgeFresh, err := ExpectedError(s, r, nil, samples, 21)
	if err != nil {
		t.Fatal(err)
	}
	prevGap := math.Inf(1)
	for _, k := range []int{4, 64, 1024, 4096} {
		tasks := randomTasks(rng, k, s.D)
		m, _ := NewDMMSE(tasks, s.NoiseVar)
		fresh, err := ExpectedError(s, m, nil, samples, 21)
		if err != nil {
			t.Fatal(err)
		}
		ridgeOwn, _ := ExpectedError(s, r, tasks, samples, 22)
		own, _ := ExpectedError(s, m, tasks, samples, 22)
		gap := fresh.Mean/ridgeFresh.Mean - 1
		t.Logf("K = %5d: dMMSE fresh %.4f ± %.4f, ridge fresh %.4f; set: dMMSE %.4f, ridge %.4f",
			k, fresh.Mean, fresh.StdErr, ridgeFresh.Mean, own.Mean, ridgeOwn.Mean)
		// The orderings hold in expectation; allow two standard errors (the
		// paired differences fluctuate far less than that).
		if fresh.Mean < ridgeFresh.Mean-2*fresh.StdErr || own.Mean > ridgeOwn.Mean+2*own.StdErr {
			t.Errorf("K = %d: Bayes ordering broken: fresh dMMSE %v < ridge %v or set dMMSE %v > ridge %v",
				k, fresh.Mean, ridgeFresh.Mean, own.Mean, ridgeOwn.Mean)
		}
		if gap >= prevGap {
			t.Errorf("K = %d: relative excess %v over ridge did not shrink (was %v)", k, gap, prevGap)
		}
		prevGap = gap
	}
	if prevGap > 0.03 {
		t.Errorf("K = 4096: dMMSE exceeds ridge on fresh tasks by %.3g, want < 3%%", prevGap)
	}
}

func TestExpectedErrorDeterministic(t *testing.T) {
	s := RaventosSetting(5)
	r, _ := NewRidge(s.NoiseVar)
	a, _ := ExpectedError(s, r, nil, 50, 4)
	b, _ := ExpectedError(s, r, nil, 50, 4)
	c, _ := ExpectedError(s, r, nil, 50, 5)
	if a != b || a == c {
		t.Errorf("seeded estimates: %+v, %+v (same seed), %+v (other seed)", a, b, c)
	}
}

func TestPredictorValidation(t *testing.T) {
	r, _ := NewRidge(1)
	tasks := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	m, _ := NewDMMSE(tasks, 1)
	good := Setting{D: 3, N: 4, TokenVar: 1, NoiseVar: 0.25}
	for _, c := range []struct {
		err  func() error
		want string
	}{
		{func() error { _, err := NewRidge(-1); return err }, "lambda"},
		{func() error { _, err := NewRidge(math.NaN()); return err }, "lambda"},
		{func() error { _, err := NewDMMSE(tasks, -1); return err }, "noiseVar"},
		{func() error { _, err := NewDMMSE(mat.NewDense(1, 1, []float64{math.NaN()}), 1); return err }, "tasks[0][0]"},
		{func() error {
			_, err := r.Weights(nil, Context{D: 3, X: make([]float64, 5), Y: make([]float64, 2)})
			return err
		}, "Context.X"},
		{func() error { _, err := r.Weights(nil, Context{D: 0}); return err }, "Context.D"},
		{func() error { _, err := r.Weights(make([]float64, 2), Context{D: 3}); return err }, "dst"},
		{func() error { _, err := m.Weights(nil, Context{D: 2}); return err }, "Context.D"},
		{func() error { _, err := ExpectedError(Setting{D: 0, TokenVar: 1}, r, nil, 10, 1); return err }, "Setting.D"},
		{func() error { _, err := ExpectedError(Setting{D: 3, N: -1, TokenVar: 1}, r, nil, 10, 1); return err }, "Setting.N"},
		{func() error { _, err := ExpectedError(Setting{D: 3, TokenVar: 0}, r, nil, 10, 1); return err }, "Setting.TokenVar"},
		{func() error {
			_, err := ExpectedError(Setting{D: 3, TokenVar: 1, NoiseVar: math.Inf(1)}, r, nil, 10, 1)
			return err
		}, "Setting.NoiseVar"},
		{func() error { _, err := ExpectedError(good, r, nil, 1, 1); return err }, "samples"},
		{func() error { _, err := ExpectedError(good, nil, nil, 10, 1); return err }, "predictor"},
		{func() error { _, err := ExpectedError(good, r, mat.NewDense(2, 2, nil), 10, 1); return err }, "task set"},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one naming %q", err, c.want)
		}
	}
}
