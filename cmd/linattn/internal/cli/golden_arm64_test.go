//go:build arm64 && !purego

package cli

// goldenPlatform names the matrix kernels the flow uses here: NEON blocks
// whose fused multiply–adds give the bits of the amd64 kernels
// (flow/internal/gemm's TestKernelsAreFMAChains), but the Go compiler
// fuses multiply–adds in the rest of the code on arm64 too, so the outputs
// are arm64's own (no files: the cases run for their round trips).
func goldenPlatform() string { return "arm64" }

// buildTags are the tags of this build, for a binary built from a test.
const buildTags = ""
