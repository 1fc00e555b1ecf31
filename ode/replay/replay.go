// Package replay evaluates a thinned continuous extension (an
// ode.Solution whose kept states Settings.DenseLimit thinned, so that At
// takes steps of the solve again) from several goroutines: a fork of the
// Solution for each, the kept state each evaluation replays from, by
// which the goroutines share the output times, and the work the replays
// took.
//
// A Solution's At replays from the nearest kept state before t; evaluations
// whose replays start from different kept states are independent, so that
// forks may take the output times by origin in any order and give the
// values the solve computed, bit for bit.
package replay

import (
	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/ode/internal/link"
)

var funcs = link.Solution.(link.SolutionFuncs[ode.Solution, ode.Problem, ode.Stats])

// Fork returns a Solution that reads s's steps and kept states but
// evaluates with the functions of p (Func and, for BDF's steps, Jac and
// Precond) and with scratch space and replays of its own, whose linear
// algebra shares its work among up to workers processors (as
// ode.Settings.Workers; 0: all), so that At on s and on each of its forks
// may run in different goroutines. Where p's functions compute what the
// solve's did (an independent copy of the same problem), a fork's values
// are s's bit for bit. s's solve must have returned.
func Fork(s *ode.Solution, p ode.Problem, workers int) *ode.Solution {
	return funcs.Fork(s, p, workers)
}

// SetWorkers sets the processors the linear algebra of s's replays may
// share its work among (as ode.Settings.Workers; 0: all), which the solve
// set: Fork's goroutines and s's own, side by side, take a share each.
func SetWorkers(s *ode.Solution, workers int) { funcs.SetWorkers(s, workers) }

// Thinned reports whether s's At takes steps of the solve again: then
// evaluating s costs steps of the solver, and forks can share the work.
func Thinned(s *ode.Solution) bool { return funcs.Thinned(s) }

// Origin returns the step of s's solve from whose kept state At replays
// to evaluate at t (in the solved interval), or the step of t itself
// where it takes none. Evaluations at times of different origins take
// independent replays, whose values do not depend on the order in which
// they are made (nor on the fork that makes them).
func Origin(s *ode.Solution, t float64) int { return funcs.ReplayOrigin(s, t) }

// Stats returns the work s's At has done so far to take thinned steps
// again (ROCK4's and BDF's): the steps, their rejected attempts (BDF's),
// the evaluations of f and, for BDF, the Jacobians and preconditioner
// setups, restores from the kept states included. A solve's Stats do not
// count it.
func Stats(s *ode.Solution) ode.Stats { return funcs.ReplayStats(s) }
