package flow

import (
	"cmp"
	"math"
	"slices"
)

// coupling is an off-diagonal entry J_xy of the Jacobian and its strength
// γ|J_xy|/√(P_xx P_yy) in the Newton matrix P = I − γJ.
type coupling struct {
	x, y int32
	j, s float64
}

// couplingBytes is the size of a coupling (RunBytes).
const couplingBytes = 24

// couplingScan finds the couplings of the separate model's Jacobian whose
// strength at γ is at least minS without looking at all n² entries: the
// entries of each class are products of per-row and per-component factors
// (jacEntries), so a bound from the rows' largest factors rules out whole
// rows, pairs of rows or pairs of heads before their components are
// visited. Dormant heads (small v) are ruled out at once.
type couplingScan struct {
	je      *jacEntries
	gamma   float64
	gt      float64 // γ/τ: the class formulas are τJ's
	aMax    float64 // max_a a_a, max_b λ_b and max |G_ab|
	lMax    float64
	gMax    float64
	gRowMax []float64 // max_b |G_ab| per row a
	minS    float64   // the least strength kept
	is      []float64 // 1/√P_xx
	kaMax   []float64 // per row l: max_a a_a |k_l[a]|
	qlMax   []float64 // per row l: max_b λ_b |q_l[b]|
	ca, cb  []float64 // scratch per component
	limit   int       // the most couplings kept (0: all)
	out     []coupling
}

// add appends the coupling (x, y) if it is strong enough.
func (cs *couplingScan) add(x, y int) {
	j := cs.je.entry(x, y)
	if s := cs.gamma * math.Abs(j) * cs.is[x] * cs.is[y]; s >= cs.minS {
		cs.keep(coupling{x: int32(x), y: int32(y), j: j, s: s})
	}
}

// keep appends c to the couplings found; where they reach twice the
// limit, only the limit strongest stay (prune).
func (cs *couplingScan) keep(c coupling) {
	cs.out = append(cs.out, c)
	if cs.limit > 0 && len(cs.out) >= 2*cs.limit {
		cs.prune()
	}
}

// prune keeps the limit strongest couplings found, in the order of
// strongerFirst, and raises minS to the weakest of them, so that the scan
// passes over the weaker ones from then on: the couplings kept at the end
// are the limit strongest of all, whatever the order of the scan.
func (cs *couplingScan) prune() {
	slices.SortFunc(cs.out, strongerFirst)
	cs.out = cs.out[:cs.limit]
	cs.minS = cs.out[cs.limit-1].s
}

// strongerFirst orders couplings by decreasing strength, then by their
// variables.
func strongerFirst(a, b coupling) int {
	if c := cmp.Compare(b.s, a.s); c != 0 {
		return c
	}
	if c := cmp.Compare(a.x, b.x); c != 0 {
		return c
	}
	return cmp.Compare(a.y, b.y)
}

func (cs *couplingScan) kIndex(j, a int) int { return cs.je.h + j*cs.je.d + a }
func (cs *couplingScan) qIndex(j, b int) int { return cs.je.h + (cs.je.hr+j)*cs.je.d + b }

// scan appends every coupling at least minS strong to cs.out, or the
// limit strongest of them (keep).
func (cs *couplingScan) scan() {
	je := cs.je
	cs.gt = cs.gamma / je.tau
	cs.aMax, cs.lMax, cs.gMax = 0, 0, 0
	for c := 0; c < je.d; c++ {
		cs.aMax, cs.lMax = math.Max(cs.aMax, je.a[c]), math.Max(cs.lMax, je.lam[c])
	}
	for a := 0; a < je.d; a++ {
		cs.gRowMax[a] = 0
		for _, g := range je.g[a*je.d : (a+1)*je.d] {
			cs.gRowMax[a] = math.Max(cs.gRowMax[a], math.Abs(g))
		}
		cs.gMax = math.Max(cs.gMax, cs.gRowMax[a])
	}
	for j := 0; j < je.hr; j++ {
		cs.kaMax[j], cs.qlMax[j] = 0, 0
		for c := 0; c < je.d; c++ {
			cs.kaMax[j] = math.Max(cs.kaMax[j], je.a[c]*math.Abs(je.k[j*je.d+c]))
			cs.qlMax[j] = math.Max(cs.qlMax[j], je.lam[c]*math.Abs(je.q[j*je.d+c]))
		}
	}
	for i := 0; i < je.h; i++ {
		for m := i + 1; m < je.h; m++ {
			cs.add(i, m)
		}
	}
	for m := 0; m < je.h; m++ {
		for j := 0; j < je.hr; j++ {
			cs.valueRow(m, j)
		}
	}
	for j := 0; j < je.hr; j++ {
		cs.ownRow(j)
		for l := 0; l < je.hr; l++ {
			if l > j {
				cs.sameComponent(j, l)
			}
			if l != j {
				cs.crossRows(j, l)
			}
		}
	}
	if cs.limit > 0 && len(cs.out) > cs.limit {
		cs.prune()
	}
}

