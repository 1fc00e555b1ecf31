package law

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// testCov is a non-diagonal symmetric positive definite Ω with
// eigenvalues 0.5 … 2 and random eigenvectors.
func testCov(d int, seed uint64) *mat.Dense {
	q := RandomRotation(d, seed)
	e := make([]float64, d)
	for i := range e {
		e[i] = 0.5 + 1.5*float64(i)/float64(d-1)
	}
	var qe, out mat.Dense
	qe.Mul(q, mat.NewDiagDense(d, e))
	out.Mul(&qe, q.T())
	return &out
}

// TestTaskMomentsOfSet: the fixed tasks enter through their averages,
// here recomputed task by task from the definitions in the original basis
// (Mean = E[w], Second = E[wwᵀ], Third = E[(wᵀΛw)w], Quad, Fourth), and
// the eigen-coordinate moments are their rotations (Vᵀ E[w], VᵀE[wwᵀ]V).
func TestTaskMomentsOfSet(t *testing.T) {
	const d, k = 3, 5
	data := testData(t, []float64{0.9, 0.4, 0.1}, 2)
	ws := GaussianTasks(d, k, 8)
	data, err := data.WithTasks(Tasks{ICL: 0.3, Fixed: ws, Noise: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	got, err := data.TaskMoments(InDistributionTest, false)
	if err != nil {
		t.Fatal(err)
	}
	lam := data.Covariance()
	want := newTaskMoments(d)
	for _, w := range ws {
		wv := mat.NewVecDense(d, w)
		q := mat.Inner(wv, lam, wv)
		for i := 0; i < d; i++ {
			want.Mean[i] += w[i] / k
			want.Third[i] += q * w[i] / k
			for j := 0; j < d; j++ {
				want.Second[i*d+j] += w[i] * w[j] / k
			}
		}
		want.Quad += q / k
		want.Fourth += q * q / k
	}
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"Mean", got.Mean, want.Mean}, {"Second", got.Second, want.Second}, {"Third", got.Third, want.Third},
		{"Quad", []float64{got.Quad}, []float64{want.Quad}}, {"Fourth", []float64{got.Fourth}, []float64{want.Fourth}}} {
		if e := relErr(c.got, c.want); e > 1e-14 {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if got.Noise != 0.2 || got.Independent {
		t.Errorf("noise %g, independent %v; want 0.2, false", got.Noise, got.Independent)
	}
	eig, err := data.TaskMoments(InDistributionTest, true)
	if err != nil {
		t.Fatal(err)
	}
	v := data.Vecs()
	var mean mat.VecDense
	mean.MulVec(v.T(), mat.NewVecDense(d, want.Mean))
	var vs, second mat.Dense
	vs.Mul(v.T(), mat.NewDense(d, d, want.Second))
	second.Mul(&vs, v)
	if e := relErr(eig.Mean, mean.RawVector().Data); e > 1e-13 {
		t.Errorf("eigen Mean %v, want Vᵀ E[w] = %v", eig.Mean, mean.RawVector().Data)
	}
	if e := relErr(eig.Second, second.RawMatrix().Data); e > 1e-13 {
		t.Errorf("eigen Second %v, want Vᵀ E[wwᵀ] V", eig.Second)
	}
	if math.Abs(eig.Fourth-want.Fourth) > 1e-13*want.Fourth {
		t.Errorf("eigen Fourth %g, want %g (invariant)", eig.Fourth, want.Fourth)
	}
}

// TestTaskMomentsGaussian: for w ~ N(0, Ω) the moments against a Monte
// Carlo estimate of 10⁶ draws (within 4.5 standard errors), independent of
// Isserlis' E[(wᵀΛw)²] = tr(ΛΩ)² + 2 tr(ΛΩΛΩ); and the training law's
// moments are the mixture c·Gaussian + (1 − c)·set.
func TestTaskMomentsGaussian(t *testing.T) {
	const d = 3
	data := testData(t, []float64{0.9, 0.4, 0.1}, 3)
	omega := testCov(d, 4)
	ws := FixedTasks(d, 2, 5)
	data, err := data.WithTasks(Tasks{ICL: 0.6, Fixed: ws, Cov: omega})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := data.TaskMoments(InContextTest, false)
	var chol mat.Cholesky
	chol.Factorize(mat.NewSymDense(d, omega.RawMatrix().Data))
	var l mat.TriDense
	chol.LTo(&l)
	lam := data.Covariance()
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1_000_000
	var s, s2 [3]float64 // wᵀΛw, (wᵀΛw)², w₀w₁
	z, w := mat.NewVecDense(d, nil), mat.NewVecDense(d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			z.SetVec(j, rng.NormFloat64())
		}
		w.MulVec(&l, z)
		q := mat.Inner(w, lam, w)
		for j, x := range []float64{q, q * q, w.AtVec(0) * w.AtVec(1)} {
			s[j] += x
			s2[j] += x * x
		}
	}
	for j, c := range []struct {
		name  string
		exact float64
	}{{"E[wᵀΛw]", g.Quad}, {"E[(wᵀΛw)²]", g.Fourth}, {"E[w₀w₁]", g.Second[1]}} {
		mean := s[j] / n
		se := math.Sqrt((s2[j]/n - mean*mean) / (n - 1))
		if z := math.Abs(mean-c.exact) / se; z > 4.5 {
			t.Errorf("%s: Monte Carlo %.6g ± %.2g, exact %.6g (%.1f SE)", c.name, mean, se, c.exact, z)
		}
	}
	tr, _ := data.TaskMoments(Training, false)
	set, _ := data.TaskMoments(InDistributionTest, false)
	for i := range tr.Second {
		if want := 0.6*g.Second[i] + 0.4*set.Second[i]; math.Abs(tr.Second[i]-want) > 1e-14 {
			t.Errorf("training Second[%d] = %g, want the mixture %g", i, tr.Second[i], want)
		}
	}
	if want := 0.6*g.Fourth + 0.4*set.Fourth; math.Abs(tr.Fourth-want) > 1e-13*want {
		t.Errorf("training Fourth %g, want the mixture %g", tr.Fourth, want)
	}
}

// BenchmarkTaskSet forms the training law's moments of K fixed tasks
// (WithTasks rotates them, TaskMoments averages them once; no evaluation
// of the flow loops over tasks): K = 2^20 at D = 8, target under 1 s.
func BenchmarkTaskSet(b *testing.B) {
	for _, k := range []int{1 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("D=8/K=%d", k), func(b *testing.B) {
			data, err := NewData(PowerLaw(8, 1, 1), RandomRotation(8, 1), Lengths{N: 16})
			if err != nil {
				b.Fatal(err)
			}
			ws := GaussianTasks(8, k, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				dk, err := data.WithTasks(Tasks{Fixed: ws, Noise: 0.25})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := dk.TaskMoments(Training, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
