package flow

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/law"
)

// TestFullLayerOperatorMatchesDense: above fullDenseMaxDim the full layer
// contracts its coefficients with the law (law.Operator) instead of
// forming ZZ; its flow, Jacobian–vector products, loss and test losses
// agree with those of the dense moments to 1e-12 relative, for the merged
// and separate (R = 1, 2) models, c ∈ {0, 0.5, 1}, K ∈ {1, 4}, Ω ≠ I and
// σ² > 0.
func TestFullLayerOperatorMatchesDense(t *testing.T) {
	const tol = 1e-12
	models := []Model{
		{Kind: Merged, H: 3, Tau: 1.3, Layer: FullLayer},
		{Kind: Separate, H: 2, R: 1, Tau: 0.7, Layer: FullLayer},
		{Kind: Separate, H: 2, R: 2, Tau: 1, Layer: FullLayer},
	}
	worst := 0.0
	i := 0
	for _, d := range []int{9, 10} {
		for _, icl := range []float64{0, 0.5, 1} {
			for _, k := range []int{1, 4} {
				i++
				m := models[i%len(models)]
				name := fmt.Sprintf("D%d c=%g K=%d %v R%d", d, icl, k, m.Kind, m.R)
				data := taskLawData(t, d, icl, k, uint64(i))
				s := newSys(t, data, m)
				if _, ok := s.law.full.train.(*law.Operator); !ok {
					t.Fatalf("%s: the full layer at D = %d is not matrix-free", name, d)
				}
				y := randomState(s, 0.4, uint64(i))
				dy := randomState(s, 1, uint64(i)+50)
				got := evalFull(s, y, dy)
				dense := func(set law.Sequences) featureMoments {
					mo, err := s.eigenMoments(set)
					if err != nil {
						t.Fatal(err)
					}
					return mo
				}
				s.law.full.train = dense(law.Training)
				for j, set := range []law.Sequences{law.InContextTest, law.InWeightTest, law.InDistributionTest} {
					s.law.tests.sets[j] = dense(set)
				}
				want := evalFull(s, y, dy)
				for what, e := range map[string]float64{
					"flow":       relErr(got.deriv, want.deriv),
					"JVP":        relErr(got.jvp, want.jvp),
					"loss":       relErr(got.losses, want.losses),
					"least loss": math.Abs(got.floor-want.floor) / (want.losses[0] - want.floor),
				} {
					worst = max(worst, e)
					if !(e <= tol) {
						t.Errorf("%s: %s differs from the dense path by %.3g relative", name, what, e)
					}
				}
			}
		}
	}
	t.Logf("largest relative difference from the dense path: %.3g", worst)
}

type fullEval struct {
	deriv, jvp, losses []float64
	floor              float64
}

// evalFull evaluates at y the flow, the JVP along dy, the training and
// test losses, and the least loss of s's full layer.
func evalFull(s *System, y, dy []float64) fullEval {
	var out fullEval
	out.deriv = make([]float64, len(y))
	s.DerivEigen(out.deriv, y)
	l := s.NewLinearization()
	l.At(y)
	out.jvp = make([]float64, len(y))
	l.Apply(out.jvp, dy)
	icl, iwl, idg := s.TestLossesEigen(y)
	out.losses = []float64{s.LossEigen(y), icl, iwl, idg}
	out.floor, _, _ = s.law.full.train.Minimum()
	return out
}

// taskLawData is a power-law Λ in a random basis with N = 2D, the task
// law c, K with Ω ≠ I (and another Ω for the in-context test) and
// σ² = 0.2.
func taskLawData(t testing.TB, d int, icl float64, k int, seed uint64) *law.Data {
	t.Helper()
	data, err := law.NewData(law.PowerLaw(d, 1, 1), law.RandomRotation(d, seed), law.Lengths{N: 2 * d})
	if err == nil {
		data, err = data.WithTasks(law.Tasks{ICL: icl, Fixed: law.FixedTasks(d, k, seed),
			Cov: spd(d, seed), TestCov: spd(d, seed+7), Noise: 0.2})
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// spd is a symmetric positive definite matrix other than I: the identity
// plus a rank-one term along a rotation's first column.
func spd(d int, seed uint64) *mat.Dense {
	v := law.RandomRotation(d, seed+3)
	out := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out.Set(i, j, 0.7*v.At(i, 0)*v.At(j, 0))
		}
		out.Set(i, i, out.At(i, i)+1)
	}
	return out
}
