package ode

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// randomLU factors a random n×n matrix A (entries uniform on [−1, 1],
// diagonal shifted by n/2 to keep it well conditioned) and returns A, its
// factors and pivots.
func randomLU(n int, seed uint64) (a, lu blas64.General, ipiv []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	a = blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	for i := range a.Data {
		a.Data[i] = 2*rng.Float64() - 1
	}
	for i := 0; i < n; i++ {
		a.Data[i*n+i] += float64(n) / 2
	}
	lu = blas64.General{Rows: n, Cols: n, Stride: n, Data: append([]float64(nil), a.Data...)}
	ipiv = make([]int, n)
	lapack64.Getrf(lu, ipiv)
	return a, lu, ipiv
}

// TestLUSolve: luSolve solves A x = b (residual at rounding level) and
// agrees with lapack64.Getrs, with and without row interchanges.
func TestLUSolve(t *testing.T) {
	for _, n := range []int{1, 7, 120} {
		a, lu, ipiv := randomLU(n, uint64(n))
		b := make([]float64, n)
		for i := range b {
			b[i] = math.Sin(float64(i + 1))
		}
		x := append([]float64(nil), b...)
		luSolve(lu, ipiv, x)
		ref := append([]float64(nil), b...)
		lapack64.Getrs(blas.NoTrans, lu, blas64.General{Rows: n, Cols: 1, Stride: 1, Data: ref}, ipiv)
		var res, diff, norm float64
		for i := 0; i < n; i++ {
			ax := 0.0
			for j := 0; j < n; j++ {
				ax += a.Data[i*n+j] * x[j]
			}
			res = max(res, math.Abs(ax-b[i]))
			diff = max(diff, math.Abs(x[i]-ref[i]))
			norm = max(norm, math.Abs(x[i]))
		}
		if res > 1e-13*float64(n) || diff > 1e-14*norm*float64(n) {
			t.Errorf("n = %d: residual %.3g, difference from Getrs %.3g", n, res, diff)
		}
	}
}

// BenchmarkLUSolve: one right-hand side at the sizes of the merged full
// layer's state with H = 8 heads (n = H(D+1)² = 200, 648 at D = 4, 8),
// luSolve against lapack64.Getrs.
func BenchmarkLUSolve(b *testing.B) {
	for _, n := range []int{200, 648} {
		_, lu, ipiv := randomLU(n, 1)
		x := make([]float64, n)
		b.Run(fmt.Sprintf("n=%d/luSolve", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				luSolve(lu, ipiv, x)
			}
		})
		b.Run(fmt.Sprintf("n=%d/Getrs", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				lapack64.Getrs(blas.NoTrans, lu, blas64.General{Rows: n, Cols: 1, Stride: 1, Data: x}, ipiv)
			}
		})
	}
}

// TestDenseCholesky: with Problem.SymmetricJac BDF's dense factorization
// of P = I − γJ is Cholesky's where P is positive definite, and LU's where
// γ makes it indefinite; both solve P x = b to rounding. J = 1 − AᵀA with
// A random has the eigenvalue 1 − σ²_min(A) ≤ 1 and a spread of negative
// ones, so P is positive definite for γ = 0.1 and indefinite for γ = 10.
func TestDenseCholesky(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(3, 1))
	a := make([]float64, n*n)
	for i := range a {
		a[i] = rng.NormFloat64() / math.Sqrt(n)
	}
	jac := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += a[k*n+i] * a[k*n+j]
			}
			jac[i*n+j] = -s
		}
		jac[i*n+i]++
	}
	p := &Problem{Jac: func(_ float64, _, dst []float64) { copy(dst, jac) }, SymmetricJac: true}
	d := newDenseLU(NewIntegrator(BDF, n), p)
	y, b, x := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range b {
		b[i] = math.Cos(float64(i))
	}
	for _, tc := range []struct {
		gamma float64
		chol  bool
	}{{0.1, true}, {10, false}} {
		if _, err := d.Setup(0, y, tc.gamma, false); err != nil {
			t.Fatal(err)
		}
		d.Solve(x, b)
		var res float64
		for i := 0; i < n; i++ {
			px := x[i]
			for j := 0; j < n; j++ {
				px -= tc.gamma * jac[i*n+j] * x[j]
			}
			res = max(res, math.Abs(px-b[i]))
		}
		if d.chol != tc.chol || res > 1e-12 {
			t.Errorf("γ = %g: Cholesky %v (want %v), residual %.3g", tc.gamma, d.chol, tc.chol, res)
		}
	}
}
