package ode

import (
	"fmt"
	"math"
)

// NewRK validates t and returns the explicit method it describes. It checks
// the shapes, the row-sum condition c_i = Σ_j a_ij, the consistency
// conditions Σ b_i = 1 and Σ E_i = 0, that the continuous extension ends at
// y₁, and the control constants (zero ones take dopri5.f's).
func NewRK(t Tableau) (*RK, error) {
	t = t.clone()
	if err := t.validate(); err != nil {
		return nil, err
	}
	if t.Beta1 == 0 && t.Beta2 == 0 {
		t.Beta1, t.Beta2 = 1/float64(t.ErrorOrder+1), 0
	}
	t.MinScale = pick(t.MinScale, 0.2)
	t.MaxScale = pick(t.MaxScale, 10)
	m := build(t)
	m.stabilityBound = realStabilityBound(m)
	return m, nil
}

func mustRK(t Tableau) *RK {
	m, err := NewRK(t)
	if err != nil {
		panic(err)
	}
	return m
}

// consistencyTol bounds the residuals of the linear conditions checked by
// validate: published tableaux are given to 16–30 digits.
const consistencyTol = 1e-12

func (t *Tableau) validate() error {
	s := len(t.C)
	name := t.Name
	switch {
	case name == "":
		return fmt.Errorf("ode: Tableau.Name is empty")
	case s == 0:
		return fmt.Errorf("ode: %s: Tableau.C is empty", name)
	case len(t.A) != s || len(t.B) != s || len(t.E) != s+1:
		return fmt.Errorf("ode: %s: len(A) = %d, len(B) = %d, len(E) = %d; want s, s, s+1 with s = len(C) = %d", name, len(t.A), len(t.B), len(t.E), s)
	case t.E3 != nil && len(t.E3) != s+1:
		return fmt.Errorf("ode: %s: len(E3) = %d, want %d", name, len(t.E3), s+1)
	case len(t.ExtraA) != len(t.ExtraC):
		return fmt.Errorf("ode: %s: len(ExtraA) = %d, want len(ExtraC) = %d", name, len(t.ExtraA), len(t.ExtraC))
	case t.Order < 1 || t.ErrorOrder < 1 || t.DenseOrder < 0:
		return fmt.Errorf("ode: %s: Order = %d, ErrorOrder = %d, DenseOrder = %d; want ≥ 1, ≥ 1, ≥ 0", name, t.Order, t.ErrorOrder, t.DenseOrder)
	}
	rows := append(append([][]float64{}, t.A...), t.ExtraA...)
	nodes := append(append([]float64{}, t.C...), t.ExtraC...)
	for i, row := range rows {
		want := i
		if i >= s {
			want = s + 1 + (i - s)
		}
		if len(row) != want {
			return fmt.Errorf("ode: %s: stage %d has %d coefficients a_ij, want %d", name, i, len(row), want)
		}
		if r := sum(row) - nodes[i]; math.Abs(r) > consistencyTol {
			return fmt.Errorf("ode: %s: stage %d: Σ_j a_ij − c_i = %.3g, want 0", name, i, r)
		}
	}
	if r := sum(t.B) - 1; math.Abs(r) > consistencyTol {
		return fmt.Errorf("ode: %s: Σ B − 1 = %.3g, want 0", name, r)
	}
	if r := sum(t.E); math.Abs(r) > consistencyTol {
		return fmt.Errorf("ode: %s: Σ E = %.3g, want 0", name, r)
	}
	total := s + 1 + len(t.ExtraC)
	for j, row := range t.Dense {
		if len(row) > total {
			return fmt.Errorf("ode: %s: Dense row %d has %d weights, want ≤ %d stages", name, j, len(row), total)
		}
	}
	if len(t.Dense) > 0 {
		// At θ = 1 the extension is y + F₁: F₁ must be h Σ b_i k_i.
		f1 := pad(t.Dense[0], total)
		for i, b := range pad(t.B, total) {
			if math.Abs(f1[i]-b) > consistencyTol {
				return fmt.Errorf("ode: %s: Dense[0][%d] = %g, want B[%d] = %g (the extension must end at y₁)", name, i, f1[i], i, b)
			}
		}
	}
	if t.Beta1 < 0 || t.Beta2 < 0 || t.MinScale < 0 || t.MinScale >= 1 || (t.MaxScale != 0 && t.MaxScale <= 1) {
		return fmt.Errorf("ode: %s: Beta1 = %g, Beta2 = %g, MinScale = %g, MaxScale = %g; want Beta1, Beta2 ≥ 0, 0 ≤ MinScale < 1, MaxScale = 0 or > 1", name, t.Beta1, t.Beta2, t.MinScale, t.MaxScale)
	}
	return nil
}

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

