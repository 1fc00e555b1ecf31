// Package reduced is the one-dimensional theory of the paper (Zhang, Singh,
// Latham, Saxe, ICML 2025; docs/math.md "Reduced dynamics" and "Closed form"):
// the scalar ODE τ v' = λ²v² − λ a v⁵ that the alignment ansatz reduces each
// plateau of the separate model to, its closed-form solution t(v) and its
// inverse, the chained prediction of plateau levels, value weights and
// durations, a comparison of the prediction with a full flow trajectory, and
// the merged model's closed form for white covariance and its plateau-length
// estimate.
package reduced
