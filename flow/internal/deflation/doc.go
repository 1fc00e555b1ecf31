// Package deflation preconditions BDF's Newton matrix I − γJ of a flow
// whose Jacobian J is symmetric: I − γJ on the span of J's stiffest
// eigenvectors, Ritz vectors of the Lanczos iteration on Jacobian–vector
// products (Precond), with, on their complement, a structured deflation
// of the merged model's key–query block (Kron). It needs of the flow only
// its linearization (Linearization) and, for Kron, where the block sits
// in the state (Structure); package flow decides when a run takes it
// (flow.Plan) and with how many steps.
package deflation
