//go:build amd64 && !purego

package cli

import "golang.org/x/sys/cpu"

// goldenPlatform names the matrix kernels the flow uses here (see
// flow/internal/gemm): their fused multiply–adds set the last bits. The
// AVX-512 kernels add the same products in the same order as the AVX2
// ones (gemm's TestKernel16SameBits), so both compare with one set of
// files.
func goldenPlatform() string {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return "amd64-avx2"
	}
	return "generic"
}

// buildTags are the tags of this build, for a binary built from a test.
const buildTags = ""
