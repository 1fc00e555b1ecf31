package flow

import (
	"fmt"
	"math"
	"sync"

	"github.com/linattn/linattn/flow/internal/traces"
	"github.com/linattn/linattn/law"
)

// stack is the population gradient flow of L reduced layers stacked on
// a residual stream, keys over the context only and the context's label
// slots written with the opposite sign to the query's (docs/math.md,
// "Depth"): layer ℓ is one step of preconditioned gradient descent,
//
//	w_{ℓ+1} = w_ℓ + A_ℓ (1/n) Σ_j x_j (y_j − x_jᵀ w_ℓ),  w_0 = 0,  ŷ = x_qᵀ w_L,
//
// with A_ℓ = M_ℓᵀ the transpose of layer ℓ's effective map (Σ_i v_i U_i or
// Σ_{i,r} v_i k_{i,r} q_{i,r}ᵀ). Its loss is a polynomial in the traces of
// words in the whitened maps Ã_ℓ = Λ^½A_ℓΛ^½ and the task moment M̃
// (law.StackLoss), evaluated with its gradient and Hessian–vector products
// by package traces; the chain rule through each layer's heads is the
// one layer's (mergedChain, separateChain) with its residual
// G_ℓ = −½ ∂L/∂M_ℓ.
type stack struct {
	model   Model
	d       int
	sets    int       // head sets in the state: 1 tied, L untied
	setLen  int       // the length of one set of heads
	sqrtLam []float64 // √λ_d in eigen coordinates
	prog    *traces.Program
	eval    *traces.Eval
	// task is M̃ of the training law and noise its σ²; the test sets'
	// are made when first asked for.
	task  []float64
	noise float64
	tests *stackTests
	// Per set of heads: its map M (eigen coordinates), Ã, ∂L/∂Ã, the
	// residual G and Gᵀ, and the separate heads' rows v_i q_{i,r} (empty
	// for merged heads), which evaluate leaves for deriv's chain rule.
	m, at, grad, g, gt, vq [][]float64
}

// CheckDepth validates Layers and Tied: a stack of 2 to
// law.MaxStackLayers reduced layers, tied only when it has two or more.
func (m Model) CheckDepth() error {
	switch {
	case m.Layers < 0 || m.Layers > law.MaxStackLayers:
		return fmt.Errorf("flow: Layers = %d, want 1 ≤ L ≤ %d (0 for one layer)", m.Layers, law.MaxStackLayers)
	case m.Depth() > 1 && m.Layer != ReducedLayer:
		return fmt.Errorf("flow: a stack of %d layers is of reduced layers, not the %v layer", m.Layers, m.Layer)
	case m.Tied && m.Depth() < 2:
		return fmt.Errorf("flow: Tied with Layers = %d: tying needs L ≥ 2 layers", m.Layers)
	}
	return nil
}

// initStack sets up a stack's flow: its least loss is not known, and
// every label carries the noise, so that no predictor's loss is below
// σ², the floor of a run until converged, which ends when its loss has
// settled (settleDetector).
func (s *System) initStack() error {
	var err error
	if s.stack, err = newStack(s); err != nil {
		return err
	}
	s.law.minLoss, s.law.bound = math.NaN(), s.stack.noise
	s.ExpressivityLimited = s.Model.Kind == Separate && s.Model.H*s.Model.R < s.d
	return nil
}

// newStack compiles the stack's loss for the system's model and law.
func newStack(s *System) (*stack, error) {
	m, d := s.Model, s.d
	sl, err := s.Data.StackLoss(m.Depth(), m.Tied)
	if err != nil {
		return nil, fmt.Errorf("flow: %w", err)
	}
	st := &stack{model: m, d: d, sets: m.HeadSets(), setLen: m.headsLen(d), sqrtLam: make([]float64, d)}
	for i, l := range s.lam {
		st.sqrtLam[i] = math.Sqrt(l)
	}
	if st.prog, err = compileStackLoss(sl); err != nil {
		return nil, err
	}
	st.eval = st.prog.NewEval(d)
	tm, err := s.Data.TaskMoments(law.Training, true)
	if err != nil {
		return nil, err
	}
	st.task, st.noise = st.whiten(tm.Second), tm.Noise
	st.eval.Set(0, st.task)
	if st.tests, err = st.newTests(s.Data); err != nil {
		return nil, err
	}
	dd := d * d
	st.m, st.at, st.grad = matrices(st.sets, dd), matrices(st.sets, dd), matrices(st.sets+1, dd)
	st.grad[0] = nil // M̃ does not vary
	st.g, st.gt = matrices(st.sets, dd), matrices(st.sets, dd)
	st.vq = matrices(st.sets, 0)
	if m.Kind == Separate {
		st.vq = matrices(st.sets, m.H*m.R*d)
	}
	return st, nil
}

