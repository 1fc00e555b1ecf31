package share

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemvSameBits checks that MulVec and AddMulTVec shared by 2, 3, 5
// and 8 goroutines give the bits of one goroutine for every basis size k
// up to 30 (GMRES's largest Krylov space) and lengths off the kernels'
// blocks, and that one goroutine's results are the products (to 1e-12 of
// a plain loop's).
func TestGemvSameBits(t *testing.T) {
	for _, n := range []int{1, 15, 17, 100, 1003} {
		gemvSameBits(t, n)
	}
}

func gemvSameBits(t *testing.T, n int) {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	normal := func(m int) []float64 {
		v := make([]float64, m)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	a, x, c, x0 := normal(30*n), normal(n), normal(30), normal(n)
	for k := 1; k <= 30; k++ {
		one, onePlus := make([]float64, k), append([]float64(nil), x0...)
		MulVec(k, n, a, x, one, 1)
		AddMulTVec(k, n, -0.5, a, c, onePlus, 1)
		for i := 0; i < k; i++ {
			var dot float64
			for j := 0; j < n; j++ {
				dot += a[i*n+j] * x[j]
			}
			if math.Abs(one[i]-dot) > 1e-12*math.Sqrt(float64(n)) {
				t.Fatalf("n %d, k %d: MulVec row %d = %v, plain loop %v", n, k, i, one[i], dot)
			}
		}
		for j := 0; j < n; j++ {
			want := x0[j]
			for i := 0; i < k; i++ {
				want += -0.5 * c[i] * a[i*n+j]
			}
			if math.Abs(onePlus[j]-want) > 1e-12*float64(k) {
				t.Fatalf("n %d, k %d: AddMulTVec entry %d = %v, plain loop %v", n, k, j, onePlus[j], want)
			}
		}
		for _, w := range []int{2, 3, 5, 8} {
			y, xPlus := make([]float64, k), append([]float64(nil), x0...)
			MulVec(k, n, a, x, y, w)
			AddMulTVec(k, n, -0.5, a, c, xPlus, w)
			for i := range y {
				if math.Float64bits(y[i]) != math.Float64bits(one[i]) {
					t.Fatalf("n %d, k %d, %d goroutines: MulVec row %d = %v, one goroutine %v", n, k, w, i, y[i], one[i])
				}
			}
			for j := range xPlus {
				if math.Float64bits(xPlus[j]) != math.Float64bits(onePlus[j]) {
					t.Fatalf("n %d, k %d, %d goroutines: AddMulTVec entry %d = %v, one goroutine %v", n, k, w, j, xPlus[j], onePlus[j])
				}
			}
		}
	}
}
