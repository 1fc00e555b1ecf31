// Package theory is the closed-form and asymptotic theory of in-context
// learning by linear attention, and the reference predictors it is
// compared with, kept apart from the exact flow so that each can check the
// other.
//
// Asymptotic theory (Lu et al.): LuICL and LuIDG are the D → ∞ in-context
// and in-distribution errors of the optimal (ridgeless) linear attention of
// Lu, Letey, Zavatone-Veth, Maiti and Pehlevan (PNAS 2025) as functions of
// LuParams{Kappa, Alpha, Tau, Rho}. Both are E[(y − ŷ)²] with the label
// noise included, in units where E[(wᵀx)²] = 1; LuScale maps a finite
// problem with x ~ N(0, Λ), Λ ∝ I onto them.
//
// Reference predictors (Raventós et al.): Ridge is the Bayes predictor for
// tasks w ~ N(0, I_D), DMMSE the Bayes predictor for tasks drawn uniformly
// from a finite set (Raventós, Paul, Chen, Ganguli, NeurIPS 2023), and
// ExpectedError estimates the error of either by seeded Monte Carlo with a
// standard error.
//
// The formulas and where they come from are in docs/math.md, sections
// "Asymptotic theory (Lu et al.)" and "Reference predictors (Raventós et
// al.)".
package theory
