// Package cputime reads the processor time of the process, for benchmarks
// that report it beside the wall time: on a shared machine it is the less
// noisy of the two.
package cputime

// Seconds is the user and system time of the process so far, or zero
// where the system does not tell it (see seconds).
func Seconds() float64 { return seconds() }
