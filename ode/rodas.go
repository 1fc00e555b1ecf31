package ode

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Rodas5P is Steinebach's L-stable Rosenbrock method of order 5 with an
// embedded formula of order 4 and a stiffly accurate continuous extension of
// order 4 (G. Steinebach, Construction of Rosenbrock–Wanner method Rodas5P
// and numerical benchmarks within the Julia Differential Equations package,
// BIT 63 (2023) 27; coefficients as in OrdinaryDiffEq.jl). A step solves
// eight linear systems with the matrix I/(γh) − J, J = ∂f/∂y at the step's
// start, factored once per step size by LAPACK's dgetrf (through gonum's
// lapack64) and solved by dgetrs. It takes the Jacobian from Problem.Jac or
// by finite differences (n evaluations). The factorization costs n³/3
// flops, so it refuses states larger than MaxDenseDim.
var Rodas5P Method = &rosenbrock{tab: &rodas5P}

// rosenbrockTableau is a Rosenbrock method in the transformed form of
// HNW II, IV.7 (eq. 7.25) as OrdinaryDiffEq.jl writes it: with W = I/(γh) − J,
//
//	W k_i = f(t + c_i h, y + Σ_{j<i} a_ij k_j) + Σ_{j<i} (C_ij/h) k_j + h d_i ∂f/∂t,
//
// and y₁ = y + Σ_{j<s} a_sj k_j + k_s (stiffly accurate: the last row of a
// gives the embedded solution ŷ = y₁ − k_s). The continuous extension is
// y(θ) = (1−θ)y + θ(y₁ + (1−θ)(K₁ + θ(K₂ + θK₃))), K_j = Σ_i H_ji k_i.
type rosenbrockTableau struct {
	name              string
	order, errorOrder int
	gamma             float64
	a, c              [][]float64 // strictly lower triangular, s × s
	nodes, d          []float64
	h                 [][]float64 // 3 × s
}

var rodas5P = rosenbrockTableau{
	name: "Rodas5P", order: 5, errorOrder: 4,
	gamma: 0.21193756319429014,
	a: [][]float64{
		{},
		{3.0},
		{2.849394379747939, 0.45842242204463923},
		{-6.954028509809101, 2.489845061869568, -10.358996098473584},
		{2.8029986275628964, 0.5072464736228206, -0.3988312541770524, -0.04721187230404641},
		{-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946},
		{-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946, 1},
		{-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946, 1, 1},
	},
	c: [][]float64{
		{},
		{-14.155112264123755},
		{-17.97296035885952, -2.859693295451294},
		{147.12150275711716, -1.41221402718213, 71.68940251302358},
		{165.43517024871676, -0.4592823456491126, 42.90938336958603, -5.961986721573306},
		{24.854864614690072, -3.0009227002832186, 47.4931110020768, 5.5814197821558125, -0.6610691825249471},
		{30.91273214028599, -3.1208243349937974, 77.79954646070892, 34.28646028294783, -19.097331116725623, -28.087943162872662},
		{37.80277123390563, -3.2571969029072276, 112.26918849496327, 66.9347231244047, -40.06618937091002, -54.66780262877968, -9.48861652309627},
	},
	nodes: []float64{0, 0.6358126895828704, 0.4095798393397535, 0.9769306725060716, 0.4288403609558664, 1, 1, 1},
	d:     []float64{0.21193756319429014, -0.42387512638858027, -0.3384627126235924, 1.8046452872882734, 2.325825639765069, 0, 0, 0},
	h: [][]float64{
		{25.948786856663858, -2.5579724845846235, 10.433815404888879, -2.3679251022685204, 0.524948541321073, 1.1241088310450404, 0.4272876194431874, -0.17202221070155493},
		{-9.91568850695171, -0.9689944594115154, 3.0438037242978453, -24.495224566215796, 20.176138334709044, 15.98066361424651, -6.789040303419874, -6.710236069923372},
		{11.419903575922262, 2.8879645146136994, 72.92137995996029, 80.12511834622643, -52.072871366152654, -59.78993625266729, -0.15582684282751913, 4.883087185713722},
	},
}

type rosenbrock struct{ tab *rosenbrockTableau }

func (m *rosenbrock) Name() string { return m.tab.name }

// Family returns DenseImplicit.
func (m *rosenbrock) Family() Family { return DenseImplicit }

