//go:build !purego

package gemm

import "golang.org/x/sys/cpu"

// detected are the kernels this processor and operating system support:
// AVX2 with FMA for the 4×8 and 6×8 blocks, and AVX-512F besides for the
// 4×16 ones (cpu.X86 checks that the operating system saves the YMM, and
// the opmask and ZMM, state).
var detected = kernels{
	k8:  cpu.X86.HasAVX2 && cpu.X86.HasFMA,
	k16: cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX512F,
	k6:  cpu.X86.HasAVX2 && cpu.X86.HasFMA,
}

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

// kernel4x16 is kernel4x8 for a 4×16 block, with AVX-512 registers.
//
//go:noescape
func kernel4x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

// kernelT4x16 is kernelT4x8 for a 4×16 block, with AVX-512 registers.
//
//go:noescape
func kernelT4x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

// kernel6x8 is kernel4x8 for a 6×8 block (AVX2).
//
//go:noescape
func kernel6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

// kernelT6x8 is kernelT4x8 for a 6×8 block (AVX2).
//
//go:noescape
func kernelT6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
