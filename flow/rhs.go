package flow

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

var impl gonum.Implementation

type scratch struct {
	m  []float64 // effective map M (D×D, eigen coordinates)
	g  []float64 // residual G = Λ² − A M Λ (D×D)
	vk []float64 // rows v_i k_{i,r} (separate, H·R×D)
	dy []float64 // a state-sized buffer for GradNorm
}

func newScratch(s *System) scratch {
	d := s.d
	sc := scratch{m: make([]float64, d*d), g: make([]float64, d*d), dy: make([]float64, s.n)}
	if s.Model.Kind == Separate {
		sc.vk = make([]float64, s.Model.H*s.Model.R*d)
	}
	return sc
}

// Deriv writes dy/dt at the state y (eigen coordinates) into dydt:
//
//	merged:   τ dU_i/dt = v_i G,          τ dv_i/dt = ⟨U_i, G⟩_F,
//	separate: τ dk_{i,r}/dt = v_i G q_{i,r}, τ dq_{i,r}/dt = v_i Gᵀ k_{i,r},
//	          τ dv_i/dt = Σ_r k_{i,r}ᵀ G q_{i,r},
//
// with the residual G = Λ² − A M Λ (MATH.md, "Population loss and flow";
// paper eqs. attnM-gd and attnS-lowrank-gd, using (Λ ⊗ A) vec M = vec(AMΛ)
// instead of forming E[zzᵀ]). In eigen coordinates Λ and A are diagonal, so
// G costs O(D²) and the work is three matrix products (separate) or two
// matrix–vector products (merged). It does not allocate. y and dydt must not
// overlap. A System is not safe for concurrent use.
func (s *System) Deriv(dydt, y []float64) {
	s.checkLen("y", y)
	s.checkLen("dydt", dydt)
	if s.Model.Kind == Merged {
		s.derivMerged(dydt, y)
	} else {
		s.derivSeparate(dydt, y)
	}
}

// Func returns Deriv as an ode right-hand side.
func (s *System) Func() func(t float64, y, dydt []float64) {
	return func(_ float64, y, dydt []float64) { s.Deriv(dydt, y) }
}

// residual computes G = Λ² − A M Λ from scr.m into scr.g.
func (s *System) residual() {
	d := s.d
	lam, a := s.Data.Lambda, s.Data.a
	for i := 0; i < d; i++ {
		row := s.scr.m[i*d : (i+1)*d]
		grow := s.scr.g[i*d : (i+1)*d]
		ai := a[i]
		for j, mij := range row {
			grow[j] = -ai * mij * lam[j]
		}
		grow[i] += s.lam2[i]
	}
}

// effectiveMap fills scr.m with M = Σ_i v_i U_i or Σ_{i,r} v_i k_{i,r} q_{i,r}ᵀ.
func (s *System) effectiveMap(y []float64) {
	d, h := s.d, s.Model.H
	if s.Model.Kind == Merged {
		impl.Dgemv(blas.Trans, h, d*d, 1, y[h:], d*d, y[:h], 1, 0, s.scr.m, 1)
		return
	}
	r := s.Model.R
	hr := h * r
	k := y[h : h+hr*d]
	q := y[h+hr*d:]
	for row := 0; row < hr; row++ {
		vi := y[row/r]
		src := k[row*d : (row+1)*d]
		dst := s.scr.vk[row*d : (row+1)*d]
		for j, x := range src {
			dst[j] = vi * x
		}
	}
	gemm(blas.Trans, blas.NoTrans, d, d, hr, s.scr.vk, d, q, d, s.scr.m, d)
}

func (s *System) derivMerged(dydt, y []float64) {
	d, h := s.d, s.Model.H
	dd := d * d
	s.effectiveMap(y)
	s.residual()
	invTau := 1 / s.Model.Tau
	impl.Dgemv(blas.NoTrans, h, dd, invTau, y[h:], dd, s.scr.g, 1, 0, dydt[:h], 1)
	for i := 0; i < h; i++ {
		c := y[i] * invTau
		dst := dydt[h+i*dd : h+(i+1)*dd]
		for j, g := range s.scr.g {
			dst[j] = c * g
		}
	}
}

