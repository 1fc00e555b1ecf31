package theory

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// luReference holds e_ICL and e_IDG computed by the published formulas of
// Lu et al.: theory_runs/common.py of
// github.com/Pehlevan-Group/incontext-asymptotics-experiments at commit
// 9f9b5626befd5ff58239f4a074657c6d9589fb85, run with Debian's python3-numpy
// 1.24.2 as
//
//	ridgeless_icl(alpha, kappa, tau, rho), ridgeless_idg(alpha, kappa, tau, rho)
//
// printed with "%.17g". Their code cannot take tau = inf (it forms
// (3 − 2τ)/(τ − 1) = inf/inf), so the τ = +Inf rows were computed at
// tau = 1e12: their values differ from the limit by O(1/τ) = O(1e-12),
// inside the tolerance.
var luReference = []struct {
	kappa, alpha, tau, rho float64 // tau: +Inf here, 1e12 in the Python call
	icl, idg               float64
}{
	// κ < 1.
	{0.5, 1, math.Inf(1), 0, 0.79289321881386665, 0.29289321881374542},
	{0.5, 10, math.Inf(1), 0.01, 0.55876352607286373, 0.056199951713864243},
	{0.2, 10, math.Inf(1), 0.25, 1.0737466406433036, 0.27424790924157677},
	// κ ≈ 1.
	{0.95, 10, math.Inf(1), 0.01, 0.24844164802831531, 0.081948982300090373},
	{1, 1, math.Inf(1), 0.25, 0.95821546770552812, 0.68016394281949311},
	{1, 10, math.Inf(1), 0.01, 0.22898280600007487, 0.083599483089069879},
	{1.05, 1, math.Inf(1), 0, 0.6505661958233826, 0.3870296650390862},
	// κ > 1.
	{2, 1, math.Inf(1), 0.01, 0.58719899544873799, 0.45069507019341837},
	{2, 10, math.Inf(1), 0.25, 0.38358655501716715, 0.35307618379046485},
	{10, 10, math.Inf(1), 0, 0.09193431627759717, 0.090098048640811612},
	// Finite τ, both branches (tau as given).
	{0.5, 10, 0.5, 0.01, 0.82084927214922454, 0.24634336365068171},
	{0.2, 10, 0.2, 0.01, 0.89725471781672717, 0.1929511395606385},
	{0.5, 1, 0.85, 0, 3.0829364989377916, 2.0353059436789125},
	{2, 1, 2, 0.25, 1.6908453558514327, 1.4787617924646224},
	{1, 10, 10, 0.01, 0.25645316973535559, 0.092888314543318085},
	{20, 10, 1.15, 0.01, 0.80670173411921076, 0.77692450020289505},
}

func TestLuReference(t *testing.T) {
	for _, c := range luReference {
		p := LuParams{Kappa: c.kappa, Alpha: c.alpha, Tau: c.tau, Rho: c.rho}
		tol := 1e-12
		if math.IsInf(c.tau, 1) {
			tol = 1e-10 // the reference was taken at τ = 1e12
		}
		icl, err := LuICL(p)
		if err != nil {
			t.Fatal(err)
		}
		idg, err := LuIDG(p)
		if err != nil {
			t.Fatal(err)
		}
		if !near(icl, c.icl, tol) {
			t.Errorf("LuICL(%+v) = %.17g, want %.17g", p, icl, c.icl)
		}
		if !near(idg, c.idg, tol) {
			t.Errorf("LuIDG(%+v) = %.17g, want %.17g", p, idg, c.idg)
		}
	}
}

