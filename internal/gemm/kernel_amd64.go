//go:build !purego

package gemm

// useKernel reports whether the processor and operating system support
// AVX2 and FMA (CPUID leaf 7 EBX bit 5; leaf 1 ECX bits 12 FMA, 27 OSXSAVE,
// 28 AVX; XCR0 bits 1–2: the OS saves the YMM state).
var useKernel = hasAVX2FMA() // a variable so that tests can turn it off

// useKernel16 reports whether the processor and operating system also
// support AVX-512F (CPUID leaf 7 EBX bit 16; XCR0 bits 5–7: the OS saves
// the opmask and ZMM state), for the 4×16 kernels.
var useKernel16 = useKernel && hasAVX512F()

func hasAVX2FMA() bool {
	if maxLeaf, _, _, _ := cpuid(0, 0); maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0
}

func hasAVX512F() bool {
	if xcr0, _ := xgetbv(); xcr0&0xe6 != 0xe6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<16) != 0
}

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)

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
