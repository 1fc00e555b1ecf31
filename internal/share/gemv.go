package share

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// The passes of Gram–Schmidt over a basis held as the rows of a k × n
// row-major matrix A (GMRES's and Lanczos's), shared by rows or by
// entries so that every result is the one goroutine's, bit for bit
// (TestGemvSameBits).
const (
	// RowBlock aligns the shares of MulVec: gonum's Dgemv takes the rows
	// of A four at a time, and a share that starts off a block changes
	// the last bits of its rows.
	RowBlock = 4
	// ColBlock aligns the shares of AddMulTVec to whole cache lines; the
	// entries of x do not depend on where a share starts.
	ColBlock = 16
)

// gemvMin is the size of A (its values) from which its passes gain from
// sharing (Workers): on a 2-core machine the two passes of Gram–Schmidt
// over 15 and 30 vectors of length 270 400 (GMRES at D = 64) took 1.04
// and 2.31 ms on two goroutines against 1.68 and 3.54 ms on one.
const gemvMin = 1 << 21

// GemvWorkers returns how many goroutines MulVec and AddMulTVec should
// share a k × n matrix among on procs processors: Workers from gemvMin
// values.
func GemvWorkers(k, n, procs int) int { return Workers(k*n, gemvMin, procs) }

var impl gonum.Implementation

// MulVec sets y = A x (y[i] = ⟨a_i, x⟩, i < k) for the k × n row-major
// matrix a, its rows shared by up to workers goroutines.
func MulVec(k, n int, a, x, y []float64, workers int) {
	if k == 0 {
		return
	}
	if workers > 1 {
		Ranges(k, workers, RowBlock, func(_, lo, hi int) {
			impl.Dgemv(blas.NoTrans, hi-lo, n, 1, a[lo*n:], n, x, 1, 0, y[lo:hi], 1)
		})
		return
	}
	impl.Dgemv(blas.NoTrans, k, n, 1, a, n, x, 1, 0, y, 1)
}

// AddMulTVec adds alpha·Aᵀc = alpha·Σ_{i<k} c[i] a_i to x for the k × n
// row-major matrix a, the entries of x shared by up to workers
// goroutines.
func AddMulTVec(k, n int, alpha float64, a, c, x []float64, workers int) {
	if k == 0 {
		return
	}
	if workers > 1 {
		Ranges(n, workers, ColBlock, func(_, lo, hi int) {
			impl.Dgemv(blas.Trans, k, hi-lo, alpha, a[lo:], n, c, 1, 1, x[lo:hi], 1)
		})
		return
	}
	impl.Dgemv(blas.Trans, k, n, alpha, a, n, c, 1, 1, x, 1)
}
