// Package flow is the exact population (infinite-data) gradient flow of
// multi-head linear attention trained on in-context linear regression, for
// merged (ATTN_M) and separate rank-R (ATTN_S) key–query parametrizations
// (Zhang, Singh, Latham, Saxe, "Training Dynamics of In-Context Learning in
// Linear Attention", ICML 2025; the formulas in one notation are in
// docs/math.md): of the paper's reduced layer, and of the full and the
// label-key layer (Layer) under any task law of package law (fixed tasks,
// a task covariance Ω, label noise), with their exact test losses.
//
// Both models predict ŷ = βᵀ M x_q with an effective map M, and the flow is
// driven by the residual G = Λ² − A M Λ with A = E[Λ̂²] = Λ² + ν(Λ + tr(Λ)I)Λ
// and ν = E[1/N]. The population loss is
//
//	L(M) = tr(Λ) − 2 tr(ΛMΛ) + tr(Mᵀ A M Λ).
//
// A System integrates the flow in the eigenbasis of Λ, where Λ and A are
// diagonal, without ever forming the D²×D² matrix E[zzᵀ] = Λ ⊗ A; the
// literal form of the paper (eq. attnM-gd), the two-layer network on z, is
// package mlp's. Run drives a solve with the ode package and returns a
// Trajectory: the loss and the states on an output grid (by default the
// drops grid, which places half its times in the drops, sampled from the
// run's continuous extension), the times at which the loss crosses half-way
// between consecutive plateau levels, and how the run ended (Status).
//
// Coordinates: states enter and leave the package in the original basis
// (Init, FromArrays, Run, Trajectory, Loss, Map); the methods whose names end
// in Eigen (DerivEigen, LossEigen, MapEigen, MapOfEigen, AlignmentEigen,
// GradNormEigen), the run observer and Linearization take eigen coordinates,
// which ToEigen and FromEigen convert to and from.
package flow
