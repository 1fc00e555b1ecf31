package flow

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/flow/internal/gemm"
)

var impl gonum.Implementation

type scratch struct {
	m   []float64 // effective map M (D×D, eigen coordinates)
	g   []float64 // residual G = Λ² − A M Λ (D×D)
	vq  []float64 // rows v_i q_{i,r} (separate, H·R×D)
	gt  []float64 // Gᵀ (separate, D×D)
	dy  []float64 // a state-sized buffer for GradNorm
	rot []float64 // a state-sized buffer for rotate
	ye  []float64 // a state-sized buffer for Loss
}

func newScratch(s *System) scratch {
	d := s.d
	sc := scratch{m: make([]float64, d*d), g: make([]float64, d*d), dy: make([]float64, s.n), rot: make([]float64, s.n), ye: make([]float64, s.n)}
	if s.Model.Kind == Separate {
		sc.vq = make([]float64, s.Model.H*s.Model.R*d)
		sc.gt = make([]float64, d*d)
	}
	return sc
}

// DerivEigen writes dy/dt at the state y (eigen coordinates) into dydt:
//
//	merged:   τ dU_i/dt = v_i G,          τ dv_i/dt = ⟨U_i, G⟩_F,
//	separate: τ dk_{i,r}/dt = v_i G q_{i,r}, τ dq_{i,r}/dt = v_i Gᵀ k_{i,r},
//	          τ dv_i/dt = Σ_r k_{i,r}ᵀ G q_{i,r},
//
// with the residual G = Λ² − A M Λ (docs/math.md, "Population loss and flow";
// paper eqs. attnM-gd and attnS-lowrank-gd, using (Λ ⊗ A) vec M = vec(AMΛ)
// instead of forming E[zzᵀ]). In eigen coordinates Λ and A are diagonal, so
// G costs O(D²) and the work is three matrix products (separate) or two
// matrix–vector products (merged). It does not allocate. y and dydt must not
// overlap. A System is not safe for concurrent use.
func (s *System) DerivEigen(dydt, y []float64) {
	s.checkLen("y", y)
	s.checkLen("dydt", dydt)
	switch {
	case s.stack != nil:
		s.stack.deriv(dydt, y)
	case s.law.full != nil:
		s.law.full.deriv(dydt, y, s.Model.Tau)
	case s.Model.Kind == Merged:
		s.derivMerged(dydt, y)
	default:
		s.derivSeparate(dydt, y)
	}
}

// Func returns DerivEigen as an ode right-hand side (eigen coordinates).
func (s *System) Func() func(t float64, y, dydt []float64) {
	return func(_ float64, y, dydt []float64) { s.DerivEigen(dydt, y) }
}

// residual sets g = c·(Λ² − A M Λ), the residual of the effective map m
// scaled by c, or with withLam2 false its linear part −c·A m Λ (the change
// δG of the residual under a change m of M). Λ and A are diagonal in eigen
// coordinates. If gt is not nil it also receives gᵀ.
func (s *System) residual(g, gt, m []float64, c float64, withLam2 bool) {
	if s.law.cov != nil {
		s.law.cov.residual(g, gt, m, c, withLam2)
		return
	}
	d := s.d
	lam, a := s.lam, s.a
	for i := 0; i < d; i++ {
		row := m[i*d : (i+1)*d]
		grow := g[i*d : (i+1)*d]
		lam := lam[:len(row)]
		ci := -c * a[i]
		for j, mij := range row {
			grow[j] = ci * mij * lam[j]
		}
		if withLam2 {
			grow[i] += c * s.lam2[i]
		}
		if gt != nil {
			for j, gij := range grow {
				gt[j*d+i] = gij
			}
		}
	}
}

// effectiveMap fills scr.m with M = Σ_i v_i U_i or Σ_{i,r} v_i k_{i,r} q_{i,r}ᵀ.
func (s *System) effectiveMap(y []float64) { effectiveMapTo(s.scr.m, s.scr.vq, y, s.Model, s.d) }