func (s *System) derivSeparate(dydt, y []float64) {
	d, h, r := s.d, s.Model.H, s.Model.R
	hr := h * r
	k := y[h : h+hr*d]
	q := y[h+hr*d:]
	dk := dydt[h : h+hr*d]
	dq := dydt[h+hr*d:]
	s.effectiveMap(y)
	s.residual()
	// P = Q Gᵀ (rows G q) into dk; S = K G (rows Gᵀ k) into dq.
	gemm(blas.NoTrans, blas.Trans, hr, d, d, q, d, s.scr.g, d, dk, d)
	gemm(blas.NoTrans, blas.NoTrans, hr, d, d, k, d, s.scr.g, d, dq, d)
	invTau := 1 / s.Model.Tau
	for i := 0; i < h; i++ {
		var dv float64
		c := y[i] * invTau
		for rr := 0; rr < r; rr++ {
			row := (i*r + rr) * d
			krow := k[row : row+d]
			prow := dk[row : row+d]
			srow := dq[row : row+d]
			for j, p := range prow {
				dv += krow[j] * p
				prow[j] = c * p
				srow[j] *= c
			}
		}
		dydt[i] = dv * invTau
	}
}

// gemm computes C = op(A)·op(B) (row-major, overwriting C) for the three
// shapes the flow needs: AᵀB, ABᵀ and AB. Small products use plain loops,
// where gonum's per-call overhead would dominate. Larger ones use gonum's
// serial kernel: C is cut into 64×128 tiles, below the size at which gonum's
// Dgemm spawns goroutines (blas/gonum: blockSize 64, minParBlock 4), so the
// product never allocates and its result never depends on GOMAXPROCS.
func gemm(tA, tB blas.Transpose, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m*n*k <= smallGemm {
		gemmSmall(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	const tm, tn = 64, 128
	for i0 := 0; i0 < m; i0 += tm {
		mi := min(tm, m-i0)
		as := a[i0*lda:]
		if tA == blas.Trans {
			as = a[i0:]
		}
		for j0 := 0; j0 < n; j0 += tn {
			nj := min(tn, n-j0)
			bs := b[j0:]
			if tB == blas.Trans {
				bs = b[j0*ldb:]
			}
			impl.Dgemm(tA, tB, mi, nj, k, 1, as, lda, bs, ldb, 0, c[i0*ldc+j0:], ldc)
		}
	}
}

// smallGemm is the largest m·n·k done with plain loops (BenchmarkProducts
// puts the crossover with gonum's kernel between D = 8 and D = 32).
const smallGemm = 8192

func gemmSmall(tA, tB blas.Transpose, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		for j := range ci {
			ci[j] = 0
		}
	}
	switch {
	case tA == blas.Trans && tB == blas.NoTrans: // C[i][j] = Σ_l A[l][i] B[l][j]
		for l := 0; l < k; l++ {
			al := a[l*lda : l*lda+m]
			bl := b[l*ldb : l*ldb+n]
			for i, ail := range al {
				ci := c[i*ldc : i*ldc+n]
				for j, blj := range bl {
					ci[j] += ail * blj
				}
			}
		}
	case tA == blas.NoTrans && tB == blas.Trans: // C[i][j] = Σ_l A[i][l] B[j][l]
		for i := 0; i < m; i++ {
			ai := a[i*lda : i*lda+k]
			ci := c[i*ldc : i*ldc+n]
			for j := range ci {
				bj := b[j*ldb : j*ldb+k]
				var sum float64
				for l, x := range ai {
					sum += x * bj[l]
				}
				ci[j] = sum
			}
		}
	case tA == blas.NoTrans && tB == blas.NoTrans: // C[i][j] = Σ_l A[i][l] B[l][j]
		for i := 0; i < m; i++ {
			ai := a[i*lda : i*lda+k]
			ci := c[i*ldc : i*ldc+n]
			for l, x := range ai {
				bl := b[l*ldb : l*ldb+n]
				for j, blj := range bl {
					ci[j] += x * blj
				}
			}
		}
	default:
		panic("flow: gemm: AᵀBᵀ is not used")
	}
}

// Loss returns the exact population loss at y (eigen coordinates):
// L = Σ_d λ_d − 2 Σ_d λ_d² M_dd + Σ_{d,e} a_d M_de² λ_e, the eigenbasis form
// of tr(Λ) − 2 tr(ΛMΛ) + tr(MᵀAMΛ).
func (s *System) Loss(y []float64) float64 {
	s.checkLen("y", y)
	s.effectiveMap(y)
	d := s.d
	lam, a := s.Data.Lambda, s.Data.a
	l := s.Data.trace
	for i := 0; i < d; i++ {
		row := s.scr.m[i*d : (i+1)*d]
		l -= 2 * s.lam2[i] * row[i]
		var q float64
		for j, mij := range row {
			q += mij * mij * lam[j]
		}
		l += a[i] * q
	}
	return l
}

// MapEigen returns the effective map M in eigen coordinates, row-major D×D.
func (s *System) MapEigen(y []float64) []float64 {
	s.checkLen("y", y)
	s.effectiveMap(y)
	return append([]float64(nil), s.scr.m...)
}

// Map returns the effective map M = V M' Vᵀ in the original basis, so that
// ŷ = βᵀ M x_q.
func (s *System) Map(y []float64) *mat.Dense {
	m := mat.NewDense(s.d, s.d, s.MapEigen(y))
	var out mat.Dense
	out.Mul(s.Data.Vecs, m)
	out.Mul(&out, s.rotTo)
	return &out
}

// GradNorm returns ‖∂L/∂W‖ = 2τ‖dy/dt‖ at y (the norm is invariant under the
// change of coordinates).
func (s *System) GradNorm(y []float64) float64 {
	s.Deriv(s.scr.dy, y)
	return 2 * s.Model.Tau * impl.Dnrm2(s.n, s.scr.dy, 1)
}

// Conserved returns the quantities the exact flow conserves (paper eqs.
// attnM-conservation and attnS-lowrank-conservation), in a fixed order:
// separate: ‖k_{i,r}‖² − ‖q_{i,r}‖² for the H·R pairs (row i·R + r), then
// Σ_r ‖k_{i,r}‖² − v_i² for the H heads; merged: the H×H matrix
// w₂w₂ᵀ − W₁W₁ᵀ, row-major, with entries v_i v_j − ⟨U_i, U_j⟩_F.
func (s *System) Conserved(y []float64) []float64 {
	s.checkLen("y", y)
	d, h := s.d, s.Model.H
	if s.Model.Kind == Merged {
		dd := d * d
		out := make([]float64, h*h)
		for i := 0; i < h; i++ {
			for j := 0; j < h; j++ {
				out[i*h+j] = y[i]*y[j] - impl.Ddot(dd, y[h+i*dd:], 1, y[h+j*dd:], 1)
			}
		}
		return out
	}
	r := s.Model.R
	hr := h * r
	k := y[h : h+hr*d]
	q := y[h+hr*d:]
	out := make([]float64, hr+h)
	for i := 0; i < h; i++ {
		out[hr+i] = -y[i] * y[i]
		for rr := 0; rr < r; rr++ {
			row := (i*r + rr) * d
			kk := impl.Ddot(d, k[row:], 1, k[row:], 1)
			qq := impl.Ddot(d, q[row:], 1, q[row:], 1)
			out[i*r+rr] = kk - qq
			out[hr+i] += kk
		}
	}
	return out
}

// Alignment returns, for the separate model at y (eigen coordinates), the
// alignment |⟨k_{i,r}, e_d⟩|/‖k_{i,r}‖ of every key and query with every
// eigenvector: two (H·R)×D row-major arrays. A zero vector has alignment 0.
// In eigen coordinates ⟨k, e_d⟩ is the d-th component of k'.
func (s *System) Alignment(y []float64) (keys, queries []float64) {
	s.checkLen("y", y)
	s.must(Separate)
	d, h := s.d, s.Model.H
	hr := h * s.Model.R
	align := func(src []float64) []float64 {
		out := make([]float64, hr*d)
		for row := 0; row < hr; row++ {
			v := src[row*d : (row+1)*d]
			nrm := impl.Dnrm2(d, v, 1)
			if nrm == 0 {
				continue
			}
			for j, x := range v {
				out[row*d+j] = math.Abs(x) / nrm
			}
		}
		return out
	}
	return align(y[h : h+hr*d]), align(y[h+hr*d:])
}
