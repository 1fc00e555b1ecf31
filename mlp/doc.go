// Package mlp is the two-layer fully-connected linear network on the cubic
// feature z = vec(β x_qᵀ) ∈ R^{D²} of in-context linear regression,
//
//	MLP(z) = w₂ᵀ W₁ z,   w₂ ∈ R^H,  W₁ ∈ R^{H×D²}
//
// (paper eq. attnM-mlp), and its exact population gradient flow written
// with the moments of z as the paper writes it (eq. attnM-gd):
//
//	τ dW₁/dt = w₂ (E[y zᵀ] − w₂ᵀ W₁ E[z zᵀ]),
//	τ dw₂/dt = W₁ (E[y zᵀ] − w₂ᵀ W₁ E[z zᵀ])ᵀ,
//
// with E[y z] = vec(Λ²) and E[z zᵀ] = Λ ⊗ A formed as the D² × D² matrix
// (law.Data.EYZ, EZZ). The network computes what merged linear attention
// ATTN_M computes, with w₂ = (v_1, …, v_H) and the rows of W₁ the vec(U_i)ᵀ
// (FromAttention): the paper's equivalence, which makes their flows one
// trajectory (docs/math.md, "The network on z"). Package flow integrates
// ATTN_M without ever forming E[z zᵀ]; this package keeps the network as a
// model of its own, at O(D⁴) per evaluation, for small D.
package mlp
