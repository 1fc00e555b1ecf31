//go:build (!amd64 && !arm64) || purego

package gemm

// detected: no kernels; every product is plain loops.
var detected kernels

func kernel4x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no kernel on this platform")
}

func kernelT4x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no kernel on this platform")
}

func kernel4x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no kernel on this platform")
}

func kernelT4x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no kernel on this platform")
}

func kernel6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no 6×8 kernel on this platform")
}

func kernelT6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no 6×8 kernel on this platform")
}
