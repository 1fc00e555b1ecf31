package gemm

import "github.com/linattn/linattn/internal/share"

// Workers returns the number of goroutines that should share the product
// of m×k by k×n factors by rows of the result (MulShared, MulTAShared) on
// procs processors (share.Procs): all of them from shareMin multiply–adds
// (the full layer's tensor from D ≥ 45 at H = D), else one. With
// law.Operator's MulVec (flow's BenchmarkFullEval, deriv, both cores
// free) D = 32 took 0.39 ms shared against 0.36 on one goroutine, D = 64
// 3.4 against 4.5 ms, and a JVP 5.6 against 7.4 ms.
func Workers(m, n, k, procs int) int { return share.Workers(m*n*k, shareMin, procs) }

const shareMin = 1 << 22

// MulShared sets c = a·b (Mul), its rows shared by w goroutines from
// multiples of RowBlock: the bits of one goroutine.
func MulShared(w, m, n, k int, a, b, c []float64) {
	if w <= 1 {
		Mul(m, n, k, a, b, c)
		return
	}
	share.Ranges(m, w, RowBlock, func(_, lo, hi int) {
		Mul(hi-lo, n, k, a[lo*k:], b, c[lo*n:])
	})
}

// MulTAShared sets c = aᵀ·b (MulTA), its rows shared by w goroutines
// from multiples of RowBlock: the bits of one goroutine.
func MulTAShared(w, m, n, k int, a, b, c []float64) {
	if w <= 1 {
		MulTA(m, n, k, a, b, c)
		return
	}
	share.Ranges(m, w, RowBlock, func(_, lo, hi int) {
		MulTARows(lo, hi, m, n, k, a, b, c)
	})
}
