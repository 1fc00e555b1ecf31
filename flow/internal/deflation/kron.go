package deflation

import (
	"math"

	"github.com/linattn/linattn/flow/internal/gemm"
	"github.com/linattn/linattn/internal/share"
)

// Kron is the structured part of the merged full layer's preconditioner
// (docs/math.md, "The final approach"). The query enters the features
// z = u ⊗ x_q only through x_q but for its own term in S, so
// E[zzᵀ] = U ⊗ Λ up to terms in 1/N, U = E[uuᵀ] over the pairs of S. The
// coefficients of query coordinate f are linear in the column f of the
// key–query block W at fixed value rows ṽ: c_{·,f} = A W_{·,f}, with
// (A x)_(a,b) = M_ab + M_ba (a < b), M_aa (a = b), M = ṽᵀx. The
// Gauss–Newton curvature of the W block is then λ_f·G on column f, one
// H(D+1)-square G = AᵀUA for every f (and the W–W block has no other
// term: c is linear in W). With (μ_j, q_j) the top eigenpairs of G, the
// vectors e_f ⊗ q_j are approximate eigenvectors of −J with values
// λ_f μ_j/τ, applied in O(r·H(D+1)·D).
type Kron struct {
	st          Structure
	d, h, d1, m int       // m = H(D+1), the length of a column of W
	u           []float64 // U = E[uuᵀ], len(Pairs)² (symmetrized); nil until the first setup
	lam         []float64 // λ_f/τ

	r      int       // eigenpairs kept
	active int       // those applied at the current γ (setGamma)
	q      []float64 // the top eigenvectors of G, r × m
	mu     []float64 // their Ritz values
	scale  []float64 // r × D: 1/(1 + γλ_fμ_j/τ) − 1
	v      []float64 // ṽ at the point, H × (D+1)
	x, c   []float64 // m × D and r × D, scratch of coords and Solve
	mm, ra []float64 // (D+1)² and len(Pairs), scratch of the product by G
	ua     []float64
	lz     *lanczos // on G

	// procs is the processors k's work may share (setWorkers); workers
	// share coords' and addSpan's products by rows, their gathers and
	// scatters by entries (gemm.Workers: at D = H = 64, r = 80, not at
	// D = 32).
	procs, workers int
}

// Structure is where the merged model's key–query block W and its value
// rows ṽ sit in the state θ, and what Kron fits U to.
type Structure struct {
	D, H int
	// Pairs are the pairs (a, b), a ≤ b, of the entries u_ab of the
	// features z = u ⊗ x_q, in the order of the moments'.
	Pairs [][2]int
	// Lambda are Λ's eigenvalues λ_f, Tau the flow's time constant τ.
	Lambda []float64
	Tau    float64
	// W[(i·(D+1) + b)·D + f] is the index in θ of W's entry ((i, b), f),
	// V[i·(D+1) + a] that of ṽ_ia, −1 where θ does not hold it.
	W, V []int32
	// ZZ applies the training moments of the features (len(Pairs)·D of
	// them), whose blocks U ⊗ Λ fits.
	ZZ interface{ MulVec(dst, c []float64) }
}

// NewKron returns the structured deflation of the key–query block st
// describes, with r eigenpairs of G, its work shared among up to procs
// processors (0: all; Precond.SetWorkers). Its first setup fits U to the
// training moments by len(Pairs) products with ZZ (4.7 s at D = 64).
func NewKron(st Structure, r, procs int) *Kron {
	d, h := st.D, st.H
	k := &Kron{st: st, d: d, h: h, d1: d + 1, m: h * (d + 1), procs: procs}
	k.lam = make([]float64, d)
	for f, l := range st.Lambda {
		k.lam[f] = l / st.Tau
	}
	k.r = min(r, k.m)
	k.alloc()
	return k
}

// alloc gives k the scratch space its setups and products change.
func (k *Kron) alloc() {
	d, d1, np := k.d, k.d1, len(k.st.Pairs)
	k.q = make([]float64, k.r*k.m)
	k.scale, k.c = make([]float64, k.r*d), make([]float64, k.r*d)
	k.v, k.x = make([]float64, k.h*d1), make([]float64, k.m*d)
	k.mm, k.ra, k.ua = make([]float64, d1*d1), make([]float64, np), make([]float64, np)
	k.lz = newLanczos(k.m, kronSteps(k.m, k.r), k.procs)
	k.setWorkers(k.procs)
}

// setWorkers sets the processors k's work may share (Precond.SetWorkers).
func (k *Kron) setWorkers(procs int) {
	k.procs, k.lz.procs = procs, procs
	k.workers = gemm.Workers(k.r, k.d, k.m, procs)
}

// kronSteps is the number of Lanczos steps on G (of order m) for its top
// r eigenpairs.
func kronSteps(m, r int) int { return min(m, 2*r+20) }

// Fork returns a Kron that shares k's U, if fitted, with scratch space of
// its own, zz as ZZ and procs processors (NewKron), for a preconditioner
// in another goroutine (zz a copy of k's moments).
func (k *Kron) Fork(zz interface{ MulVec(dst, c []float64) }, procs int) *Kron {
	c := &Kron{st: k.st, d: k.d, h: k.h, d1: k.d1, m: k.m, u: k.u, lam: k.lam, r: k.r, procs: procs}
	c.st.ZZ = zz
	c.alloc()
	return c
}

