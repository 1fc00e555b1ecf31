package train

// rawSet stores n sequences token by token: what the layer evaluated column
// by column needs.
type rawSet struct {
	n, tokens, d int
	tok, yt      []float64
}

// at points q at sequence mu.
func (r *rawSet) at(q *sequence, mu int) {
	l, d1 := r.tokens, r.d+1
	q.tok = r.tok[mu*l*d1 : (mu+1)*l*d1]
	q.yt = r.yt[mu*l : (mu+1)*l]
}

func sampleRaw(smp *sampler, set seqSet, n int) *rawSet {
	r := &rawSet{n: n, tokens: smp.shape.tokens, d: smp.d}
	r.tok = make([]float64, n*r.tokens*(r.d+1))
	r.yt = make([]float64, n*r.tokens)
	nw := workers()
	smps := clones(smp, nw)
	forBlocks(numBlocks(n), nw, func(w, b int) {
		var q sequence
		lo, hi := blockRange(b, n)
		for mu := lo; mu < hi; mu++ {
			r.at(&q, mu)
			smps[w].draw(&q, set, mu)
		}
	})
	return r
}

func clones(smp *sampler, n int) []*sampler {
	out := make([]*sampler, n)
	for i := range out {
		out[i] = smp.clone()
	}
	return out
}

// gramSet stores, for sequences with a fixed context length, the features
// of their one prediction (featureMap): u, the query x_q and its label.
// For linear attention it holds all the layer needs, in du + D + 1 numbers
// per sequence instead of (N+1)(D+1).
type gramSet struct {
	n, du, d  int
	u, xq, yq []float64
}

func sampleGram(smp *sampler, fm *featureMap, set seqSet, n int) *gramSet {
	sh := smp.shape
	g := &gramSet{n: n, du: fm.du, d: fm.d,
		u: make([]float64, n*fm.du), xq: make([]float64, n*fm.d), yq: make([]float64, n)}
	nw := workers()
	smps := clones(smp, nw)
	seqs := make([]*sequence, nw)
	acc := make([][]float64, nw)
	for w := range seqs {
		seqs[w], acc[w] = newSequence(sh, fm.d), make([]float64, fm.du)
	}
	forBlocks(numBlocks(n), nw, func(w, b int) {
		lo, hi := blockRange(b, n)
		for mu := lo; mu < hi; mu++ {
			smps[w].draw(seqs[w], set, mu)
			fm.prefixes(seqs[w], sh.first, sh.last, acc[w], g.u[mu*fm.du:(mu+1)*fm.du], func(_, xq []float64, y float64) {
				copy(g.xq[mu*fm.d:(mu+1)*fm.d], xq)
				g.yq[mu] = y
			})
		}
	})
	return g
}
