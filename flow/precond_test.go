package flow

import (
	"context"
	"math"
	"slices"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/law"
)

// TestJacEntries: every entry of jacEntries agrees with the dense Jacobian
// of the exact linearization (Linearization.Dense, itself checked against
// finite differences in jacobian_test.go) at random states of models with
// R = 1 and R > 1, H < D and H > D, τ ≠ 1.
func TestJacEntries(t *testing.T) {
	for _, c := range []struct{ d, h, r int }{{4, 4, 1}, {5, 3, 2}, {3, 5, 3}, {6, 6, 1}} {
		nu, _ := law.NuFixed(9)
		data, err := law.NewData(law.PowerLaw(c.d, 1, 1), law.RandomRotation(c.d, 2), law.Lengths{Nu: nu})
		if err != nil {
			t.Fatal(err)
		}
		s := newSys(t, data, Model{Kind: Separate, H: c.h, R: c.r, Tau: 1.7})
		y, _ := s.Init(0.8, 5)
		ye := s.ToEigen(nil, y)
		n := s.Len()
		dense := make([]float64, n*n)
		l := s.NewLinearization()
		l.At(ye)
		l.Dense(dense)
		je := newJacEntries(s)
		je.at(s, ye)
		var worst, scale float64
		for _, v := range dense {
			scale = math.Max(scale, math.Abs(v))
		}
		for x := 0; x < n; x++ {
			for y := 0; y < n; y++ {
				worst = math.Max(worst, math.Abs(je.entry(x, y)-dense[x*n+y]))
			}
		}
		if worst > 1e-13*scale {
			t.Errorf("D=%d H=%d R=%d: entries differ from Linearization.Dense by %.3g (largest entry %.3g)", c.d, c.h, c.r, worst, scale)
		}
	}
}

// TestCouplingScanLimit: the couplings a bounded scan keeps are the
// strongest of those the unbounded scan finds, the first limit of them in
// strongerFirst's order, bit for bit, for bounds that prune during the
// scan (a tenth of them) and only at its end (two thirds), at a random
// state of the D = 6 separate model with many couplings (γ = 10³); and a
// coupling takes the bytes RunBytes counts.
func TestCouplingScanLimit(t *testing.T) {
	data, err := law.NewData(law.PowerLaw(6, 1, 1), nil, law.Lengths{N: 31})
	if err != nil {
		t.Fatal(err)
	}
	s := newSys(t, data, Model{Kind: Separate, H: 6, R: 2, Tau: 1})
	y, _ := s.Init(0.8, 3)
	scan := func(limit int) []coupling {
		p := s.Preconditioner().(*blockPrecond)
		p.cs.limit = limit
		p.setScales(1e3, true, s.ToEigen(nil, y))
		p.findCouplings()
		return p.cands
	}
	if size := unsafe.Sizeof(coupling{}); size != couplingBytes {
		t.Errorf("a coupling takes %d bytes, RunBytes counts %d", size, couplingBytes)
	}
	all := scan(0)
	slices.SortFunc(all, strongerFirst)
	if len(all) < 100 {
		t.Fatalf("%d couplings at γ = 10³, want a hundred or more to bound", len(all))
	}
	for _, limit := range []int{len(all) / 10, 2 * len(all) / 3} {
		got := scan(limit)
		if !slices.Equal(got, all[:limit]) {
			t.Errorf("limit %d of %d: the bounded scan kept other couplings than the strongest", limit, len(all))
		}
	}
}

// TestPreconditionerSpectrum: on the D = 16 power-law run (N = 31, H = 16,
// R = 1), at the middle of the 8th plateau and near the end, with
// γ = h/2 for steps h up to a twentieth of the plateau, the block
// preconditioner P of I − γJ is symmetric positive definite and
// P⁻¹(I − γJ) has its eigenvalues in [0.25, 2.5], where those of I − γJ
// spread over four decades; every block has at most precondMaxBlock
// variables.
func TestPreconditionerSpectrum(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: ~2 s")
	}
	s, y0 := powerLawExample(t, 16)
	// The plateaus m = 8 and m = 15 in the middle (geometric) between the
	// drops of the default run.
	tr, err := s.Run(context.Background(), y0, RunSettings{T: 5.2e6, Times: []float64{5.47e5, 5.16e6}})
	if err != nil {
		t.Fatal(err)
	}
	n := s.Len()
	for k, plateau := range []float64{1.55e5, 3.75e6} {
		ye := s.ToEigen(nil, tr.States[(k)*n:(k+1)*n])
		l := s.NewLinearization()
		l.At(ye)
		jac := make([]float64, n*n)
		l.Dense(jac)
		for _, h := range []float64{plateau / 2000, plateau / 200, plateau / 20} {
			gamma := h / 2
			p := s.Preconditioner().(*blockPrecond)
			if _, err := p.Setup(0, ye, gamma, false); err != nil {
				t.Fatal(err)
			}
			lo, hi, spread := preconditionedSpectrum(p, jac, n, gamma)
			if lo < 0.25 || hi > 2.5 {
				t.Errorf("t = %g, γ = %g: spectrum of P⁻¹(I − γJ) in [%.3g, %.3g]", tr.Times[k], gamma, lo, hi)
			}
			largest := 0
			for b := 0; b+1 < len(p.blockOff); b++ {
				largest = max(largest, int(p.blockOff[b+1]-p.blockOff[b]))
			}
			t.Logf("t = %.3g, γ = %.3g: I − γJ spans %.3g, P⁻¹(I − γJ) in [%.3g, %.3g], %d blocks, largest %d", tr.Times[k], gamma, spread, lo, hi, len(p.blockOff)-1, largest)
		}
	}
}

// preconditionedSpectrum returns the extreme eigenvalues of P⁻¹A,
// A = I − γJ, as those of the symmetric L⁻¹AL⁻ᵀ (P = LLᵀ, formed from P⁻¹
// applied to the unit vectors), and the condition number of A.
func preconditionedSpectrum(p *blockPrecond, jac []float64, n int, gamma float64) (lo, hi, spread float64) {
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := -gamma * jac[i*n+j]
			if i == j {
				v++
			}
			a.SetSym(i, j, v)
		}
	}
	pinv := mat.NewDense(n, n, nil)
	e, col := make([]float64, n), make([]float64, n)
	for j := 0; j < n; j++ {
		e[j] = 1
		p.Solve(col, e)
		e[j] = 0
		pinv.SetCol(j, col)
	}
	var prod mat.Dense
	prod.Mul(pinv, mat.DenseCopyOf(a)) // a general product (Dgemm), faster than Dsymm's
	var eig mat.Eigen
	eig.Factorize(&prod, mat.EigenNone)
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range eig.Values(nil) {
		lo, hi = math.Min(lo, real(v)), math.Max(hi, real(v))
	}
	var es mat.EigenSym
	es.Factorize(a, false)
	ev := es.Values(nil)
	return lo, hi, ev[n-1] / ev[0]
}
