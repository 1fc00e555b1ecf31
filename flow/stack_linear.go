package flow

import "github.com/linattn/linattn/flow/internal/traces"

// stackLinearization is the Jacobian of the stack's flow at a point,
// applied to directions: the change δM_ℓ of each layer's map (mapChange),
// the change of the gradient ∂L/∂Ã along δÃ (traces.Eval.GradientDir, a
// Hessian–vector product), hence of each residual δG_ℓ, and the product
// rule through the heads (Linearization.chain). It has its own
// evaluation, so that the flow may be evaluated elsewhere between At and
// Apply.
type stackLinearization struct {
	st       *stack
	l        *Linearization
	eval     *traces.Eval
	y        []float64
	grad, hv [][]float64
	g, gt    [][]float64
	dm, dir  [][]float64
	dg, dgt  [][]float64
}

func (st *stack) newLinearization(l *Linearization) *stackLinearization {
	dd := st.d * st.d
	sl := &stackLinearization{st: st, l: l, eval: st.prog.NewEval(st.d), y: make([]float64, st.sets*st.setLen),
		grad: matrices(st.sets+1, dd), hv: matrices(st.sets+1, dd), g: matrices(st.sets, dd), gt: matrices(st.sets, dd),
		dm: matrices(st.sets, dd), dir: matrices(st.sets+1, dd), dg: matrices(st.sets, dd), dgt: matrices(st.sets, dd)}
	sl.grad[0], sl.hv[0], sl.dir[0] = nil, nil, nil
	sl.eval.Set(0, st.task)
	return sl
}

// at sets the point y (eigen coordinates): the gradient and the residuals.
func (sl *stackLinearization) at(y []float64) {
	st := sl.st
	copy(sl.y, y)
	st.evaluate(sl.eval, y, nil, []float64{1, st.noise})
	sl.eval.Gradient(sl.grad)
	st.residuals(sl.grad, sl.g, sl.gt, 1)
}

// apply writes J·dy into dst.
func (sl *stackLinearization) apply(dst, dy []float64) {
	st, d := sl.st, sl.st.d
	for l := 0; l < st.sets; l++ {
		mapChange(sl.dm[l], st.set(sl.y, l), st.set(dy, l), st.model, d)
		st.whitenT(sl.dir[1+l], sl.dm[l])
	}
	sl.eval.GradientDir(sl.hv, sl.dir)
	st.residuals(sl.hv, sl.dg, sl.dgt, 1)
	for l := 0; l < st.sets; l++ {
		sl.l.chain(st.set(dst, l), st.set(sl.y, l), st.set(dy, l), sl.g[l], sl.dg[l], st.model, st.model.Tau)
	}
}
