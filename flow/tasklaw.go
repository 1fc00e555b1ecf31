package flow

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/flow/internal/gemm"
	"github.com/linattn/linattn/law"
)

// taskLaw is what the layer and the law of the task vector change in a
// System besides the paper's reduced flow: the full layer's moments, or
// the reduced layer's task covariance, and the least loss.
type taskLaw struct {
	full *fullLayer
	cov  *taskCovariance
	// minLoss is the least loss over every map of the layer when the tasks
	// are not all in-context (NaN when the layer cannot reach every map);
	// bound is the least loss over every map, a lower bound.
	minLoss, bound float64
	tests          testLosses
}

func (s *System) initTaskLaw() error {
	var err error
	if s.Model.Depth() > 1 {
		return s.initStack()
	}
	if s.Model.Layer.extra() {
		if s.law.full, err = newFullLayer(s); err != nil {
			return err
		}
	} else if !s.Data.Standard() {
		if s.law.cov, err = newTaskCovariance(s); err != nil {
			return err
		}
	}
	s.law.minLoss, s.law.bound = math.NaN(), math.NaN()
	if s.Data.Standard() {
		return nil
	}
	switch s.Model.Layer {
	case FullLayer:
		s.ExpressivityLimited = s.Model.H < s.d+1 || (s.Model.Kind == Separate && s.Model.R < s.d)
	case LabelKeyLayer: // Γ = Σ_i v_i W̃_i, a (D+1)×D matrix of rank ≤ D
		s.ExpressivityLimited = s.Model.Kind == Separate && s.Model.H*s.Model.R < s.d
	}
	if s.Model.Layer.extra() {
		if s.law.bound, _, err = s.law.full.train.Minimum(); err != nil {
			return fmt.Errorf("flow: the full layer's population loss: %w", err)
		}
	} else {
		s.law.bound = s.law.cov.minLoss()
	}
	if !s.ExpressivityLimited {
		s.law.minLoss = s.law.bound
	}
	return nil
}

// taskCovariance is the reduced layer's population loss when the task
// vector w has the second moment M_w = E[wwᵀ] ≠ I or the labels carry
// noise of variance σ² (docs/math.md, "The reduced layer under a task
// law"): with β = Λ̂w + (1/N) Σ_n ε_n x_n,
//
//	E[ββᵀ] = A_w = (1+ν) Λ M_w Λ + ν (tr(ΛM_w) + σ²) Λ,   E[y_q β x_qᵀ] = B = Λ M_w Λ,
//	L(M) = tr(ΛM_w) + σ² − 2⟨M, B⟩ + ⟨M, A_w M Λ⟩,   G = B − A_w M Λ,
//
// which for M_w = I, σ² = 0 are A, Λ² and the residual of the paper. In
// eigen coordinates Λ is diagonal but A_w and B are not.
type taskCovariance struct {
	d     int
	lam   []float64 // λ (Λ is diagonal in eigen coordinates)
	aw, b []float64 // A_w and B, eigen coordinates, D×D
	yy    float64   // E[y_q²] = tr(Λ M_w) + σ²
	am    []float64 // scratch: A_w M
}

func newTaskCovariance(s *System) (*taskCovariance, error) {
	d := s.d
	lam, nu := s.lam, s.Data.Nu()
	tm, err := s.Data.TaskMoments(law.Training, true)
	if err != nil {
		return nil, err
	}
	mw := tm.Second
	tc := &taskCovariance{d: d, lam: lam, aw: make([]float64, d*d), b: make([]float64, d*d), am: make([]float64, d*d)}
	for i := 0; i < d; i++ {
		tc.yy += lam[i] * mw[i*d+i]
	}
	tc.yy += tm.Noise
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			tc.b[i*d+j] = lam[i] * mw[i*d+j] * lam[j]
			tc.aw[i*d+j] = (1 + nu) * tc.b[i*d+j]
		}
		tc.aw[i*d+i] += nu * tc.yy * lam[i]
	}
	return tc, nil
}