// effectiveMapTo writes the effective map of the heads of one layer, y
// (v, then U or K and Q, in System's layout), into m (D×D): M = Σ_i v_i U_i
// or Kᵀ diag(v) Q; vq (separate: H·R×D) receives the rows v_i q_{i,r}.
func effectiveMapTo(m, vq, y []float64, model Model, d int) {
	h := model.H
	if model.Kind == Merged {
		impl.Dgemv(blas.Trans, h, d*d, 1, y[h:], d*d, y[:h], 1, 0, m, 1)
		return
	}
	r := model.R
	hr := h * r
	k := y[h : h+hr*d]
	q := y[h+hr*d:]
	for row := 0; row < hr; row++ {
		vi := y[row/r]
		dst := vq[row*d : (row+1)*d]
		for j, x := range q[row*d : (row+1)*d] {
			dst[j] = vi * x
		}
	}
	gemm.MulTA(d, d, hr, k, vq, m) // M = Kᵀ (diag(v) Q)
}

func (s *System) derivMerged(dydt, y []float64) {
	s.effectiveMap(y)
	s.residual(s.scr.g, nil, s.scr.m, 1, true)
	mergedChain(dydt, y, s.scr.g, s.Model.H, s.d, 1/s.Model.Tau)
}

// mergedChain writes the merged heads' flow from the residual g:
// dU_i = v_i G/τ, dv_i = ⟨U_i, G⟩/τ (invTau = 1/τ).
func mergedChain(dydt, y, g []float64, h, d int, invTau float64) {
	dd := d * d
	impl.Dgemv(blas.NoTrans, h, dd, invTau, y[h:], dd, g, 1, 0, dydt[:h], 1)
	for i := 0; i < h; i++ {
		c := y[i] * invTau
		dst := dydt[h+i*dd : h+(i+1)*dd]
		for j, gj := range g {
			dst[j] = c * gj
		}
	}
}

// derivSeparate: with G the residual, dv_i = k_iᵀ G q_i/τ,
// dk_i = v_i G q_i/τ and dq_i = v_i Gᵀ k_i/τ (docs/math.md). G/τ and its
// transpose are formed once; dk is the product (diag(v)Q)(G/τ)ᵀ, whose
// left factor effectiveMap made, and S = K(G/τ), rows Gᵀk_i/τ, gives dq_i =
// v_i S_i and dv_i = q_i·S_i.
func (s *System) derivSeparate(dydt, y []float64) {
	s.effectiveMap(y)
	g, gt := s.scr.g, s.scr.gt
	s.residual(g, gt, s.scr.m, 1/s.Model.Tau, true)
	separateChain(dydt, y, s.scr.vq, g, gt, s.Model.H, s.Model.R, s.d)
}

// separateChain writes the separate heads' flow from g = G/τ and gt = gᵀ,
// with vq the rows v_i q_{i,r} (effectiveMapTo).
func separateChain(dydt, y, vq, g, gt []float64, h, r, d int) {
	hr := h * r
	k := y[h : h+hr*d]
	q := y[h+hr*d:]
	dk := dydt[h : h+hr*d]
	dq := dydt[h+hr*d:]
	gemm.Mul(hr, d, d, vq, gt, dk)
	gemm.Mul(hr, d, d, k, g, dq)
	for i := 0; i < h; i++ {
		var dv float64
		vi := y[i]
		for rr := 0; rr < r; rr++ {
			row := (i*r + rr) * d
			qrow := q[row : row+d]
			srow := dq[row : row+d]
			qrow = qrow[:len(srow)]
			for j, sj := range srow {
				dv += qrow[j] * sj
				srow[j] = vi * sj
			}
		}
		dydt[i] = dv
	}
}

// Loss returns the exact population loss at the state y in the original
// basis (as Init, Run and Trajectory give it); LossEigen takes eigen
// coordinates. It does not allocate.
func (s *System) Loss(y []float64) float64 {
	return s.LossEigen(s.ToEigen(s.scr.ye, y))
}

// Map returns the effective map M in the original basis at the state y in
// the original basis.
func (s *System) Map(y []float64) *mat.Dense {
	return s.MapOfEigen(s.ToEigen(nil, y))
}

