package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// naive is the textbook triple loop.
func naive(m, n, k int, a, b []float64) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for l := 0; l < k; l++ {
				s += a[i*k+l] * b[l*n+j]
			}
			c[i*n+j] = s
		}
	}
	return c
}

func fill(rng *rand.Rand, n int, integer bool) []float64 {
	v := make([]float64, n)
	for i := range v {
		if integer {
			v[i] = float64(rng.IntN(17) - 8)
		} else {
			v[i] = rng.NormFloat64()
		}
	}
	return v
}

// shapes covers the kernels' blocks and every remainder of rows (mod 4) and
// columns (mod 8 and mod 16), and the shapes of the flow (D = 16, 32, 64
// with H = D).
var shapes = func() [][3]int {
	var s [][3]int
	for _, m := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13} {
		for _, n := range []int{1, 3, 7, 8, 9, 15, 16, 17, 24, 31, 32, 40, 47} {
			for _, k := range []int{1, 2, 5, 16} {
				s = append(s, [3]int{m, n, k})
			}
		}
	}
	return append(s, [3]int{16, 16, 16}, [3]int{32, 32, 32}, [3]int{64, 64, 64}, [3]int{33, 40, 7})
}()

// kernelConfigs are the kernels a test runs with: those the processor has
// (AVX-512 and AVX2, or NEON), the AVX2 path (6×8 and 4×8 blocks), the 4×8
// blocks alone, and none.
var kernelConfigs = []kernels{detected, {k8: detected.k8, k6: detected.k6}, {k8: detected.k8}, {}}

func TestMulExactOnIntegers(t *testing.T) {
	// Products and sums of small integers are exact in floating point, so
	// the kernels (with fused multiply–adds) and the plain loops must give
	// exactly the textbook result; MulTA(a) must equal Mul(aᵀ). Run with
	// the kernels the processor has, and without.
	t.Parallel()
	for _, ks := range kernelConfigs {
		t.Run(fmt.Sprintf("avx2=%v,avx512=%v", ks.k8, ks.k16), func(t *testing.T) {
			t.Parallel()
			mulExactOnIntegers(t, ks)
		})
	}
}

// TestKernel16SameBits: the AVX-512 kernels add the same fused
// multiply–adds per element, in the same order, as the AVX2 kernels, so on
// random (inexact) values the products agree bit for bit.
func TestKernel16SameBits(t *testing.T) {
	t.Parallel()
	if !detected.k16 {
		t.Skip("skipped: this processor has no AVX-512F (the 4×16 kernels are not used)")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][3]int{{64, 64, 64}, {32, 48, 17}, {8, 16, 100}} {
		m, n, k := sh[0], sh[1], sh[2]
		a, b := fill(rng, m*k, false), fill(rng, k*n, false)
		c16, c8 := make([]float64, m*n), make([]float64, m*n)
		for _, transA := range []bool{false, true} {
			f := mul
			if transA {
				f = mulTA
			}
			f(detected, m, n, k, a, b, c16)
			f(kernels{k8: true, k6: true}, m, n, k, a, b, c8)
			for i := range c16 {
				if math.Float64bits(c16[i]) != math.Float64bits(c8[i]) {
					t.Fatalf("transA %v, %d×%d×%d: c[%d] = %v with AVX-512, %v with AVX2", transA, m, n, k, i, c16[i], c8[i])
				}
			}
		}
	}
}

