// Package landscape enumerates the fixed points of the population gradient
// flow (paper sections 3.2 and 4.2, appendix "Fixed Points"; docs/math.md "Fixed
// points"): the 2^D points M(S) of the separate model, one for each subset S
// of eigenvectors learned, and the two of the merged model. For each it gives
// the loss, a weight configuration that realizes it, and its stability: the
// analytic Jacobian of the flow and its spectrum, the Hessian of the loss,
// the escape directions through dormant heads, and a classification as
// minimum, strict saddle or higher-order saddle.
package landscape