func pad(w []float64, n int) []float64 {
	out := make([]float64, n)
	copy(out, w)
	return out
}

func clone1(v []float64) []float64 {
	if v == nil {
		return nil
	}
	return append([]float64(nil), v...)
}

func clone2(m [][]float64) [][]float64 {
	if m == nil {
		return nil
	}
	out := make([][]float64, len(m))
	for i, row := range m {
		out[i] = clone1(row)
	}
	return out
}

func (t Tableau) clone() Tableau {
	t.C, t.B, t.E, t.E3, t.ExtraC = clone1(t.C), clone1(t.B), clone1(t.E), clone1(t.E3), clone1(t.ExtraC)
	t.A, t.ExtraA, t.Dense = clone2(t.A), clone2(t.ExtraA), clone2(t.Dense)
	return t
}

func sparse(w []float64) []coef {
	var out []coef
	for j, a := range w {
		if a != 0 {
			out = append(out, coef{j, a})
		}
	}
	return out
}

// build prepares the sparse form of a validated tableau.
func build(t Tableau) *RK {
	m := &RK{tab: t}
	s := len(t.C)
	total := m.totalStages()
	m.cAll = make([]float64, total)
	m.rows = make([][]coef, total)
	copy(m.cAll, t.C)
	for i := 0; i < s; i++ {
		m.rows[i] = sparse(t.A[i])
	}
	m.cAll[s] = 1
	m.rows[s] = sparse(t.B)
	for k, c := range t.ExtraC {
		m.cAll[s+1+k] = c
		m.rows[s+1+k] = sparse(t.ExtraA[k])
	}
	m.bSp = sparse(t.B)
	m.eSp = sparse(t.E)
	if t.E3 != nil {
		m.e3Sp = sparse(t.E3)
	}
	m.dSp = make([][]coef, len(t.Dense))
	for j, row := range t.Dense {
		m.dSp[j] = sparse(row)
	}
	return m
}

// realStabilityBound returns the length of the stability interval
// [−β, 0] of the method's propagated solution: the first z < 0 where the
// stability function R(z) = 1 + z bᵀ(I − zA)⁻¹𝟙 (HNW I, IV.2) leaves the unit
// disc, found by scanning and bisection. The stiffness test of Auto compares
// h·ρ with it (dopri5.f and dop853.f use 3.25 and 6.1).
func realStabilityBound(m *RK) float64 {
	stable := func(z float64) bool { return math.Abs(m.stabilityFunction(z)) <= 1 }
	lo := 0.0
	for z := -0.01; z > -1000; z -= 0.01 {
		if !stable(z) {
			hi := z
			for k := 0; k < 60; k++ {
				mid := 0.5 * (lo + hi)
				if stable(mid) {
					lo = mid
				} else {
					hi = mid
				}
			}
			return -lo
		}
		lo = z
	}
	return 1000
}

// stabilityFunction evaluates R(z) by forward substitution in the explicit
// stages: g_i = 1 + z Σ_{j<i} a_ij g_j, R = 1 + z Σ b_i g_i.
func (m *RK) stabilityFunction(z float64) float64 {
	s := m.Stages()
	g := make([]float64, s)
	for i := 0; i < s; i++ {
		g[i] = 1
		for _, c := range m.rows[i] {
			g[i] += z * c.a * g[c.j]
		}
	}
	r := 1.0
	for _, c := range m.bSp {
		r += z * c.a * g[c.j]
	}
	return r
}

func (m *RK) newStepper(in *Integrator) stepper {
	total := m.totalStages()
	st := &rkStepper{m: m, in: in, k: make([][]float64, total)}
	for i := range st.k {
		if i != 0 && i != m.Stages() {
			st.k[i] = make([]float64, in.n)
		}
	}
	st.ytmp = make([]float64, in.n)
	st.vecs = make([][]float64, len(m.tab.Dense))
	for j := range st.vecs {
		st.vecs[j] = make([]float64, in.n)
	}
	return st
}

// rkStepper is the state of an explicit Runge–Kutta solve. Stage 0 is
// in.f0 and the FSAL stage s is in.f1.
type rkStepper struct {
	m          *RK
	in         *Integrator
	k          [][]float64
	ytmp       []float64
	vecs       [][]float64
	denseReady bool
}