func matrices(n, size int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, size)
	}
	return out
}

// compileStackLoss turns the stack's loss into a traces program: base 0
// is M̃ (constant), base 1 + ℓ the whitened map of set ℓ; group 0 holds
// the signal terms, group 1 the noise's, weighted by σ². The words and
// their products depend on the depth alone, and are split once per
// process (stackWords).
func compileStackLoss(sl *law.StackLoss) (*traces.Program, error) {
	words, err := stackWords(sl)
	if err != nil {
		return nil, err
	}
	var terms []traces.Term
	for g, set := range [][]law.StackTerm{sl.Signal, sl.Noise} {
		for _, t := range set {
			terms = append(terms, traces.Term{Coef: t.Coef, Words: t.Words, Group: g})
		}
	}
	p, err := words.WithTerms(terms)
	if err != nil {
		return nil, fmt.Errorf("flow: the stack's loss: %w", err)
	}
	return p, nil
}

var stackPrograms sync.Map // [2]int{layers, tied} → *traces.Program without terms

// stackWords returns the program of the stack's words, compiling it on
// first use.
func stackWords(sl *law.StackLoss) (*traces.Program, error) {
	key := [2]int{sl.Layers, 0}
	if sl.Tied {
		key[1] = 1
	}
	if p, ok := stackPrograms.Load(key); ok {
		return p.(*traces.Program), nil
	}
	words := make([][]traces.Letter, len(sl.Words))
	for i, w := range sl.Words {
		words[i] = make([]traces.Letter, len(w))
		for j, c := range w {
			if c == law.TaskLetter {
				continue // base 0
			}
			layer, t := c.Layer()
			words[i][j] = traces.Letter{Base: 1 + layer, T: t}
		}
	}
	sets := sl.Layers
	if sl.Tied {
		sets = 1
	}
	varies := make([]bool, 1+sets)
	for i := 1; i <= sets; i++ {
		varies[i] = true
	}
	p, err := traces.Compile(1+sets, varies, words, nil)
	if err != nil {
		return nil, fmt.Errorf("flow: the stack's words: %w", err)
	}
	q, _ := stackPrograms.LoadOrStore(key, p)
	return q.(*traces.Program), nil
}

// whiten returns Λ^½ x Λ^½ of a D×D matrix in eigen coordinates.
func (st *stack) whiten(x []float64) []float64 {
	d, out := st.d, make([]float64, len(x))
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out[i*d+j] = st.sqrtLam[i] * x[i*d+j] * st.sqrtLam[j]
		}
	}
	return out
}

// whitenT sets dst to Λ^½ mᵀ Λ^½ of a D×D map m in eigen coordinates:
// the whitened preconditioner Ã = Λ^½ Mᵀ Λ^½ of a map, or its change.
func (st *stack) whitenT(dst, m []float64) {
	d := st.d
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			dst[i*d+j] = st.sqrtLam[i] * m[j*d+i] * st.sqrtLam[j]
		}
	}
}

// set returns the heads of set l in y.
func (st *stack) set(y []float64, l int) []float64 { return y[l*st.setLen : (l+1)*st.setLen] }

// setMaps sets in ev the whitened maps of y's head sets,
// Ã_ℓ = Λ^½M_ℓᵀΛ^½ (and leaves M_ℓ and the rows v_i q in st).
func (st *stack) setMaps(ev *traces.Eval, y []float64) {
	for l := 0; l < st.sets; l++ {
		effectiveMapTo(st.m[l], st.vq[l], st.set(y, l), st.model, st.d)
		st.whitenT(st.at[l], st.m[l])
		ev.Set(1+l, st.at[l])
	}
}

