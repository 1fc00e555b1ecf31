package flow

import "github.com/linattn/linattn/flow/internal/deflation"

// The deflation preconditioner of the full layer (package
// flow/internal/deflation: I − γJ on J's stiffest eigenvectors and, for
// the merged model, the Kronecker structure of its key–query block's
// curvature on their complement), as the plan takes it (Plan.Precond):
// its sizes, and its parts from the System.

// deflateMinDim is the state length from which the merged full layer's
// BDF takes the deflation preconditioner and GMRES rather than factoring
// I − γJ: its solves cost two products with the kept Ritz vectors and a
// few Jacobian–vector products, against two triangular solves with the
// whole factor, and a fresh setup 90 JVPs against n of them and a
// Cholesky factorization. Measured until converged (BenchmarkFullConverge,
// CPU, dense against deflation): D = 4 (n = 100) 0.079 against 0.174 s,
// D = 6 (n = 294) 0.60 against 0.39 s, D = 8 (n = 648) 2.76 against
// 0.65 s, to the same loss; BenchmarkFullRun's D = 8, 4.06 against
// 0.96 s. The separate model's full layer keeps the factorization below
// ode.MaxDenseDim: on BenchmarkFullRun's D = 8, R = 1 (its loss settles
// only at t ≈ 5·10⁸) the factorization took 4.8 s and the deflation had
// not finished after ten minutes.
const deflateMinDim = 256

// DeflateSteps is the number of Lanczos steps of a setup of the deflation
// alone (the separate model's full layer); the preconditioner holds
// DeflateSteps + 1 vectors of the state's length.
const DeflateSteps = 90

// DeflateStepsMerged is the number of Lanczos steps of a setup with the
// structured deflation (the merged model): with the bulk of the key–query
// block's stiff modes in P_S, fewer Ritz pairs do. Measured on the merged
// full layer, H = D, c = 0.5, K = 4, power-law Λ, until converged: 40, 60
// and 90 steps took 0.49, 0.54 and 0.66 s of CPU at D = 8
// (BenchmarkFullConverge), 9.7, 8.1 and 8.3 s at D = 16, and the whole
// command 4 min 18 s, 4 min 7 s and 5 min 25 s at D = 32 (the other core
// busy; when chosen, before the sampling on every core).
const DeflateStepsMerged = 60

// deflateSteps is the number of Lanczos steps of model m's setups.
func deflateSteps(m Model) int {
	if m.Kind == Merged {
		return DeflateStepsMerged
	}
	return DeflateSteps
}

// kronPairs is the number of eigenpairs of G that the merged full
// layer's preconditioner keeps at dimension d (deflation.Kron), r·D
// deflation vectors: 40, and 5D/4 from D = 32 on, as the final approach
// makes more of G's modes stiff. Measured by how far in t the run went
// from a checkpoint of its final approach (one run each, when chosen):
// at D = 32 in a minute from t = 2.56·10⁷, 20 pairs went half as far as
// 40, and 80 no further; at D = 64 in 200 s from t = 3.2·10⁷ (beside two
// other runs), 80 went 1.7 times as far in log t as 40.
func kronPairs(d int) int { return max(40, 5*d/4) }

// newDeflation returns the deflation of s, with the structured deflation
// of the merged model's key–query block.
func newDeflation(s *System) *deflation.Precond {
	var kron *deflation.Kron
	if s.Model.Kind == Merged {
		if st, ok := s.kronStructure(); ok {
			kron = deflation.NewKron(st, kronPairs(s.d), s.workers)
		}
	}
	return newDeflationWith(s, kron)
}

// newDeflationWith returns the deflation of s with the structured
// deflation kron (nil: none).
func newDeflationWith(s *System, kron *deflation.Kron) *deflation.Precond {
	return deflation.New(s.NewLinearization(), s.n, deflateSteps(s.Model), kron, s.workers)
}

// kronStructure returns where the key–query block W and the value rows ṽ
// of the full layer's merged model sit in its state, and its training
// moments (deflation.Structure); ok is false where s has no full layer
// or its state lacks entries of W.
func (s *System) kronStructure() (st deflation.Structure, ok bool) {
	if s.law.full == nil {
		return st, false
	}
	coef := s.law.full.coef
	theta := make([]float64, coef.Len())
	for i := range theta {
		theta[i] = float64(i + 1) // 0: not in θ
	}
	b := coef.NewBlocks()
	coef.Expand(b, theta)
	st = deflation.Structure{D: s.d, H: s.Model.H, Pairs: coef.Pairs(), Lambda: s.lam, Tau: s.Model.Tau,
		W: make([]int32, len(b.W)), V: make([]int32, len(b.V)), ZZ: s.law.full.train}
	for i, x := range b.V {
		st.V[i] = int32(x) - 1
	}
	for i, x := range b.W {
		if st.W[i] = int32(x) - 1; x == 0 {
			return st, false
		}
	}
	return st, true
}

// kronBytes is the memory of the merged full layer's structured deflation
// at dimension d with h heads and of the deflation's coordinates on it
// (deflation.KronBytes).
func kronBytes(d, h int) float64 {
	return deflation.KronBytes(d, h, kronPairs(d), DeflateStepsMerged)
}