func (st *rkStepper) begin(*Problem) error          { return nil }
func (st *rkStepper) limit(_, h float64) float64    { return h }
func (st *rkStepper) order() int                    { return st.m.tab.Order }
func (st *rkStepper) active() int                   { return 0 }
func (st *rkStepper) names() []string               { return []string{st.m.Name()} }
func (st *rkStepper) accept(_, _ float64)           {}
func (st *rkStepper) hermiteDense() (float64, bool) { return 0, false }

func (st *rkStepper) controller() controllerDefaults {
	t := &st.m.tab
	return controllerDefaults{errorOrder: t.ErrorOrder, safety: 0.9, beta1: t.Beta1, beta2: t.Beta2, minScale: t.MinScale, maxScale: t.MaxScale}
}

// attempt computes stages 1..s-1, y₁ and the FSAL stage k_s = f(t+h, y₁).
func (st *rkStepper) attempt(t, h float64) float64 {
	m, in := st.m, st.in
	st.k[0], st.k[m.Stages()] = in.f0, in.f1
	st.denseReady = false
	s := m.Stages()
	for i := 1; i < s; i++ {
		st.combine(st.ytmp, in.y, h, m.rows[i])
		in.f(t+m.cAll[i]*h, st.ytmp, st.k[i])
	}
	st.combine(in.ynew, in.y, h, m.bSp)
	in.f(t+h, in.ynew, in.f1)
	in.stats.FuncEvals += s
	if !allFinite(in.f1) {
		return math.NaN()
	}
	return st.errorNorm(h)
}

// stiffness returns h·ρ̂ with ρ̂ = ‖f(y₁) − f(Y)‖/‖y₁ − Y‖ for the last
// stage Y before the FSAL stage (both at t+h when c_{s−1} = 1): the
// stiffness detection of dopri5.f and dop853.f (HNW II, IV.2).
func (st *rkStepper) stiffness(h float64) float64 {
	s := st.m.Stages()
	var num, den float64
	for i, v := range st.in.ynew {
		d := st.in.f1[i] - st.k[s-1][i]
		num += d * d
		e := v - st.ytmp[i]
		den += e * e
	}
	if den == 0 {
		return 0
	}
	return math.Abs(h) * math.Sqrt(num/den)
}

// combine sets dst = y + h Σ a_j k_j over the sparse weights w.
func (st *rkStepper) combine(dst, y []float64, h float64, w []coef) {
	copy(dst, y)
	for _, c := range w {
		a := h * c.a
		kj := st.k[c.j][:len(dst)]
		for i, v := range kj {
			dst[i] += a * v
		}
	}
}

// errorNorm returns the scaled RMS norm of the local error estimate.
func (st *rkStepper) errorNorm(h float64) float64 {
	m, in := st.m, st.in
	n := in.n
	var e5, e3 float64
	for i := 0; i < n; i++ {
		sc := in.scale(i)
		var d float64
		for _, c := range m.eSp {
			d += c.a * st.k[c.j][i]
		}
		d /= sc
		e5 += d * d
		if m.e3Sp != nil {
			var d3 float64
			for _, c := range m.e3Sp {
				d3 += c.a * st.k[c.j][i]
			}
			d3 /= sc
			e3 += d3 * d3
		}
	}
	if m.e3Sp == nil {
		return math.Abs(h) * math.Sqrt(e5/float64(n))
	}
	// dop853.f: ERR = |h|·ERR5² / sqrt(n·(ERR5² + 0.01·ERR3²)).
	den := e5 + 0.01*e3
	if den == 0 {
		return 0
	}
	return math.Abs(h) * e5 / math.Sqrt(float64(n)*den)
}

// dense computes the extra stages (if the method has any) and the
// Hairer-form vectors F_j of the accepted step (t, h); in.y and in.f0 still
// hold the step's start.
func (st *rkStepper) dense(t, h float64) [][]float64 {
	if st.denseReady {
		return st.vecs
	}
	m, in := st.m, st.in
	st.k[0], st.k[m.Stages()] = in.f0, in.f1
	s := m.Stages()
	for k := range m.tab.ExtraC {
		i := s + 1 + k
		st.combine(st.ytmp, in.y, h, m.rows[i])
		in.f(t+m.cAll[i]*h, st.ytmp, st.k[i])
		in.stats.FuncEvals++
	}
	for j, w := range m.dSp {
		fj := st.vecs[j]
		for i := range fj {
			fj[i] = 0
		}
		for _, c := range w {
			a := h * c.a
			for i, v := range st.k[c.j] {
				fj[i] += a * v
			}
		}
	}
	st.denseReady = true
	return st.vecs
}