// evaluate sets in ev the whitened maps of y (setMaps) and the task
// moment signal (nil: the one set), and returns the terms' sum with the
// weights (of the signal and the noise terms).
func (st *stack) evaluate(ev *traces.Eval, y []float64, signal []float64, weights []float64) float64 {
	st.setMaps(ev, y)
	if signal != nil {
		ev.Set(0, signal)
	}
	return ev.Value(weights)
}

// loss returns the population loss at y (eigen coordinates).
func (st *stack) loss(y []float64) float64 {
	return st.evaluate(st.eval, y, nil, []float64{1, st.noise}) + st.noise
}

// residuals sets, after evaluate, each set's residual G_ℓ = c·(−½∂L/∂M_ℓ)
// and its transpose from ∂L/∂Ã_ℓ: ∂L/∂M_ij = √λ_j (∂L/∂Ã)_ji √λ_i.
func (st *stack) residuals(grad [][]float64, g, gt [][]float64, c float64) {
	d := st.d
	for l := 0; l < st.sets; l++ {
		ga := grad[1+l]
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				v := -0.5 * c * st.sqrtLam[i] * ga[j*d+i] * st.sqrtLam[j]
				g[l][i*d+j], gt[l][j*d+i] = v, v
			}
		}
	}
}

// deriv writes the flow τ dθ/dt = −½ ∂L/∂θ at y (eigen coordinates).
func (st *stack) deriv(dydt, y []float64) {
	st.evaluate(st.eval, y, nil, []float64{1, st.noise})
	st.eval.Gradient(st.grad)
	tau := st.model.Tau
	if st.model.Kind == Merged {
		st.residuals(st.grad, st.g, st.gt, 1)
		for l := 0; l < st.sets; l++ {
			mergedChain(st.set(dydt, l), st.set(y, l), st.g[l], st.model.H, st.d, 1/tau)
		}
		return
	}
	st.residuals(st.grad, st.g, st.gt, 1/tau)
	for l := 0; l < st.sets; l++ {
		separateChain(st.set(dydt, l), st.set(y, l), st.vq[l], st.g[l], st.gt[l], st.model.H, st.model.R, st.d)
	}
}

// Maps writes the effective map M_ℓ = Σ_i v_i U_i (or Σ_{i,r} v_i k q ᵀ)
// of each set of heads of the state y into dst[ℓ] (row-major D×D), in the
// basis of y: the layers' preconditioners are their transposes,
// A_ℓ = M_ℓᵀ (docs/math.md, "Depth").
func (m Model) Maps(dst [][]float64, y []float64, d int) {
	size := m.headsLen(d)
	vq := make([]float64, m.H*max(1, m.R)*d)
	for l := 0; l < m.HeadSets(); l++ {
		effectiveMapTo(dst[l], vq, y[l*size:(l+1)*size], m, d)
	}
}

// MapsGradient writes into dst (the heads' part of the state) the
// gradient with respect to the heads y of a function of the layers' maps
// whose gradient with respect to each M_ℓ is gm[ℓ], by the chain rule of
// the one layer: ∂/∂U_i = v_i G, ∂/∂v_i = ⟨U_i, G⟩ (merged) and
// ∂/∂k = v_i G q, ∂/∂q = v_i Gᵀ k, ∂/∂v_i = Σ_r kᵀ G q (separate), with
// G = gm[ℓ]. In any basis.
func (m Model) MapsGradient(dst, y []float64, gm [][]float64, d int) {
	size := m.headsLen(d)
	var vq, gt, mm []float64
	if m.Kind == Separate {
		vq, gt, mm = make([]float64, m.H*m.R*d), make([]float64, d*d), make([]float64, d*d)
	}
	for l := 0; l < m.HeadSets(); l++ {
		yl, dl := y[l*size:(l+1)*size], dst[l*size:(l+1)*size]
		if m.Kind == Merged {
			mergedChain(dl, yl, gm[l], m.H, d, 1)
			continue
		}
		effectiveMapTo(mm, vq, yl, m, d)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				gt[j*d+i] = gm[l][i*d+j]
			}
		}
		separateChain(dl, yl, vq, gm[l], gt, m.H, m.R, d)
	}
}
