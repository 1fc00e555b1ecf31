//go:build !purego

package gemm

// detected: the 4×8 blocks with NEON (Advanced SIMD, which the arm64
// architecture requires, so it needs no detection); no 4×16 or 6×8
// blocks (NEON's registers hold two float64, and 4×8 blocks already take
// 24 of its 32).
var detected = kernels{k8: true}

// kernel4x8 sets the 4×8 block at c (leading dimension ldc) to the product
// of the 4×k rows at a (leading dimension lda) and the k×8 columns at b
// (leading dimension ldb).
//
//go:noescape
func kernel4x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

// kernelT4x8 is kernel4x8 with a the k×4 columns of a row-major matrix
// (leading dimension lda), read as the 4×k rows of its transpose.
//
//go:noescape
func kernelT4x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

func kernel4x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no 4×16 kernel on arm64")
}

func kernelT4x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no 4×16 kernel on arm64")
}

func kernel6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no 6×8 kernel on arm64")
}

func kernelT6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no 6×8 kernel on arm64")
}
