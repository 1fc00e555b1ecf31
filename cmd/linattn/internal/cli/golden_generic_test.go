//go:build (!amd64 && !arm64) || purego

package cli

import "runtime"

// goldenPlatform: without assembly kernels every product is the portable
// kernel's. On amd64 its sums are a product and an addition rounded each
// (the files "generic"); elsewhere the compiler fuses them into
// multiply–adds, there and in the rest of the code, so the last bits are
// the architecture's own (no files: the cases run for their round trips).
func goldenPlatform() string {
	if runtime.GOARCH == "amd64" {
		return "generic"
	}
	return runtime.GOARCH + "-purego"
}

// buildTags are the tags of this build, for a binary built from a test.
const buildTags = "purego"
