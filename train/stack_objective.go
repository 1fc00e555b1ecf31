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
	loss   []float64
}

func newStackObjective(set *rawSet, m *Model, shape sequenceShape) *stackObjective {
	d, sets, layers := m.D, m.HeadSets(), m.Depth()
	nb, nw := numBlocks(set.n), workers()
	o := &stackObjective{set: set, m: m, shape: shape, nw: nw, tokens: make([]*stackTokens, nw),
		maps: squares(sets, d), as: make([][]float64, layers), part: make([][][]float64, nb), loss: make([]float64, nb)}
	for w := range o.tokens {
		o.tokens[w] = newStackTokens(d, layers, shape.tokens)
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
	sel := selection{n: o.set.n, batch: batch}
	n := sel.len()
	wt := o.shape.weight / float64(n)
	nb := numBlocks(n)
	forBlocks(nb, o.nw, func(k, b int) {
		lo, hi := blockRange(b, n)
		var gm [][]float64 // each layer's accumulator: its set's
		if grad != nil {
			for _, x := range o.part[b] {
				clear(x)
			}
			gm = make([][]float64, len(o.as))
			for l := range gm {
				gm[l] = o.part[b][min(l, len(o.part[b])-1)]
			}
		}
		var loss float64
		var q sequence
		for i := lo; i < hi; i++ {
			o.set.at(&q, sel.at(i))
			for np := o.shape.first; np <= o.shape.last; np++ {
				loss += o.tokens[k].prefix(o.as, gm, &q, np, wt)
			}
		}
		o.loss[b] = loss
	})
	var total float64
	for b := 0; b < nb; b++ {
		total += o.loss[b]
	}
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
