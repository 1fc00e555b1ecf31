package flow

import "github.com/linattn/linattn/flow/internal/gemm"

// jacEntries evaluates single entries of the separate model's Jacobian
// J = −∇²L/(2τ) in eigen coordinates at one state, in O(R) each, from
// quantities of O(D³) work. As L is quadratic in the effective map M
// (∂L/∂M = −2G, ∂²L/∂M_ab² = 2 a_a λ_b) and M = Σ_j v_{i(j)} k_j q_jᵀ is
// linear in each of v, k, q (row j of K and Q belongs to head i(j) = j/R),
//
//	τJ = −Bᵀ diag(a_a λ_b) B + Σ_ab G_ab ∇²M_ab,  B = ∂M/∂(v, k, q),
//
// which gives, with P^Λ_jl = q_jᵀΛq_l and P^A_jl = k_jᵀAk_l,
//
//	τJ(v_i, v_m)       = −Σ_{j∈i, l∈m} P^A_jl P^Λ_jl
//	τJ(v_m, k_j[a])    = [i(j) = m] (G q_j)_a − v_j a_a Σ_{l∈m} k_l[a] P^Λ_lj
//	τJ(v_m, q_j[b])    = [i(j) = m] (Gᵀk_j)_b − v_j λ_b Σ_{l∈m} q_l[b] P^A_lj
//	τJ(k_j[a], k_l[c]) = −[a = c] v_j v_l a_a P^Λ_jl
//	τJ(q_j[b], q_l[d]) = −[b = d] v_j v_l λ_b P^A_jl
//	τJ(k_j[a], q_l[d]) = v_j (−a_a λ_d v_l k_l[a] q_j[d] + [j = l] G_ad)
//
// (v_j is the value weight of row j's head; docs/math.md, "Population
// loss and flow"). TestJacEntries checks them against Linearization.Dense.
type jacEntries struct {
	h, r, d, hr int
	tau         float64
	lam, a      []float64 // Λ and A, diagonal in eigen coordinates
	v, k, q     []float64 // the state: H values, HR×D keys and queries
	g           []float64 // G = Λ² − A M Λ (D×D)
	gq, gk      []float64 // rows G q_j and Gᵀ k_j (HR×D)
	pl, pa      []float64 // P^Λ and P^A (HR×HR)
	gt          []float64 // scratch: Gᵀ
	scaled, tr  []float64 // scratch: Q Λ or K A (HR×D), a transpose (D×HR)
}

func newJacEntries(s *System) *jacEntries {
	h, r, d := s.Model.H, s.Model.R, s.d
	hr := h * r
	vec := func(n int) []float64 { return make([]float64, n) }
	return &jacEntries{h: h, r: r, d: d, hr: hr, tau: s.Model.Tau, lam: s.lam, a: s.a,
		v: vec(h), k: vec(hr * d), q: vec(hr * d), g: vec(d * d), gq: vec(hr * d), gk: vec(hr * d),
		pl: vec(hr * hr), pa: vec(hr * hr), gt: vec(d * d), scaled: vec(hr * d), tr: vec(d * hr)}
}

// at sets the state y (eigen coordinates) and computes G, the rows G q_j
// and Gᵀk_j, and the Gram matrices P^Λ and P^A.
func (je *jacEntries) at(s *System, y []float64) {
	h, d, hr := je.h, je.d, je.hr
	copy(je.v, y[:h])
	copy(je.k, y[h:h+hr*d])
	copy(je.q, y[h+hr*d:])
	s.effectiveMap(y)
	s.residual(je.g, je.gt, s.scr.m, 1, true)
	gemm.Mul(hr, d, d, je.q, je.gt, je.gq)
	gemm.Mul(hr, d, d, je.k, je.g, je.gk)
	je.gram(je.pl, je.q, je.lam)
	je.gram(je.pa, je.k, je.a)
}

// gram sets p = X W Xᵀ for the rows of x (HR×D) and the diagonal w.
func (je *jacEntries) gram(p, x, w []float64) {
	d, hr := je.d, je.hr
	for j := 0; j < hr; j++ {
		row := x[j*d : (j+1)*d]
		for c, xc := range row {
			je.scaled[j*d+c] = xc * w[c]
			je.tr[c*hr+j] = xc
		}
	}
	gemm.Mul(hr, hr, d, je.scaled, je.tr, p)
}

// varKind is what a state index holds: a value weight, a key or a query
// component.
type varKind uint8

const (
	varV varKind = iota
	varK
	varQ
)

// locate returns the kind of index x, its head (v) or row (k, q), and
// its component (k, q).
func (je *jacEntries) locate(x int) (kind varKind, row, comp int) {
	switch off := x - je.h; {
	case off < 0:
		return varV, x, 0
	case off < je.hr*je.d:
		return varK, off / je.d, off % je.d
	default:
		off -= je.hr * je.d
		return varQ, off / je.d, off % je.d
	}
}

// entry returns J_xy.
func (je *jacEntries) entry(x, y int) float64 {
	kx, rx, cx := je.locate(x)
	ky, ry, cy := je.locate(y)
	if kx > ky {
		kx, rx, cx, ky, ry, cy = ky, ry, cy, kx, rx, cx
	}
	var e float64
	switch {
	case kx == varV && ky == varV:
		e = je.vv(rx, ry)
	case kx == varV && ky == varK:
		e = je.vk(rx, ry, cy)
	case kx == varV:
		e = je.vq(rx, ry, cy)
	case kx == varK && ky == varK:
		if cx == cy {
			e = -je.v[rx/je.r] * je.v[ry/je.r] * je.a[cx] * je.pl[rx*je.hr+ry]
		}
	case kx == varK:
		e = je.kq(rx, cx, ry, cy)
	default:
		if cx == cy {
			e = -je.v[rx/je.r] * je.v[ry/je.r] * je.lam[cx] * je.pa[rx*je.hr+ry]
		}
	}
	return e / je.tau
}

func (je *jacEntries) vv(i, m int) float64 {
	var s float64
	for j := i * je.r; j < (i+1)*je.r; j++ {
		for l := m * je.r; l < (m+1)*je.r; l++ {
			s += je.pa[j*je.hr+l] * je.pl[j*je.hr+l]
		}
	}
	return -s
}

func (je *jacEntries) vk(m, j, a int) float64 {
	var s float64
	for l := m * je.r; l < (m+1)*je.r; l++ {
		s += je.k[l*je.d+a] * je.pl[l*je.hr+j]
	}
	e := -je.v[j/je.r] * je.a[a] * s
	if j/je.r == m {
		e += je.gq[j*je.d+a]
	}
	return e
}

func (je *jacEntries) vq(m, j, b int) float64 {
	var s float64
	for l := m * je.r; l < (m+1)*je.r; l++ {
		s += je.q[l*je.d+b] * je.pa[l*je.hr+j]
	}
	e := -je.v[j/je.r] * je.lam[b] * s
	if j/je.r == m {
		e += je.gk[j*je.d+b]
	}
	return e
}

// kq is τJ(k_j[a], q_l[b]).
func (je *jacEntries) kq(j, a, l, b int) float64 {
	d := je.d
	vj, vl := je.v[j/je.r], je.v[l/je.r]
	e := -je.a[a] * je.lam[b] * vl * je.k[l*d+a] * je.q[j*d+b]
	if j == l {
		e += je.g[a*d+b]
	}
	return vj * e
}
