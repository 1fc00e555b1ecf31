package flow

import (
	"math"

	"github.com/linattn/linattn/flow/internal/gemm"
	"github.com/linattn/linattn/internal/share"
)

// kronDeflation is the structured part of the merged full layer's
// preconditioner (docs/math.md, "The final approach"). The query enters
// the features z = u ⊗ x_q only through x_q but for its own term in S, so
// E[zzᵀ] = U ⊗ Λ up to terms in 1/N, U = E[uuᵀ] over the pairs of S. The
// coefficients of query coordinate f are linear in the column f of the
// key–query block W at fixed value rows ṽ: c_{·,f} = A W_{·,f}, with
// (A x)_(a,b) = M_ab + M_ba (a < b), M_aa (a = b), M = ṽᵀx. The
// Gauss–Newton curvature of the W block is then λ_f·G on column f, one
// H(D+1)-square G = AᵀUA for every f (and the W–W block has no other
// term: c is linear in W). With (μ_j, q_j) the top eigenpairs of G, the
// vectors e_f ⊗ q_j are approximate eigenvectors of −J with values
// λ_f μ_j/τ, applied in O(r·H(D+1)·D).
type kronDeflation struct {
	sys         *System // whose moments U is fitted to, at the first setup
	d, h, d1, m int     // m = H(D+1), the length of a column of W
	pairs       [][2]int
	u           []float64 // U = E[uuᵀ], len(pairs)² (symmetrized); nil until the first setup
	lam         []float64 // λ_f/τ
	wIdx, vIdx  []int32   // the θ index of W's entry ((i, b), f) = (i·(D+1)+b)·D+f, of ṽ_ia = V[i·(D+1)+a]

	r      int       // eigenpairs kept
	active int       // those applied at the current γ (setGamma)
	q      []float64 // the top eigenvectors of G, r × m
	mu     []float64 // their Ritz values
	scale  []float64 // r × D: 1/(1 + γλ_fμ_j/τ) − 1
	v      []float64 // ṽ at the point, H × (D+1)
	x, c   []float64 // m × D and r × D, scratch of coords and Solve
	mm, ra []float64 // (D+1)² and len(pairs), scratch of the product by G
	ua     []float64
	lz     *lanczos // on G

	// workers share coords' and addSpan's products by rows, their
	// gathers and scatters by entries (productWorkers: at D = H = 64,
	// r = 80, not at D = 32).
	workers int
}

// newKronDeflation returns the structured deflation of s (the merged
// model's layer with extra blocks) with r eigenpairs of G; nil if θ lacks
// entries of W. Its first setup fits U to the training moments by
// len(pairs) products with ZZ (4.7 s at D = 64), which only BDF's runs
// ask for.
func newKronDeflation(s *System, r int) *kronDeflation {
	d, h := s.d, s.Model.H
	d1 := d + 1
	coef := s.law.full.coef
	k := &kronDeflation{sys: s, d: d, h: h, d1: d1, m: h * d1, pairs: coef.Pairs()}
	k.lam = make([]float64, d)
	for f, l := range s.lam {
		k.lam[f] = l / s.Model.Tau
	}
	if !k.indices(coef) {
		return nil
	}
	k.r = min(r, k.m)
	k.alloc()
	return k
}

// alloc gives k the scratch space its setups and products change.
func (k *kronDeflation) alloc() {
	d, d1, np := k.d, k.d1, len(k.pairs)
	k.q = make([]float64, k.r*k.m)
	k.scale, k.c = make([]float64, k.r*d), make([]float64, k.r*d)
	k.v, k.x = make([]float64, k.h*d1), make([]float64, k.m*d)
	k.mm, k.ra, k.ua = make([]float64, d1*d1), make([]float64, np), make([]float64, np)
	k.lz = newLanczos(k.m, kronSteps(k.m, k.r))
	k.workers = productWorkers(k.r, k.m, d)
}

// kronSteps is the number of Lanczos steps on G (of order m) for its top
// r eigenpairs.
func kronSteps(m, r int) int { return min(m, 2*r+20) }

