package ode

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// luSolve overwrites b with A⁻¹b, for the factors of A that
// lapack64.Getrf left in lu and ipiv (P·A = L·U, L unit lower): the row
// interchanges in order, then L and U by rows (blas64.Trsv). This is
// lapack64.Getrs for one right-hand side, but Getrs solves through Dtrsm,
// whose row-major loops over a single column take one axpy of length 1
// per entry: at n = 648 (the merged full layer at D = 8, H = 8) seven
// times slower (BenchmarkLUSolve).
func luSolve(lu blas64.General, ipiv []int, b []float64) {
	for i, p := range ipiv {
		if p != i {
			b[i], b[p] = b[p], b[i]
		}
	}
	v := blas64.Vector{N: len(b), Inc: 1, Data: b}
	blas64.Trsv(blas.NoTrans, blas64.Triangular{Uplo: blas.Lower, Diag: blas.Unit, N: lu.Rows, Stride: lu.Stride, Data: lu.Data}, v)
	blas64.Trsv(blas.NoTrans, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: lu.Rows, Stride: lu.Stride, Data: lu.Data}, v)
}

// cholSolve overwrites b with A⁻¹b for the Cholesky factor A = UᵀU that
// lapack64.Potrf left in the upper triangle of u: Uᵀ then U by rows
// (blas64.Trsv, as luSolve).
func cholSolve(u blas64.General, b []float64) {
	v := blas64.Vector{N: len(b), Inc: 1, Data: b}
	t := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: u.Rows, Stride: u.Stride, Data: u.Data}
	blas64.Trsv(blas.Trans, t, v)
	blas64.Trsv(blas.NoTrans, t, v)
}
