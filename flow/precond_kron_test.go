package flow

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/linattn/linattn/flow/internal/deflation"
	"github.com/linattn/linattn/law"
)

// TestKronCurvature: on the key–query block W the Gauss–Newton curvature
// of the merged model's layers with extra blocks is λ_f·G on column f, to
// the 1/N terms of E[zzᵀ] − U ⊗ Λ (law.TestMomentsKronecker): −τJ (the
// analytic Jacobian–vector product, which on W has no other term, c being
// linear in W) on a direction in column f of W, read on every column f',
// against δ_ff' λ_f G x. For the full layer the gap falls as 1/N: 0.018
// at N = 20 and 0.0021 at N = 200 at D = 5, when written. The label–key
// layer's pairs (b, D) and (D, D) have no query term (the query's label
// entry is zero), so there the factorization is exact.
func TestKronCurvature(t *testing.T) {
	const d = 5
	for _, layer := range []Layer{FullLayer, LabelKeyLayer} {
		var gaps []float64
		for _, n := range []int{20, 200} {
			data, err := law.NewData(law.PowerLaw(d, 1, 1), nil, law.Lengths{N: n})
			if err == nil {
				data, err = data.WithTasks(law.Tasks{ICL: 0.5, Fixed: law.FixedTasks(d, 4, 3)})
			}
			if err != nil {
				t.Fatal(err)
			}
			s := newSys(t, data, Model{Kind: Merged, H: 4, Tau: 1.5, Layer: layer})
			y := randomState(s, 0.5, 4)
			gaps = append(gaps, kronGap(t, s, y))
		}
		t.Logf("%v: relative gap %.3g at N = 20, %.3g at N = 200", layer, gaps[0], gaps[1])
		if layer == LabelKeyLayer {
			if gaps[0] > 1e-12 || gaps[1] > 1e-12 {
				t.Errorf("%v: −τJ on W differs from λ_f G by %.3g and %.3g, want round-off", layer, gaps[0], gaps[1])
			}
			continue
		}
		if gaps[0] > 0.03 || gaps[1] > 0.2*gaps[0] {
			t.Errorf("%v: −τJ on W differs from λ_f G by %.3g at N = 20 and %.3g at N = 200, want below 0.03 and falling as 1/N", layer, gaps[0], gaps[1])
		}
	}
}

// kronGap returns ‖−τJ x_f − λ_f (G x) ⊗ e_f‖/‖λ_f G x‖ for a random
// column x in column f = 1 of W.
func kronGap(t *testing.T, s *System, y []float64) float64 {
	t.Helper()
	st, ok := s.kronStructure()
	if !ok {
		t.Fatalf("%v: no structured deflation", s.Model.Layer)
	}
	k := deflation.NewKron(st, 10, 0)
	k.At(y)
	l := s.NewLinearization()
	l.At(y)
	rng := rand.New(rand.NewPCG(5, 6))
	d, m := st.D, st.H*(st.D+1)
	x, gx := make([]float64, m), make([]float64, m)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	k.MulG(gx, x)
	const f = 1
	dy, jdy := make([]float64, s.Len()), make([]float64, s.Len())
	for i := 0; i < m; i++ {
		dy[st.W[i*d+f]] = x[i]
	}
	l.Apply(jdy, dy)
	var diff, norm float64
	for i := 0; i < m; i++ {
		for g := 0; g < d; g++ {
			got, want := -jdy[st.W[i*d+g]], 0.0
			if g == f {
				want = st.Lambda[f] / st.Tau * gx[i]
			}
			diff += (got - want) * (got - want)
			norm += want * want
		}
	}
	return math.Sqrt(diff / norm)
}

// TestKronBytes: the memory model of the structured deflation (kronBytes,
// in RunBytes) is what its Structure, NewKron, the first setup's fit of U
// and the deflation's coordinates on it allocate, within the temporaries
// of the fit (two feature vectors) and of θ's indices.
func TestKronBytes(t *testing.T) {
	const d = 6
	s := newSys(t, taskLawData(t, d, 0.5, 4, 3), Model{Kind: Merged, H: d, Tau: 1, Layer: FullLayer})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st, _ := s.kronStructure()
	k := deflation.NewKron(st, kronPairs(d), 0)
	k.Fit()                                                                // U, which the first setup fits
	kb := make([]float64, DeflateStepsMerged*min(kronPairs(d), d*(d+1))*d) // the deflation's coordinates on it (deflation.New)
	runtime.ReadMemStats(&after)
	got, want := float64(after.TotalAlloc-before.TotalAlloc), kronBytes(d, d)
	t.Logf("allocated %.0f bytes, model %.0f (kb %d)", got, want, len(kb))
	if got < want || got > 1.25*want {
		t.Errorf("the structured deflation and its coordinates allocated %.0f bytes, kronBytes says %.0f", got, want)
	}
}