// TestKernelsAreFMAChains: every element of a kernel's block is the chain
// of fused multiply–adds s ← fma(a_il, b_lj, s), l increasing from s = 0
// (math.FMA rounds once, as VFMADD231PD and FMLA do), so the AVX2,
// AVX-512 and NEON kernels give the same bits: on Gaussian (inexact)
// values, the rows and columns the kernels cover (m4 = m − m mod 4,
// n8 = n − n mod 8) equal the chain exactly.
func TestKernelsAreFMAChains(t *testing.T) {
	t.Parallel()
	if !detected.k8 {
		t.Skip("skipped: no assembly kernel on this processor or in this build (purego)")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, ks := range kernelConfigs[:3] {
		for _, sh := range append(shapes, [3]int{32, 48, 17}, [3]int{8, 16, 100}) {
			m, n, k := sh[0], sh[1], sh[2]
			a, b := fill(rng, m*k, false), fill(rng, k*n, false)
			c, cTA := make([]float64, m*n), make([]float64, m*n)
			mul(ks, m, n, k, a, b, c)
			mulTA(ks, m, n, k, a, b, cTA) // a read as k×m
			for i := 0; i < m-m%4; i++ {
				for j := 0; j < n-n%8; j++ {
					var s, sTA float64
					for l := 0; l < k; l++ {
						s = math.FMA(a[i*k+l], b[l*n+j], s)
						sTA = math.FMA(a[l*m+i], b[l*n+j], sTA)
					}
					if math.Float64bits(c[i*n+j]) != math.Float64bits(s) || math.Float64bits(cTA[i*n+j]) != math.Float64bits(sTA) {
						t.Fatalf("kernels %+v, %d×%d×%d: c[%d][%d] = %v, %v (aᵀ), the chain %v, %v", ks, m, n, k, i, j, c[i*n+j], cTA[i*n+j], s, sTA)
					}
				}
			}
		}
	}
}

func mulExactOnIntegers(t *testing.T, ks kernels) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, transA := range []bool{false, true} {
		for _, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			a, b := fill(rng, m*k, true), fill(rng, k*n, true)
			c := make([]float64, m*n)
			for i := range c {
				c[i] = math.NaN() // the product must overwrite, not accumulate
			}
			want := naive(m, n, k, a, b)
			if transA {
				at := make([]float64, k*m) // aᵀ, k×m, with (aᵀ)ᵀ = a
				for i := 0; i < m; i++ {
					for l := 0; l < k; l++ {
						at[l*m+i] = a[i*k+l]
					}
				}
				mulTA(ks, m, n, k, at, b, c)
			} else {
				mul(ks, m, n, k, a, b, c)
			}
			for i := range c {
				if c[i] != want[i] {
					t.Fatalf("transA %v, %d×%d×%d: c[%d] = %v, want %v", transA, m, n, k, i, c[i], want[i])
				}
			}
		}
	}
}

// TestLoopsSameBitsAsNaive: the portable kernel sums each element's terms
// in increasing order from zero, as the textbook loop does, so its blocks
// (3×2, their edges, single rows) change no bit: on Gaussian (inexact)
// values loops and loopsTA equal naive exactly, at every shape, and at a
// leading dimension wider than the block.
func TestLoopsSameBitsAsNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		a, b := fill(rng, m*k, false), fill(rng, k*n, false)
		want := naive(m, n, k, a, b)
		at := make([]float64, k*m)
		for i := 0; i < m; i++ {
			for l := 0; l < k; l++ {
				at[l*m+i] = a[i*k+l]
			}
		}
		// c inside a wider matrix (leading dimension n+3), its margins
		// untouched.
		ldc := n + 3
		for _, transA := range []bool{false, true} {
			c := make([]float64, m*ldc)
			for i := range c {
				c[i] = math.NaN()
			}
			if transA {
				loopsTA(m, n, k, at, m, b, n, c, ldc)
			} else {
				loops(m, n, k, a, k, b, n, c, ldc)
			}
			for i := 0; i < m; i++ {
				for j := 0; j < ldc; j++ {
					got := c[i*ldc+j]
					if j >= n {
						if !math.IsNaN(got) {
							t.Fatalf("transA %v, %d×%d×%d: wrote c[%d][%d] outside the block", transA, m, n, k, i, j)
						}
						continue
					}
					if math.Float64bits(got) != math.Float64bits(want[i*n+j]) {
						t.Fatalf("transA %v, %d×%d×%d: c[%d][%d] = %v, naive %v", transA, m, n, k, i, j, got, want[i*n+j])
					}
				}
			}
		}
	}
}