// Fit sets U_pq = Σ_f (ZZ x_q)_(p,f) / Σ_f λ_f², x_q = e_q ⊗ λ: the
// least-squares fit of ZZ's blocks by U ⊗ Λ up to the 1/N terms
// (law.TestMomentsKronecker), symmetrized. The first setup (At) fits U
// unless it is.
func (k *Kron) Fit() {
	d, np, lam := k.d, len(k.st.Pairs), k.st.Lambda
	nf := np * d
	x, y := make([]float64, nf), make([]float64, nf)
	var ll float64
	for _, l := range lam {
		ll += l * l
	}
	k.u = make([]float64, np*np)
	for q := 0; q < np; q++ {
		clear(x)
		copy(x[q*d:(q+1)*d], lam)
		k.st.ZZ.MulVec(y, x)
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

// MulG sets dst = G x = Aᵀ U A x (x, dst: H × (D+1), row-major) at the
// last setup's point.
func (k *Kron) MulG(dst, x []float64) {
	d1, h, np := k.d1, k.h, len(k.st.Pairs)
	gemm.MulTA(d1, d1, h, k.v, x, k.mm) // M = ṽᵀ x
	for p, ab := range k.st.Pairs {
		a, b := ab[0], ab[1]
		if a == b {
			k.ra[p] = k.mm[a*d1+a]
		} else {
			k.ra[p] = k.mm[a*d1+b] + k.mm[b*d1+a]
		}
	}
	share.MulVec(np, np, k.u, k.ra, k.ua, share.GemvWorkers(np, np, k.procs))
	for p, ab := range k.st.Pairs { // R̃, symmetric
		a, b := ab[0], ab[1]
		k.mm[a*d1+b], k.mm[b*d1+a] = k.ua[p], k.ua[p]
	}
	gemm.Mul(h, d1, d1, k.v, k.mm, dst) // ṽ R̃
}

// At computes G's top r eigenpairs at θ = y, fitting U first if it is
// not yet (Fit).
func (k *Kron) At(y []float64) {
	if k.u == nil {
		k.Fit()
	}
	for i, j := range k.st.V {
		k.v[i] = 0
		if j >= 0 {
			k.v[i] = y[j]
		}
	}
	alpha, beta, steps := k.lz.run(k.MulG, [2]uint64{3, 4})
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
// coords and addSpan apply: the first j with γ·max λ_f·μ_j/τ ≥ MinScale
// (μ decreasing); P_S is the identity to 5 % on the others.
func (k *Kron) setGamma(gamma float64) {
	lmax := 0.0
	for _, l := range k.lam {
		lmax = math.Max(lmax, l)
	}
	k.active = 0
	clear(k.scale)
	for j, mu := range k.mu {
		if gamma*lmax*mu < MinScale {
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
func (k *Kron) coords(c, x []float64, nj int) {
	c = c[:nj*k.d]
	if w := k.workers; w > 1 {
		share.Ranges(len(k.st.W), w, 1, func(_, lo, hi int) { k.gather(x, lo, hi) })
		gemm.MulShared(w, nj, k.d, k.m, k.q, k.x, c)
		return
	}
	k.gather(x, 0, len(k.st.W))
	gemm.Mul(nj, k.d, k.m, k.q, k.x, c)
}

// addSpan adds Σ_{j,f} c_jf e_f ⊗ q_j to dst, j < len(c)/D.
func (k *Kron) addSpan(dst, c []float64) {
	nj, d := len(c)/k.d, k.d
	if w := k.workers; w > 1 {
		share.Ranges(k.m, w, gemm.RowBlock, func(_, lo, hi int) {
			gemm.MulTARows(lo, hi, k.m, d, nj, k.q[:nj*k.m], c, k.x) // X = Q C
			k.scatter(dst, lo*d, hi*d)
		})
		return
	}
	gemm.MulTA(k.m, d, nj, k.q[:nj*k.m], c, k.x)
	k.scatter(dst, 0, len(k.st.W))
}

// gather copies the entries lo … hi−1 of the W block of x into k.x.
func (k *Kron) gather(x []float64, lo, hi int) {
	for i, j := range k.st.W[lo:hi] {
		k.x[lo+i] = x[j]
	}
}

// scatter adds the entries lo … hi−1 of k.x to the W block of dst.
func (k *Kron) scatter(dst []float64, lo, hi int) {
	for i, j := range k.st.W[lo:hi] {
		dst[j] += k.x[lo+i]
	}
}

// KronBytes is the memory of the structured deflation of dimension d
// with h heads and r eigenpairs of G (NewKron), with the indices into θ
// of its Structure, and of the coordinates on it of the Ritz vectors of
// ritz Lanczos steps (Precond's kb): U, G's Lanczos basis and
// eigenvectors and the W block's scratch.
func KronBytes(d, h, r, ritz int) float64 {
	mi := h * (d + 1)
	ri := min(r, mi)
	d1 := float64(d + 1)
	np := d1 * (d1 + 1) / 2
	m, rf, steps, fd := float64(mi), float64(ri), float64(kronSteps(mi, ri)), float64(d)
	return 8*(np*np+2*np+d1*d1+(steps+3+rf)*m+m*fd+float64(ritz+2)*rf*fd) + 4*(m*fd+m)
}