// TestLuLimits checks the closed forms the formulas reduce to.
func TestLuLimits(t *testing.T) {
	inf := math.Inf(1)
	for _, rho := range []float64{0, 0.01, 0.25} {
		for _, alpha := range []float64{1, 10} {
			q := (1 + rho) / alpha
			// κ = +Inf, τ = +Inf: the optimal shrinkage of β̂ = w + √q ξ gives
			// ρ + q/(1+q) for both tests (docs/math.md).
			p := LuParams{Kappa: inf, Alpha: alpha, Tau: inf, Rho: rho}
			want := rho + q/(1+q)
			checkLu(t, p, want, want, 1e-14)
			// κ large: e_IDG → e_ICL, both to the κ = ∞ value.
			p.Kappa = 1e8
			checkLu(t, p, want, want, 1e-7)
			// κ → 0: only the mean of no task is learned; the zero predictor.
			p.Kappa = 1e-9
			checkLu(t, p, 1+rho, rho, 1e-7)
			// τ → 0: no pretraining data, the zero predictor for both.
			for _, kappa := range []float64{0.5, 2, inf} {
				p = LuParams{Kappa: kappa, Alpha: alpha, Tau: 1e-9, Rho: rho}
				checkLu(t, p, 1+rho, 1+rho, 1e-6)
			}
			// τ → ∞ is continuous with τ = +Inf.
			for _, kappa := range []float64{0.5, 2, inf} {
				pi := LuParams{Kappa: kappa, Alpha: alpha, Tau: inf, Rho: rho}
				icl, _ := LuICL(pi)
				idg, _ := LuIDG(pi)
				pi.Tau = 1e9
				checkLu(t, pi, icl, idg, 1e-8)
			}
		}
		// α → ∞ at τ = +Inf: the context reveals w; below κ = 1 the model
		// only predicts inside the span of the K tasks, so e_ICL → ρ + 1 − κ,
		// while e_IDG → ρ for every κ.
		for _, kappa := range []float64{0.2, 0.5, 0.9, 1.5, 4} {
			p := LuParams{Kappa: kappa, Alpha: 1e9, Tau: inf, Rho: rho}
			checkLu(t, p, rho+math.Max(0, 1-kappa), rho, 1e-6)
		}
	}
}

func checkLu(t *testing.T, p LuParams, icl, idg, tol float64) {
	t.Helper()
	gotICL, err := LuICL(p)
	if err != nil {
		t.Fatal(err)
	}
	gotIDG, err := LuIDG(p)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(gotICL-icl) > tol*(1+math.Abs(icl)) {
		t.Errorf("LuICL(%+v) = %.15g, want %.15g", p, gotICL, icl)
	}
	if math.Abs(gotIDG-idg) > tol*(1+math.Abs(idg)) {
		t.Errorf("LuIDG(%+v) = %.15g, want %.15g", p, gotIDG, idg)
	}
}

// TestLuInfiniteTauFiniteD checks the τ = +Inf formulas against their
// derivation at finite D: with infinite pretraining on the tasks w_1..w_K,
// β̂ ≈ w + √q ξ and the optimal map is Γ = R̂(R̂ + qI)⁻¹ with
// R̂ = (1/K) Σ w_k w_kᵀ, so that
//
//	e_IDG = ρ + (q/D) tr R̂(R̂ + qI)⁻¹,
//	e_ICL = ρ + (1/D) tr[q²(R̂ + qI)⁻² + q R̂²(R̂ + qI)⁻²].
//
// At D = 400 these traces concentrate around the D → ∞ values to a few
// parts in 10⁴ (tolerance 2·10⁻³).
func TestLuInfiniteTauFiniteD(t *testing.T) {
	const d = 400
	rng := rand.New(rand.NewPCG(29, 4))
	for _, c := range []struct{ kappa, alpha, rho float64 }{
		{0.5, 10, 0.01}, {1, 1, 0.25}, {2, 10, 0}, {4, 1, 0.01},
	} {
		k := int(c.kappa * d)
		w := mat.NewDense(k, d, nil)
		for i := range k {
			for j := range d {
				w.Set(i, j, rng.NormFloat64())
			}
		}
		var r mat.SymDense
		r.SymOuterK(1/float64(k), w.T())
		var eig mat.EigenSym
		if !eig.Factorize(&r, false) {
			t.Fatal("eigen decomposition failed")
		}
		q := (1 + c.rho) / c.alpha
		var icl, idg float64
		for _, l := range eig.Values(nil) {
			l = math.Max(l, 0)
			icl += (q*q + q*l*l) / ((l + q) * (l + q))
			idg += q * l / (l + q)
		}
		icl = c.rho + icl/d
		idg = c.rho + idg/d
		p := LuParams{Kappa: c.kappa, Alpha: c.alpha, Tau: math.Inf(1), Rho: c.rho}
		checkLu(t, p, icl, idg, 2e-3)
	}
}