// valueRow: the couplings of v_m with k_j and q_j. For a row of another
// head they scale with |v_j| Σ_{l∈m} |P_lj| times the rows' largest factors.
func (cs *couplingScan) valueRow(m, j int) {
	je := cs.je
	if j/je.r != m {
		var bk, bq float64
		for l := m * je.r; l < (m+1)*je.r; l++ {
			bk += math.Abs(je.pl[l*je.hr+j]) * cs.kaMax[l]
			bq += math.Abs(je.pa[l*je.hr+j]) * cs.qlMax[l]
		}
		if cs.gt*math.Abs(je.v[j/je.r])*math.Max(bk, bq)*cs.is[m] < cs.minS {
			return
		}
	}
	for c := 0; c < je.d; c++ {
		cs.add(m, cs.kIndex(j, c))
		cs.add(m, cs.qIndex(j, c))
	}
}

// ownRow: k_j[a] with q_j[b] of the same row, through
// v_j(−a_a λ_b v_j k_j[a] q_j[b] + G_ab), evaluated here rather than by
// entry: a row of a learned head has D² of them, and a component a whose
// largest possible coupling is too weak is passed over at once.
func (cs *couplingScan) ownRow(j int) {
	je := cs.je
	d := je.d
	vj := je.v[j/je.r]
	if cs.gt*math.Abs(vj)*(math.Abs(vj)*cs.kaMax[j]*cs.qlMax[j]+cs.gMax) < cs.minS {
		return
	}
	k, q := je.k[j*d:(j+1)*d], je.q[j*d:(j+1)*d]
	isq := cs.is[cs.qIndex(j, 0) : cs.qIndex(j, 0)+d]
	for a := 0; a < d; a++ {
		x := cs.kIndex(j, a)
		c := -je.a[a] * vj * k[a]
		g := je.g[a*d : (a+1)*d]
		bound := cs.gt * math.Abs(vj) * (math.Abs(c)*cs.qlMax[j] + cs.gRowMax[a]) * cs.is[x]
		if bound < cs.minS {
			continue
		}
		for b := 0; b < d; b++ {
			e := vj * (c*je.lam[b]*q[b] + g[b]) / je.tau
			if s := cs.gamma * math.Abs(e) * cs.is[x] * isq[b]; s >= cs.minS {
				cs.keep(coupling{x: int32(x), y: int32(cs.qIndex(j, b)), j: e, s: s})
			}
		}
	}
}

// sameComponent: k_j[a] with k_l[a] (−v_j v_l a_a P^Λ_jl) and q_j[b] with
// q_l[b] (−v_j v_l λ_b P^A_jl), j < l.
func (cs *couplingScan) sameComponent(j, l int) {
	je := cs.je
	vv := cs.gt * math.Abs(je.v[j/je.r]*je.v[l/je.r])
	if vv*cs.aMax*math.Abs(je.pl[j*je.hr+l]) >= cs.minS {
		for a := 0; a < je.d; a++ {
			cs.add(cs.kIndex(j, a), cs.kIndex(l, a))
		}
	}
	if vv*cs.lMax*math.Abs(je.pa[j*je.hr+l]) >= cs.minS {
		for b := 0; b < je.d; b++ {
			cs.add(cs.qIndex(j, b), cs.qIndex(l, b))
		}
	}
}

// crossRows: k_j[a] with q_l[b], l ≠ j: −v_j v_l a_a λ_b k_l[a] q_j[b],
// a product of a factor of a and one of b, so only the components where
// both are large are visited.
func (cs *couplingScan) crossRows(j, l int) {
	je := cs.je
	c := cs.gt * math.Abs(je.v[j/je.r]*je.v[l/je.r])
	if c*cs.kaMax[l]*cs.qlMax[j] < cs.minS {
		return
	}
	var amax, bmax float64
	for x := 0; x < je.d; x++ {
		cs.ca[x] = je.a[x] * math.Abs(je.k[l*je.d+x]) * cs.is[cs.kIndex(j, x)]
		cs.cb[x] = je.lam[x] * math.Abs(je.q[j*je.d+x]) * cs.is[cs.qIndex(l, x)]
		amax, bmax = math.Max(amax, cs.ca[x]), math.Max(bmax, cs.cb[x])
	}
	if c*amax*bmax < cs.minS {
		return
	}
	for a := 0; a < je.d; a++ {
		if c*cs.ca[a]*bmax < cs.minS {
			continue
		}
		for b := 0; b < je.d; b++ {
			if c*cs.ca[a]*cs.cb[b] >= cs.minS {
				cs.add(cs.kIndex(j, a), cs.qIndex(l, b))
			}
		}
	}
}