func TestMulMatchesGonum(t *testing.T) {
	t.Parallel()
	// On Gaussian entries the result agrees with gonum's Dgemm to a few
	// ulps of the sum of |a_il b_lj| (the bound of a recursive summation
	// with or without fused multiply–adds, Higham, Accuracy and Stability
	// of Numerical Algorithms, §3.1).
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		a, b := fill(rng, m*k, false), fill(rng, k*n, false)
		c := make([]float64, m*n)
		Mul(m, n, k, a, b, c)
		want := blas64.General{Rows: m, Cols: n, Stride: n, Data: make([]float64, m*n)}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: m, Cols: k, Stride: k, Data: a},
			blas64.General{Rows: k, Cols: n, Stride: n, Data: b}, 0, want)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var mag float64
				for l := 0; l < k; l++ {
					mag += math.Abs(a[i*k+l] * b[l*n+j])
				}
				if d := math.Abs(c[i*n+j] - want.Data[i*n+j]); d > 2*float64(k)*0x1p-52*mag {
					t.Fatalf("%d×%d×%d: c[%d][%d] off by %g (scale %g)", m, n, k, i, j, d, mag)
				}
			}
		}
	}
}

func TestMulEdges(t *testing.T) {
	t.Parallel()
	Mul(0, 3, 2, nil, make([]float64, 6), nil)
	c := []float64{1, 2, 3, 4}
	Mul(2, 2, 0, nil, nil, c)
	for _, v := range c {
		if v != 0 {
			t.Fatalf("k = 0: c = %v, want zeros", c)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("short c: no panic")
		}
	}()
	Mul(2, 2, 2, make([]float64, 4), make([]float64, 4), make([]float64, 3))
}

// BenchmarkMul measures square products of the flow's sizes (H = D),
// 2n³ flops each, a·b (mul) and aᵀ·b (mulTA), with each kernel this
// processor has: AVX-512 (4×16 blocks), AVX2 (6×8), AVX2 4×8 blocks alone,
// NEON (arm64's 4×8), and the portable kernel. On a shared machine the
// best of several runs is the kernel's speed:
//
//	go test ./flow/internal/gemm -run XXX -bench Mul -count 10
func BenchmarkMul(b *testing.B) {
	configs := []struct {
		name string
		ks   kernels
	}{{"avx512", kernels{k8: true, k16: true}}, {"avx2", kernels{k8: true, k6: true}}, {"4x8", kernels{k8: true}}, {"portable", kernels{}}}
	for _, n := range []int{16, 32, 64, 128} {
		rng := rand.New(rand.NewPCG(5, 6))
		a, bb, c := fill(rng, n*n, false), fill(rng, n*n, false), make([]float64, n*n)
		for _, cf := range configs {
			if cf.ks.k16 && !detected.k16 || cf.ks.k6 && !detected.k6 || cf.ks.k8 && !detected.k8 {
				continue // a kernel this processor or build lacks
			}
			for _, transA := range []bool{false, true} {
				f, name := mul, "mul"
				if transA {
					f, name = mulTA, "mulTA"
				}
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, cf.name, name), func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; i < b.N; i++ {
						f(cf.ks, n, n, n, a, bb, c)
					}
					b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlops")
				})
			}
		}
	}
}

// TestRowsSameBits checks that products computed by ranges of rows
// starting at multiples of RowBlock (Mul on a[i0·k:], c[i0·n:];
// MulTARows) equal the whole product bit for bit, with every kernel.
func TestRowsSameBits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, ks := range kernelConfigs {
		for _, sh := range append(shapes, [3]int{65, 4160 / 16, 64}) {
			m, n, k := sh[0], sh[1], sh[2]
			a, b := fill(rng, m*k, false), fill(rng, k*n, false)
			want, wantTA := make([]float64, m*n), make([]float64, m*n)
			mul(ks, m, n, k, a, b, want)
			mulTA(ks, m, n, k, a, b, wantTA) // a read as k×m
			for _, cut := range []int{RowBlock, 2 * RowBlock, m - m%RowBlock} {
				if cut <= 0 || cut >= m {
					continue
				}
				got, gotTA := make([]float64, m*n), make([]float64, m*n)
				mul(ks, cut, n, k, a, b, got)
				mul(ks, m-cut, n, k, a[cut*k:], b, got[cut*n:])
				mulTARows(ks, 0, cut, m, n, k, a, b, gotTA)
				mulTARows(ks, cut, m, m, n, k, a, b, gotTA)
				for i := range want {
					if got[i] != want[i] || gotTA[i] != wantTA[i] {
						t.Fatalf("kernels %+v, %d×%d×%d cut at row %d: entry %d differs (%g, %g against %g, %g)",
							ks, m, n, k, cut, i, got[i], gotTA[i], want[i], wantTA[i])
					}
				}
			}
		}
	}
}