// fork returns a kronDeflation for s, a copy of k's System (System.clone),
// that shares k's U, if fitted, and indices (which no setup changes), with
// scratch space of its own, for a preconditioner in another goroutine
// (System.forkPreconditioner).
func (k *kronDeflation) fork(s *System) *kronDeflation {
	c := &kronDeflation{sys: s, d: k.d, h: k.h, d1: k.d1, m: k.m, pairs: k.pairs, u: k.u, lam: k.lam, wIdx: k.wIdx, vIdx: k.vIdx, r: k.r}
	c.alloc()
	return c
}

// indices finds where W's and ṽ's entries sit in θ, and reports whether
// θ holds every entry of W (the merged model's layers with extra blocks
// do).
func (k *kronDeflation) indices(coef *Coefficients) bool {
	n := coef.Len()
	theta := make([]float64, n)
	for i := range theta {
		theta[i] = float64(i + 1) // 0: not in θ
	}
	b := coef.NewBlocks()
	coef.Expand(b, theta)
	k.wIdx, k.vIdx = make([]int32, len(b.W)), make([]int32, len(b.V))
	for i, x := range b.V {
		k.vIdx[i] = int32(x) - 1
	}
	for i, x := range b.W {
		if k.wIdx[i] = int32(x) - 1; x == 0 {
			return false
		}
	}
	return true
}

// moments sets U_pq = Σ_f (ZZ x_q)_(p,f) / Σ_f λ_f², x_q = e_q ⊗ λ: the
// least-squares fit of ZZ's blocks by U ⊗ Λ up to the 1/N terms
// (law.TestMomentsKronecker), symmetrized.
func (k *kronDeflation) moments(s *System) {
	d, np := k.d, len(k.pairs)
	zz := s.law.full.train
	nf := np * d
	x, y := make([]float64, nf), make([]float64, nf)
	var ll float64
	for _, l := range s.lam {
		ll += l * l
	}
	k.u = make([]float64, np*np)
	for q := 0; q < np; q++ {
		clear(x)
		copy(x[q*d:(q+1)*d], s.lam)
		zz.MulVec(y, x)
		for p := 0; p < np; p++ {
			var sum float64
			for _, z := range y[p*d : (p+1)*d] {
				sum += z
			}
			k.u[p*np+q] = sum / ll
		}
	}
	for p := 0; p < np; p++ {
		for q := 0; q < p; q++ {
			a := 0.5 * (k.u[p*np+q] + k.u[q*np+p])
			k.u[p*np+q], k.u[q*np+p] = a, a
		}
	}
}

// mulG sets dst = G x = Aᵀ U A x (x, dst: H × (D+1), row-major).
func (k *kronDeflation) mulG(dst, x []float64) {
	d1, h, np := k.d1, k.h, len(k.pairs)
	gemm.MulTA(d1, d1, h, k.v, x, k.mm) // M = ṽᵀ x
	for p, ab := range k.pairs {
		a, b := ab[0], ab[1]
		if a == b {
			k.ra[p] = k.mm[a*d1+a]
		} else {
			k.ra[p] = k.mm[a*d1+b] + k.mm[b*d1+a]
		}
	}
	share.MulVec(np, np, k.u, k.ra, k.ua, share.GemvWorkers(np, np))
	for p, ab := range k.pairs { // R̃, symmetric
		a, b := ab[0], ab[1]
		k.mm[a*d1+b], k.mm[b*d1+a] = k.ua[p], k.ua[p]
	}
	gemm.Mul(h, d1, d1, k.v, k.mm, dst) // ṽ R̃
}

// at computes G's top r eigenpairs at θ = y, fitting U first if it is
// not yet.
func (k *kronDeflation) at(y []float64) {
	if k.u == nil {
		k.moments(k.sys)
	}
	for i, j := range k.vIdx {
		k.v[i] = 0
		if j >= 0 {
			k.v[i] = y[j]
		}
	}
	alpha, beta, steps := k.lz.run(k.mulG, [2]uint64{3, 4})
	k.mu = k.mu[:0]
	vals, vecs, ok := tridiagonalEigen(alpha, beta, steps)
	if !ok {
		clear(k.q)
		return
	}
	kk := min(k.r, steps)
	s := make([]float64, kk*steps)
	for r := 0; r < kk; r++ {
		i := steps - 1 - r
		k.mu = append(k.mu, math.Max(vals[i], 0))
		for j := 0; j < steps; j++ {
			s[r*steps+j] = vecs.At(j, i)
		}
	}
	gemm.Mul(kk, k.m, steps, s, k.lz.slab[:steps*k.m], k.q[:kk*k.m])
	clear(k.q[kk*k.m:]) // r − kk pairs of value 0, if the iteration ended early
}