// LossEigen returns the exact population loss at y (eigen coordinates):
// L = Σ_d λ_d − 2 Σ_d λ_d² M_dd + Σ_{d,e} a_d M_de² λ_e, the eigenbasis form
// of tr(Λ) − 2 tr(ΛMΛ) + tr(MᵀAMΛ).
func (s *System) LossEigen(y []float64) float64 {
	s.checkLen("y", y)
	switch {
	case s.stack != nil:
		return s.stack.loss(y)
	case s.law.full != nil:
		return s.law.full.loss(y)
	}
	s.effectiveMap(y)
	if s.law.cov != nil {
		return s.law.cov.loss(s.scr.m)
	}
	d := s.d
	lam, a := s.lam, s.a
	l := s.trace
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
	s.mustBeOneLayer("MapEigen")
	s.effectiveMap(y)
	return append([]float64(nil), s.scr.m...)
}

// MapOfEigen returns the effective map M = V M' Vᵀ in the original basis, so that
// ŷ = βᵀ M x_q.
func (s *System) MapOfEigen(y []float64) *mat.Dense {
	return mat.NewDense(s.d, s.d, s.MapOfEigenTo(make([]float64, s.d*s.d), y))
}

// MapOfEigenTo writes the effective map at y (eigen coordinates) in the original
// basis, M = V M_eig Vᵀ, row-major into dst (D×D) and returns dst. It does
// not allocate.
func (s *System) MapOfEigenTo(dst, y []float64) []float64 {
	s.checkLen("y", y)
	s.mustBeOneLayer("MapOfEigenTo")
	return s.setMapTo(dst, y)
}

// MapsOfEigenTo writes the effective map of each set of heads at y (eigen
// coordinates) in the original basis, row-major D×D one after another,
// into dst (Model.HeadSets maps: one for a layer or a tied stack, one per
// layer of an untied stack) and returns dst. It does not allocate.
func (s *System) MapsOfEigenTo(dst, y []float64) []float64 {
	s.checkLen("y", y)
	d, sets := s.d, s.Model.HeadSets()
	if len(dst) != sets*d*d {
		panic(fmt.Sprintf("flow: MapsOfEigenTo: len(dst) = %d, want %d", len(dst), sets*d*d))
	}
	size := s.Model.headsLen(d)
	for l := range sets {
		s.setMapTo(dst[l*d*d:(l+1)*d*d], y[l*size:(l+1)*size])
	}
	return dst
}

// setMapTo writes the effective map of one layer's heads y (eigen
// coordinates) in the original basis, row-major, into dst.
func (s *System) setMapTo(dst, y []float64) []float64 {
	d := s.d
	if len(dst) != d*d {
		panic(fmt.Sprintf("flow: MapOfEigenTo: len(dst) = %d, want %d", len(dst), d*d))
	}
	effectiveMapTo(s.scr.m, s.scr.vq, y, s.Model, d)
	left := s.scr.g // not in use outside DerivEigen and LossEigen
	gemm.Mul(d, d, d, s.vecs, s.scr.m, left)
	gemm.Mul(d, d, d, left, s.vecsT, dst)
	return dst
}

// mustBeOneLayer panics for a stack: its layers have a map each
// (MapsOfEigenTo).
func (s *System) mustBeOneLayer(what string) {
	if s.stack != nil {
		panic(fmt.Sprintf("flow: %s of a stack of %d layers: each layer has its map (MapsOfEigenTo)", what, s.Model.Depth()))
	}
}

// GradNormEigen returns ‖∂L/∂W‖ = 2τ‖dy/dt‖ at y (the norm is invariant under the
// change of coordinates).
func (s *System) GradNormEigen(y []float64) float64 {
	s.DerivEigen(s.scr.dy, y)
	return 2 * s.Model.Tau * impl.Dnrm2(s.n, s.scr.dy, 1)
}