// residual sets g = c·(B − A_w m Λ), or with withB false its linear part
// −c·A_w m Λ, and gt = gᵀ unless nil (eigen coordinates).
func (tc *taskCovariance) residual(g, gt, m []float64, c float64, withB bool) {
	d, lam := tc.d, tc.lam
	gemm.Mul(d, d, d, tc.aw, m, tc.am)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			v := -c * tc.am[i*d+j] * lam[j]
			if withB {
				v += c * tc.b[i*d+j]
			}
			g[i*d+j] = v
			if gt != nil {
				gt[j*d+i] = v
			}
		}
	}
}

// loss returns L(M) = tr(ΛM_w) − 2⟨M, B⟩ + ⟨M, A_w M Λ⟩.
func (tc *taskCovariance) loss(m []float64) float64 {
	d, lam := tc.d, tc.lam
	gemm.Mul(d, d, d, tc.aw, m, tc.am)
	l := tc.yy
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			mij := m[i*d+j]
			l += mij * (tc.am[i*d+j]*lam[j] - 2*tc.b[i*d+j])
		}
	}
	return l
}

// minLoss returns min_M L(M) = tr(ΛM_w) + σ² − ⟨M*, B⟩ at M* = A_w⁻¹ B Λ⁻¹,
// where G = 0.
func (tc *taskCovariance) minLoss() float64 {
	d := tc.d
	var ms mat.Dense
	if err := ms.Solve(mat.NewDense(d, d, tc.aw), mat.NewDense(d, d, tc.b)); err != nil {
		return math.NaN()
	}
	l := tc.yy
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			l -= ms.At(i, j) / tc.lam[j] * tc.b[i*d+j]
		}
	}
	return l
}

// eigenMoments returns the population moments of the layer's features
// in eigen coordinates.
func (s *System) eigenMoments(set law.Sequences) (*law.Moments, error) {
	return s.Data.Moments(s.Model.Layer.Pairs(s.d), set, true)
}

// testLosses are the exact losses on the test sets (law.Sequences),
// formed when first asked for.
type testLosses struct {
	coef *Coefficients
	// sets are the moments of the in-context, in-weight and
	// in-distribution test sets (the last two nil without fixed tasks).
	sets [3]featureMoments
	err  error
}

// testSequences are the test sets of data, in the order of the test
// losses: the in-context test, and with fixed tasks the in-weight and
// in-distribution ones (Plan.Tests).
func testSequences(data *law.Data) []law.Sequences {
	if data.HasFixed() {
		return []law.Sequences{law.InContextTest, law.InWeightTest, law.InDistributionTest}
	}
	return []law.Sequences{law.InContextTest}
}

// share lets the test losses' products and moments share their work
// among procs processors (System.setWorkers).
func (t *testLosses) share(procs int) {
	t.coef.prod.share(procs)
	for _, mo := range t.sets {
		shareMoments(mo, procs)
	}
}

// TestLosses returns the exact population losses at y (original basis) on
// the in-context test set (every w ~ N(0, Ω_test)), on the in-weight one
// (the query labeled by a fixed task, context labels independent of the
// tokens) and on the in-distribution one (a fixed task labels context and
// query); the last two NaN without fixed tasks (docs/math.md, "Task
// laws"; docs/training.md, "Data", without sampling).
func (s *System) TestLosses(y []float64) (icl, iwl, idg float64) {
	return s.TestLossesEigen(s.ToEigen(s.scr.ye, y))
}

// TestLossesEigen is TestLosses at y in eigen coordinates.
func (s *System) TestLossesEigen(y []float64) (icl, iwl, idg float64) {
	s.checkLen("y", y)
	if s.stack != nil {
		return s.stack.testLosses(y)
	}
	t := &s.law.tests
	if t.coef == nil {
		t.coef = NewCoefficients(s.d, s.Model)
		for i, set := range testSequences(s.Data) {
			// The sets are valid for the data (law.Data.Moments checks the
			// same conditions as NewSystem's training moments).
			if mo, err := s.featureMoments(set); err == nil {
				t.sets[i] = mo
			}
		}
		t.share(s.workers)
	}
	t.coef.At(y)
	out := [3]float64{math.NaN(), math.NaN(), math.NaN()}
	for i, mo := range t.sets {
		if mo != nil {
			out[i] = mo.Loss(t.coef.Values())
		}
	}
	return out[0], out[1], out[2]
}