// setGamma sets the scales 1/(1 + γλ_fμ_j/τ) − 1 and the pairs that
// coords and addSpan apply: the first j with γ·max λ_f·μ_j/τ ≥ deflateMin
// (μ decreasing); P_S is the identity to 5 % on the others.
func (k *kronDeflation) setGamma(gamma float64) {
	lmax := 0.0
	for _, l := range k.lam {
		lmax = math.Max(lmax, l)
	}
	k.active = 0
	clear(k.scale)
	for j, mu := range k.mu {
		if gamma*lmax*mu < deflateMin {
			break
		}
		k.active = j + 1
		for f, l := range k.lam {
			k.scale[j*k.d+f] = 1/(1+gamma*l*mu) - 1
		}
	}
}

// coords writes the coordinates of x on the vectors e_f ⊗ q_j, j < nj,
// into c (nj × D, row-major): C = Qᵀ X, X the W block of x as H(D+1) × D.
func (k *kronDeflation) coords(c, x []float64, nj int) {
	c = c[:nj*k.d]
	if w := share.Free(k.workers); w > 1 {
		share.Ranges(len(k.wIdx), w, 1, func(_, lo, hi int) { k.gather(x, lo, hi) })
		mulShared(w, nj, k.d, k.m, k.q, k.x, c)
		return
	}
	k.gather(x, 0, len(k.wIdx))
	gemm.Mul(nj, k.d, k.m, k.q, k.x, c)
}

// addSpan adds Σ_{j,f} c_jf e_f ⊗ q_j to dst, j < len(c)/D.
func (k *kronDeflation) addSpan(dst, c []float64) {
	nj, d := len(c)/k.d, k.d
	if w := share.Free(k.workers); w > 1 {
		share.Ranges(k.m, w, gemm.RowBlock, func(_, lo, hi int) {
			gemm.MulTARows(lo, hi, k.m, d, nj, k.q[:nj*k.m], c, k.x) // X = Q C
			k.scatter(dst, lo*d, hi*d)
		})
		return
	}
	gemm.MulTA(k.m, d, nj, k.q[:nj*k.m], c, k.x)
	k.scatter(dst, 0, len(k.wIdx))
}

// gather copies the entries lo … hi−1 of the W block of x into k.x.
func (k *kronDeflation) gather(x []float64, lo, hi int) {
	for i, j := range k.wIdx[lo:hi] {
		k.x[lo+i] = x[j]
	}
}

// scatter adds the entries lo … hi−1 of k.x to the W block of dst.
func (k *kronDeflation) scatter(dst []float64, lo, hi int) {
	for i, j := range k.wIdx[lo:hi] {
		dst[j] += k.x[lo+i]
	}
}

// kronPairs is the number of eigenpairs of G that the merged full
// layer's preconditioner keeps at dimension d (kronDeflation), r·D
// deflation vectors: 40, and 5D/4 from D = 32 on, as the final approach
// makes more of G's modes stiff. Measured by how far in t the run went
// from a checkpoint of its final approach (one run each, when chosen):
// at D = 32 in a minute from t = 2.56·10⁷, 20 pairs went half as far as
// 40, and 80 no further; at D = 64 in 200 s from t = 3.2·10⁷ (beside two
// other runs), 80 went 1.7 times as far in log t as 40.
func kronPairs(d int) int { return max(40, 5*d/4) }

// kronBytes is the memory of the merged full layer's structured deflation
// at dimension d with h heads (newKronDeflation) and of the deflation's
// coordinates on it (deflatePrecond.kb): U, G's Lanczos basis and
// eigenvectors, the W block's scratch and the indices into θ.
func kronBytes(d, h int) float64 {
	mi := h * (d + 1)
	ri := min(kronPairs(d), mi)
	d1 := float64(d + 1)
	np := d1 * (d1 + 1) / 2
	m, r, steps, fd := float64(mi), float64(ri), float64(kronSteps(mi, ri)), float64(d)
	return 8*(np*np+2*np+d1*d1+(steps+3+r)*m+m*fd+(DeflateStepsMerged+2)*r*fd) + 4*(m*fd+m)
}
