//go:build !amd64 || purego

package cli

// goldenPlatform: without the amd64 kernels every product is plain loops.
func goldenPlatform() string { return "generic" }

// buildTags are the tags of this build, for a binary built from a test.
const buildTags = "purego"
