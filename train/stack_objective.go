package train

// stackObjective is the loss of a stack of L layers on stored sequences,
// each prediction evaluated token by token (stackTokens): the direct path
// of a stack, whose prediction is not linear in fixed features.
type stackObjective struct {
	set    *rawSet
	m      *Model
	shape  sequenceShape
	nw     int
	tokens []*stackTokens // one per goroutine
	maps   [][]float64    // M of each set of heads
	as     [][]float64    // A_ℓ = M_ℓᵀ of each layer (tied: the one set's)
	part   [][][]float64  // per block: ∂/∂M of each set of heads
	grads  [][][]float64  // per goroutine: its block's ∂/∂M of each layer (tied: the one set's)
	loss   []float64
}

func newStackObjective(set *rawSet, m *Model, shape sequenceShape) *stackObjective {
	d, sets, layers := m.D, m.HeadSets(), m.Depth()
	nb, nw := numBlocks(set.n), workers()
	o := &stackObjective{set: set, m: m, shape: shape, nw: nw, tokens: make([]*stackTokens, nw),
		maps: squares(sets, d), as: make([][]float64, layers), part: make([][][]float64, nb), grads: make([][][]float64, nw),
		loss: make([]float64, nb)}
	for w := range o.tokens {
		o.tokens[w], o.grads[w] = newStackTokens(d, layers, shape.tokens), make([][]float64, layers)
	}
	for l := range o.as {
		if l < sets {
			o.as[l] = make([]float64, d*d)
		} else {
			o.as[l] = o.as[0] // tied
		}
	}
	for b := range o.part {
		o.part[b] = squares(sets, d)
	}
	return o
}

func squares(n, d int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, d*d)
	}
	return out
}

func (o *stackObjective) eval(theta, grad []float64, batch []int32) float64 {
	d := o.m.D
	o.m.Maps(o.maps, theta, d)
	for l, m := range o.maps {
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				o.as[l][i*d+j] = m[j*d+i]
			}
		}
	}
	total, nb := sumPredictions(o.set, batch, o.shape, o.nw, o.loss, func(k, b int) {
		if grad == nil {
			return
		}
		for _, x := range o.part[b] {
			clear(x)
		}
		for l := range o.grads[k] { // each layer's accumulator: its set's
			o.grads[k][l] = o.part[b][min(l, len(o.part[b])-1)]
		}
	}, func(k, _ int, q *sequence, np int, wt float64) float64 {
		var gm [][]float64
		if grad != nil {
			gm = o.grads[k]
		}
		return o.tokens[k].prefix(o.as, gm, q, np, wt)
	})
	if grad != nil {
		sum := o.part[0]
		for b := 1; b < nb; b++ {
			for s, x := range o.part[b] {
				axpy(sum[s], 1, x)
			}
		}
		clear(grad)
		o.m.MapsGradient(grad, theta, sum, d)
	}
	return total
}