func (m *rosenbrock) newStepper(in *Integrator) stepper {
	n, s := in.n, len(m.tab.nodes)
	st := &rosenbrockStepper{tab: m.tab, in: in, jac: newDenseJacobian(in)}
	st.k = make([][]float64, s)
	for i := range st.k {
		st.k[i] = make([]float64, n)
	}
	st.u, st.du, st.dfdt = make([]float64, n), make([]float64, n), make([]float64, n)
	st.vecs = [][]float64{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
	return st
}

type rosenbrockStepper struct {
	tab *rosenbrockTableau
	in  *Integrator
	p   *Problem

	jac      denseJacobian // ∂f/∂y at the step's start
	w        blas64.General
	ipiv     []int
	jacFresh bool    // jac and dfdt belong to the current in.y
	hLU      float64 // the h of the factored W; 0 when none

	k          [][]float64
	u, du      []float64
	dfdt       []float64
	vecs       [][]float64
	denseReady bool
}

func (st *rosenbrockStepper) begin(p *Problem) error {
	n := st.in.n
	if err := checkDenseDim(st.tab.name, n); err != nil {
		return err
	}
	if st.w.Data == nil {
		st.w = blas64.General{Rows: n, Cols: n, Stride: max(n, 1), Data: make([]float64, n*n)}
		st.ipiv = make([]int, n)
	}
	st.p, st.jacFresh, st.hLU = p, false, 0
	st.jac.forget()
	return nil
}

func (st *rosenbrockStepper) limit(_, h float64) float64    { return h }
func (st *rosenbrockStepper) order() int                    { return st.tab.order }
func (st *rosenbrockStepper) hermiteDense() (float64, bool) { return 0, false }
func (st *rosenbrockStepper) radius() float64               { return st.jac.radius() }
func (st *rosenbrockStepper) forget() {
	st.jacFresh, st.hLU = false, 0
	st.jac.forget()
}
func (st *rosenbrockStepper) active() int     { return 0 }
func (st *rosenbrockStepper) names() []string { return []string{st.tab.name} }

func (st *rosenbrockStepper) controller() controllerDefaults {
	// rodas.f: SAFE = 0.9, FAC1 = 5 (MinScale 1/5), FAC2 = 1/6 (MaxScale 6).
	return controllerDefaults{errorOrder: st.tab.errorOrder, predictive: true, safety: 0.9, minScale: 0.2, maxScale: 6}
}

func (st *rosenbrockStepper) accept(_, _ float64) {
	st.jacFresh, st.hLU, st.denseReady = false, 0, false
}

// attempt takes one step; the Jacobian is reused after a rejection (the
// state is the same), W is refactored for each new h.
func (st *rosenbrockStepper) attempt(t, h float64) float64 {
	in, tab := st.in, st.tab
	st.denseReady = false
	if !st.jacFresh {
		st.jacobian(t)
		st.jacFresh = true
	}
	if h != st.hLU {
		if !st.factor(h) {
			return math.NaN()
		}
	}
	s := len(tab.nodes)
	for i := 0; i < s; i++ {
		st.stageInput(i)
		if i == 0 {
			copy(st.du, in.f0)
		} else {
			in.f(t+tab.nodes[i]*h, st.u, st.du)
			in.stats.FuncEvals++
		}
		if !st.solveStage(i, h) {
			return math.NaN()
		}
	}
	kLast := st.k[s-1]
	var sum float64
	for i := range in.ynew {
		in.ynew[i] = st.u[i] + kLast[i]
	}
	for i := range in.ynew {
		e := kLast[i] / in.scale(i)
		sum += e * e
	}
	in.f(t+h, in.ynew, in.f1)
	in.stats.FuncEvals++
	if !allFinite(in.f1) {
		return math.NaN()
	}
	return math.Sqrt(sum / float64(in.n))
}

// stageInput sets st.u = y + Σ_{j<i} a_ij k_j.
func (st *rosenbrockStepper) stageInput(i int) {
	copy(st.u, st.in.y)
	for j, a := range st.tab.a[i] {
		if a == 0 {
			continue
		}
		for l, v := range st.k[j] {
			st.u[l] += a * v
		}
	}
}

// solveStage solves W k_i = st.du + Σ_{j<i} (C_ij/h) k_j + h d_i ∂f/∂t.
func (st *rosenbrockStepper) solveStage(i int, h float64) bool {
	r := st.k[i]
	copy(r, st.du)
	for j, c := range st.tab.c[i] {
		c /= h
		for l, v := range st.k[j] {
			r[l] += c * v
		}
	}
	if d := st.tab.d[i]; d != 0 && !st.p.Autonomous {
		for l, v := range st.dfdt {
			r[l] += h * d * v
		}
	}
	st.in.stats.LinearSolves++
	luSolve(st.w, st.ipiv, r)
	return allFinite(r)
}

// factor forms W = I/(γh) − J and factors it; false if it is singular.
func (st *rosenbrockStepper) factor(h float64) bool {
	n := st.in.n
	g := 1 / (st.tab.gamma * h)
	for i, v := range st.jac.a {
		st.w.Data[i] = -v
	}
	for r := 0; r < n; r++ {
		st.w.Data[r*n+r] += g
	}
	st.in.stats.Decompositions++
	st.hLU = h
	if !lapack64.Getrf(st.w, st.ipiv) {
		st.hLU = 0 // the factors are unusable; refactor on the next attempt
		return false
	}
	return true
}

// jacobian evaluates J and, unless the problem is autonomous, ∂f/∂t by a
// forward difference at (t, in.y).
func (st *rosenbrockStepper) jacobian(t float64) {
	in := st.in
	st.jac.eval(st.p, t)
	if !st.p.Autonomous {
		d := math.Sqrt(eps * math.Max(1e-5, math.Abs(t)))
		in.f(t+d, in.y, st.du)
		in.stats.FuncEvals++
		for i := range st.dfdt {
			st.dfdt[i] = (st.du[i] - in.f0[i]) / d
		}
	}
}

// dense returns Hairer's form of the Rosenbrock extension:
// F₁ = y₁ − y, F₂ = K₁, F₃ = K₂ + K₃, F₄ = −K₃.
func (st *rosenbrockStepper) dense(_, _ float64) [][]float64 {
	if st.denseReady {
		return st.vecs
	}
	in, hm := st.in, st.tab.h
	for i := range in.y {
		var k1, k2, k3 float64
		for j, kj := range st.k {
			k1 += hm[0][j] * kj[i]
			k2 += hm[1][j] * kj[i]
			k3 += hm[2][j] * kj[i]
		}
		st.vecs[0][i] = in.ynew[i] - in.y[i]
		st.vecs[1][i] = k1
		st.vecs[2][i] = k2 + k3
		st.vecs[3][i] = -k3
	}
	st.denseReady = true
	return st.vecs
}