// TestWishartResolvent checks M_κ against its defining quadratic and
// against the form of common.py where that form does not cancel.
func TestWishartResolvent(t *testing.T) {
	for _, kappa := range []float64{1e-3, 0.2, 1, 3, 1e3, math.Inf(1)} {
		for _, x := range []float64{1e-6, 0.1, 1, 10, 1e4} {
			m := wishartResolvent(x, kappa)
			res := x/kappa*m*m + (x+1-1/kappa)*m - 1
			if !(m > 0) || math.Abs(res) > 1e-12*(1+x/kappa*m*m+math.Abs(x+1-1/kappa)*m) {
				t.Errorf("M_%v(%v) = %v: residual %v", kappa, x, m, res)
			}
			b := x + 1 - 1/kappa
			if b > 0 {
				if want := 2 / (b + math.Sqrt(b*b+4*x/kappa)); !near(m, want, 1e-14) {
					t.Errorf("M_%v(%v) = %v, want %v", kappa, x, m, want)
				}
			}
		}
	}
}

func TestLuValidate(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	good := LuParams{Kappa: 1, Alpha: 10, Tau: inf, Rho: 0.01}
	for _, c := range []struct {
		mod   func(*LuParams)
		field string
	}{
		{func(p *LuParams) { p.Kappa = 0 }, "Kappa"},
		{func(p *LuParams) { p.Kappa = nan }, "Kappa"},
		{func(p *LuParams) { p.Alpha = -1 }, "Alpha"},
		{func(p *LuParams) { p.Alpha = inf }, "Alpha"},
		{func(p *LuParams) { p.Tau = 1 }, "Tau"},
		{func(p *LuParams) { p.Tau = 0 }, "Tau"},
		{func(p *LuParams) { p.Tau = nan }, "Tau"},
		{func(p *LuParams) { p.Rho = -0.1 }, "Rho"},
		{func(p *LuParams) { p.Rho = inf }, "Rho"},
	} {
		p := good
		c.mod(&p)
		_, err1 := LuICL(p)
		_, err2 := LuIDG(p)
		for _, err := range []error{err1, err2} {
			if err == nil || !strings.Contains(err.Error(), "LuParams."+c.field) {
				t.Errorf("%+v: error %v, want one naming %s", p, err, c.field)
			}
		}
	}
	if err := good.Validate(); err != nil {
		t.Errorf("valid %+v: %v", good, err)
	}
	if _, _, err := LuScale(8, 0, 4, 0.25, 1); err == nil || !strings.Contains(err.Error(), "n = 0") {
		t.Errorf("LuScale n = 0: error %v", err)
	}
}

func TestLuScale(t *testing.T) {
	p, scale, err := LuScale(8, 80, 16, 0.5, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := LuParams{Kappa: 2, Alpha: 10, Tau: math.Inf(1), Rho: 0.0625}
	if p != want || scale != 8 {
		t.Errorf("LuScale = %+v, %v; want %+v, 8", p, scale, want)
	}
	p, _, _ = LuScale(8, 80, 0, 0, 1)
	if !math.IsInf(p.Kappa, 1) {
		t.Errorf("LuScale K = 0: Kappa = %v, want +Inf", p.Kappa)
	}
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}
