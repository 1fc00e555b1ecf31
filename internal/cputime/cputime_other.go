//go:build !unix

package cputime

// seconds: no getrusage on this system (Windows, Plan 9, wasm), so zero.
func seconds() float64 { return 0 }
