// Package link hands package ode/replay the functions of package ode's
// Solution that are not ode's API: ode sets Solution when it is
// initialized, and ode/replay, which imports ode, reads it. Link cannot
// import ode (ode imports link), hence the type parameters.
package link

// SolutionFuncs are the replay and fork machinery of a Solution of type
// S, of problems P, whose work is counted in W.
type SolutionFuncs[S, P, W any] struct {
	Fork         func(s *S, p P, workers int) *S
	SetWorkers   func(s *S, workers int)
	ReplayOrigin func(s *S, t float64) int
	ReplayStats  func(s *S) W
	Thinned      func(s *S) bool
}

// Solution holds package ode's
// SolutionFuncs[ode.Solution, ode.Problem, ode.Stats].
var Solution any
