package theory_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/theory"
)

// Lu et al.'s asymptotic errors of the optimal linear attention across the
// task-diversity transition, at α = 10, ρ = 0.01 and infinite pretraining.
func ExampleLuICL() {
	for _, kappa := range []float64{0.2, 1, 10, math.Inf(1)} {
		p := theory.LuParams{Kappa: kappa, Alpha: 10, Tau: math.Inf(1), Rho: 0.01}
		icl, err := theory.LuICL(p)
		if err != nil {
			log.Fatal(err)
		}
		idg, err := theory.LuIDG(p)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("κ = %-4v e_ICL = %.4f  e_IDG = %.4f  g_task = %.4f\n", kappa, icl, idg, icl-idg)
	}
	// Output:
	// κ = 0.2  e_ICL = 0.8294  e_IDG = 0.0297  g_task = 0.7997
	// κ = 1    e_ICL = 0.2290  e_IDG = 0.0836  g_task = 0.1454
	// κ = 10   e_ICL = 0.1028  e_IDG = 0.1009  g_task = 0.0019
	// κ = +Inf e_ICL = 0.1017  e_IDG = 0.1017  g_task = 0.0000
}

// The D → ∞ prediction for a finite problem in the exact flow's units:
// x ~ N(0, I_16), so tr(Λ) = 16, N = 160 context pairs, K = 32 tasks and
// label noise σ² = 0.16.
func ExampleLuScale() {
	p, scale, err := theory.LuScale(16, 160, 32, 0.16, 16)
	if err != nil {
		log.Fatal(err)
	}
	icl, err := theory.LuICL(p)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\nE(y − ŷ)² on fresh tasks → %.4f\n", p, scale*icl)
	// Output:
	// {Kappa:2 Alpha:10 Tau:+Inf Rho:0.01}
	// E(y − ŷ)² on fresh tasks → 1.9095
}

// Ridge regression on one context, the Bayes predictor for w ~ N(0, I).
func ExampleRidge() {
	c := theory.Context{
		D: 2,
		X: []float64{1, 0, 0, 1, 1, 1}, // three tokens
		Y: []float64{1, -1, 0.2},
	}
	r, err := theory.NewRidge(0.25)
	if err != nil {
		log.Fatal(err)
	}
	w, err := r.Weights(nil, c)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ŵ = [%.4f %.4f], ŷ at x_q = (1, 2): %.4f\n", w[0], w[1], floats.Dot(w, []float64{1, 2}))
	// Output:
	// ŵ = [0.8615 -0.7385], ŷ at x_q = (1, 2): -0.6154
}

// Raventós et al.'s two references at their D = 8 and noise 0.25 with the
// longest context of their 16-point sequences: ridge, and the posterior
// mean over K = 64 pretraining tasks, on fresh tasks and on tasks of the set.
func ExampleExpectedError() {
	s := theory.RaventosSetting(15)
	rng := rand.New(rand.NewPCG(1, 1))
	tasks := mat.NewDense(64, s.D, nil)
	for i := range 64 {
		for j := range s.D {
			tasks.Set(i, j, rng.NormFloat64())
		}
	}
	ridge, err := theory.NewRidge(s.NoiseVar)
	if err != nil {
		log.Fatal(err)
	}
	dmmse, err := theory.NewDMMSE(tasks, s.NoiseVar)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    theory.Predictor
		set  mat.Matrix
	}{
		{"ridge, fresh tasks", ridge, nil},
		{"dMMSE, fresh tasks", dmmse, nil},
		{"ridge, set tasks  ", ridge, tasks},
		{"dMMSE, set tasks  ", dmmse, tasks},
	} {
		e, err := theory.ExpectedError(s, c.p, c.set, 4000, 1)
		if err != nil {
			log.Fatal(err)
		}
		// Raventós et al. plot (e − σ²)/D.
		fmt.Printf("%s: E(y − ŷ)² = %.3f ± %.3f, (e − σ²)/D = %.4f\n", c.name, e.Mean, e.StdErr, (e.Mean-s.NoiseVar)/float64(s.D))
	}
	// Output:
	// ridge, fresh tasks: E(y − ŷ)² = 0.551 ± 0.004, (e − σ²)/D = 0.0376
	// dMMSE, fresh tasks: E(y − ŷ)² = 5.762 ± 0.052, (e − σ²)/D = 0.6890
	// ridge, set tasks  : E(y − ŷ)² = 0.562 ± 0.004, (e − σ²)/D = 0.0391
	// dMMSE, set tasks  : E(y − ŷ)² = 0.250 ± 0.000, (e − σ²)/D = 0.0000
}