// Conserved returns the quantities the exact flow conserves (paper eqs.
// attnM-conservation and attnS-lowrank-conservation, for any loss that is
// a function of the tensor T of Coefficients), in a fixed order:
// separate: ‖k̃_{i,r}‖² − ‖q_{i,r}‖² for the H·R pairs (row i·R + r), then
// Σ_r ‖k̃_{i,r}‖² − ‖ṽ_i‖² for the H heads; merged: the H×H matrix
// ṼṼᵀ − W̃W̃ᵀ, row-major, with entries ṽ_iᵀṽ_j − ⟨W̃_i, W̃_j⟩_F. For the
// reduced layer ṽ_i = v_i and W̃_i = U_i, k̃ = k (Blocks): w₂w₂ᵀ − W₁W₁ᵀ.
// Either basis may be used: the quantities are invariant under rotation.
//
// A stack's loss is a function of its layers' maps, each of which has its
// heads' symmetries: the quantities of each layer's heads, one layer after
// the other.
func (s *System) Conserved(y []float64) []float64 {
	s.checkLen("y", y)
	if s.stack != nil {
		one := s.Model
		one.Layers, one.Tied = 1, false
		size := one.headsLen(s.d)
		var out []float64
		for l := 0; l < s.Model.HeadSets(); l++ {
			out = append(out, conserved(one, s.d, y[l*size:(l+1)*size])...)
		}
		return out
	}
	return conserved(s.Model, s.d, y)
}

// conserved returns the conserved quantities of one layer's state y.
func conserved(m Model, d int, y []float64) []float64 {
	c := NewCoefficients(d, m)
	b := c.NewBlocks()
	c.Expand(b, y)
	d1, h := d+1, m.H
	dot := func(x, z []float64) float64 { return impl.Ddot(len(x), x, 1, z, 1) }
	if m.Kind == Merged {
		dw := d1 * d
		out := make([]float64, h*h)
		for i := 0; i < h; i++ {
			for j := 0; j < h; j++ {
				out[i*h+j] = dot(b.V[i*d1:(i+1)*d1], b.V[j*d1:(j+1)*d1]) - dot(b.W[i*dw:(i+1)*dw], b.W[j*dw:(j+1)*dw])
			}
		}
		return out
	}
	r := m.R
	hr := h * r
	out := make([]float64, hr+h)
	for i := 0; i < h; i++ {
		vi := b.V[i*d1 : (i+1)*d1]
		out[hr+i] = -dot(vi, vi)
		for p := i * r; p < (i+1)*r; p++ {
			kk := dot(b.K[p*d1:(p+1)*d1], b.K[p*d1:(p+1)*d1])
			out[p] = kk - dot(b.Q[p*d:(p+1)*d], b.Q[p*d:(p+1)*d])
			out[hr+i] += kk
		}
	}
	return out
}

// AlignmentEigen returns, for the separate model at y (eigen coordinates), the
// alignment |⟨k_{i,r}, e_d⟩|/‖k_{i,r}‖ of every key and query with every
// eigenvector: two (H·R)×D row-major arrays. A zero vector has alignment 0.
// In eigen coordinates ⟨k, e_d⟩ is the d-th component of k'.
func (s *System) AlignmentEigen(y []float64) (keys, queries []float64) {
	s.checkLen("y", y)
	s.must(Separate)
	h, size := s.Model.H, s.Model.headsLen(s.d)
	hrd := h * s.Model.R * s.d
	sets := s.Model.HeadSets()
	keys, queries = make([]float64, sets*hrd), make([]float64, sets*hrd)
	for l := range sets {
		off := l * size
		s.alignment(keys[l*hrd:(l+1)*hrd], y[off+h:off+h+hrd])
		s.alignment(queries[l*hrd:(l+1)*hrd], y[off+h+hrd:off+h+2*hrd])
	}
	return keys, queries
}

// alignment sets out to |x_j|/‖x‖ for each of the rows of src, each a
// key or query (a row of zeros stays zero).
func (s *System) alignment(out, src []float64) {
	d := s.d
	for row := 0; row < len(src)/d; row++ {
		v := src[row*d : (row+1)*d]
		nrm := impl.Dnrm2(d, v, 1)
		if nrm == 0 {
			continue
		}
		for j, x := range v {
			out[row*d+j] = math.Abs(x) / nrm
		}
	}
}
