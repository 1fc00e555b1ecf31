// Package train trains the attention layer of Zhang, Singh, Latham & Saxe
// ("Training Dynamics of In-Context Learning in Linear Attention", ICML
// 2025) on finitely many sampled sequences, by gradient descent, minibatch
// SGD or the gradient flow of the training loss, so that the real training
// can be set beside the exact population flow of package flow
// (docs/training.md).
//
// The data (Task) are the paper's in-context regression sequences,
// x ~ N(0, Λ) with Λ from a law.Data, y = wᵀx, with a fixed context length
// or the next-token loss over every prefix, and a fraction of sequences
// with one fixed task vector. The layer (Model) is the paper's full layer,
// merged or separate key and query, linear or softmax attention, with
// every block that enters the prediction trained, or only those of the
// paper's reduction; its weights extend package flow's state, so a flow
// run and a training run can start from the same point.
//
// # The exact fast path
//
// For linear attention the prediction is linear in fixed features of the
// sequence (featureMap). With the paper's reduction (docs/math.md,
// "Models"), ŷ = βᵀ M x_q = ⟨M, β x_qᵀ⟩ = vec(M)ᵀ z with
// z = vec(β x_qᵀ) = x_q ⊗ β ∈ R^{D²}, so the training loss on P sequences is
//
//	L̂(M) = (1/P) Σ_μ (y_μ − vec(M)ᵀ z_μ)² = ȳ² − 2 vec(M)ᵀ Σ̂_yz + vec(M)ᵀ Σ̂_zz vec(M),
//
// with ȳ² = (1/P) Σ_μ y_μ², Σ̂_yz = (1/P) Σ_μ y_μ z_μ and the D²×D² matrix
// Σ̂_zz = (1/P) Σ_μ z_μ z_μᵀ. Its gradient is ∂L̂/∂vec(M) = −2 vec(Ĝ) with
// vec(Ĝ) = Σ̂_yz − Σ̂_zz vec(M), and by the chain rule through M(θ)
// (M = Σ_i v_i U_i or Σ_{i,r} v_i k_{i,r} q_{i,r}ᵀ) the descent
// τ dθ/dt = −½ ∂L̂/∂θ is docs/math.md's flow with the residual G replaced
// by Ĝ: merged τ dU_i/dt = v_i Ĝ, τ dv_i/dt = ⟨U_i, Ĝ⟩; separate
// τ dk_{i,r}/dt = v_i Ĝ q_{i,r}, τ dq_{i,r}/dt = v_i Ĝᵀ k_{i,r},
// τ dv_i/dt = Σ_r k_{i,r}ᵀ Ĝ q_{i,r}. Over the population, Σ_yz = vec(Λ²)
// and Σ_zz = Λ ⊗ A (docs/math.md, "Data statistics"), so that
// (Λ ⊗ A) vec(M) = vec(AMΛ) and Ĝ becomes G = Λ² − AMΛ: the population
// flow. The moments are accumulated once, as the sequences are drawn, and
// not stored; a step then costs O(D⁴) whatever P.
//
// The full layer is linear in the larger features vech(XXᵀ/N) ⊗ x_q,
// (D+1)(D+2)/2·D of them, through the three-way tensor of its weights
// (featureMap), so the same holds for it exactly: the Moments path serves
// every linear-attention model with full-batch descent (Path). The code
// stores vectors in row-major order (z = β ⊗ x_q, vec(M) = M row by row),
// for which the population moments read A ⊗ Λ and vec(Λ²)
// (populationMoments); the tests check that training on them is flow's
// System, and the moments against the direct, sequence-by-sequence
// evaluation to 1e-12.
package train
