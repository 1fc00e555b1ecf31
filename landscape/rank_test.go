package landscape

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// rankCase is a separate model with R > 1 whose plateaus alternate.
type rankCase struct {
	name string
	lam  []float64
	h, r int
}

var rankCases = []rankCase{
	{"paper λ, H=5, R=2", []float64{0.4, 0.3, 0.2, 0.1}, 5, 2},
	{"paper λ, H=3, R=3", []float64{0.4, 0.3, 0.2, 0.1}, 3, 3},
	{"power law D=6, H=4, R=2", law.PowerLaw(6, 1, 1), 4, 2},
	{"power law D=6, H=3, R=3", law.PowerLaw(6, 1, 1), 3, 3},
}

func (c rankCase) system(t *testing.T) *flow.System {
	t.Helper()
	nu, _ := law.NuFixed(31)
	data, err := law.NewData(c.lam, law.RandomRotation(len(c.lam), 1), law.Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: c.h, R: c.r, Tau: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPackedPathClassification: with rank R > 1, training from small
// initialization packs R eigenvectors into a head. On the path, the packed
// point after m learned eigenvectors is a higher-order saddle (no positive
// Jacobian eigenvalue, a dormant-head escape) when R divides m, and a strict
// saddle otherwise — and the plateaus the flow shows from small
// initialization (seed 3, w_init = 0.01) are long exactly where the
// landscape says higher-order saddle: each at least 20 times every short one
// (the paper's low-rank section, measured).
func TestPackedPathClassification(t *testing.T) {
	for _, c := range rankCases {
		s := c.system(t)
		d := s.Dim()
		y0, _ := s.Init(0.01, 3)
		tr, err := s.Run(context.Background(), y0, flow.RunSettings{})
		if err != nil || len(tr.Transitions) != d {
			t.Fatalf("%s: run: %v, %d drops", c.name, err, len(tr.Transitions))
		}
		var longest, shortestLong float64 = 0, math.Inf(1)
		for m := 1; m < d; m++ {
			p, err := AnalyzeSubset(s, 1<<m-1)
			if err != nil {
				t.Fatal(err)
			}
			st := p.Stability
			plateau := tr.Transitions[m].T - tr.Transitions[m-1].T // after m learned
			if m%c.r == 0 {
				if st.Class != HigherOrderSaddle || st.Positive != 0 || len(st.Escapes) == 0 {
					t.Errorf("%s, m=%d: %v with %d positive eigenvalues, %d escapes; want a higher-order saddle", c.name, m, st.Class, st.Positive, len(st.Escapes))
				}
				shortestLong = math.Min(shortestLong, plateau)
			} else {
				if st.Class != StrictSaddle || st.Positive == 0 {
					t.Errorf("%s, m=%d: %v; want a strict saddle", c.name, m, st.Class)
				}
				longest = math.Max(longest, plateau)
			}
		}
		if shortestLong < 20*longest {
			t.Errorf("%s: shortest long plateau %.0f τ, longest short one %.0f τ; want ≥ 20×", c.name, shortestLong, longest)
		}
		t.Logf("%s: long plateaus ≥ %.0f τ, short ones ≤ %.0f τ", c.name, shortestLong, longest)
	}
}

// TestPackedUnstableRate: at an on-path packed point with m not a multiple
// of R, the flow leaves along its unstable direction: started 10⁻⁹ away
// (random direction), the distance grows like e^{μt} with μ the largest
// Jacobian eigenvalue. The rate is measured from the flow between distances
// 10⁻⁶ and 10⁻⁴ and must equal UnstableRate to 0.5 %.
func TestPackedUnstableRate(t *testing.T) {
	for _, c := range rankCases[:2] {
		s := c.system(t)
		for m := 1; m < s.Dim(); m++ {
			if m%c.r == 0 {
				continue
			}
			p, err := AnalyzeSubset(s, 1<<m-1)
			if err != nil {
				t.Fatal(err)
			}
			mu := p.Stability.UnstableRate
			got := departureRate(t, s, p.State)
			if math.Abs(got-mu) > 0.005*mu {
				t.Errorf("%s, m=%d: flow departs at rate %.5g, Jacobian's largest eigenvalue %.5g", c.name, m, got, mu)
			}
			t.Logf("%s, m=%d: departure rate %.5g, largest Jacobian eigenvalue %.5g", c.name, m, got, mu)
		}
	}
}

// departureRate integrates the flow from a random point 10⁻⁹ from the fixed
// point y (original basis) and returns ln(d₂/d₁)/(t₂ − t₁) between the first
// times the distance exceeds d₁ = 10⁻⁶ and d₂ = 10⁻⁴.
func departureRate(t *testing.T, s *flow.System, y []float64) float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	start := append([]float64(nil), y...)
	for i := range start {
		start[i] += 1e-9 * rng.NormFloat64() / math.Sqrt(float64(len(y)))
	}
	yStar := s.ToEigen(nil, y)
	var t1, t2, d1, d2 float64
	stop := context.Canceled
	obs := func(tt float64, ye []float64, _ float64) error {
		var dist float64
		for i, v := range ye {
			dist += (v - yStar[i]) * (v - yStar[i])
		}
		dist = math.Sqrt(dist)
		switch {
		case t1 == 0 && dist > 1e-6:
			t1, d1 = tt, dist
		case t1 != 0 && dist > 1e-4:
			t2, d2 = tt, dist
			return stop
		}
		return nil
	}
	_, err := s.Run(context.Background(), start, flow.RunSettings{T: 1e6, Times: []float64{0}, Observer: obs,
		RTol: 1e-11, ATol: 1e-16, MaxSteps: 1e6})
	if t2 == 0 {
		t.Fatalf("the flow did not depart: %v", err)
	}
	return math.Log(d2/d1) / (t2 - t1)
}
