package train

import "github.com/linattn/linattn/law"

// The empirical moments of the features z = u ⊗ x_q (featureMap) and the
// labels over the predictions of a set of sequences, each prediction
// weighted as in the loss (1/P, times 1/N_max for the next-token loss):
//
//	ZZ = Σ w z zᵀ (F×F),  YZ = Σ w y z,  YY = Σ w y²,
//
// in a law.Moments, whose quadratic form is then the training loss of
// linear attention (docs/training.md, "The exact fast path"): its cost no
// longer depends on the number of sequences. Their expectations are the
// population moments of law.Data.Moments.

// addPrediction adds the prediction with features u ⊗ xq, label y and
// weight w to the upper triangle of mo.ZZ. z is scratch of length F.
func addPrediction(mo *law.Moments, u, xq []float64, y, w float64, z []float64) {
	d := len(xq)
	for p, up := range u {
		for c, x := range xq {
			z[p*d+c] = up * x
		}
	}
	f := mo.F
	for i, zi := range z {
		wzi := w * zi
		mo.YZ[i] += wzi * y
		row := mo.ZZ[i*f : (i+1)*f]
		for j := i; j < f; j++ {
			row[j] += wzi * z[j]
		}
	}
	mo.YY += w * y * y
}

// symmetrize copies the upper triangle of ZZ to the lower one.
func symmetrize(mo *law.Moments) {
	f := mo.F
	for i := 0; i < f; i++ {
		for j := i + 1; j < f; j++ {
			mo.ZZ[j*f+i] = mo.ZZ[i*f+j]
		}
	}
}

// sampleMoments draws the n sequences of set and accumulates their
// moments without storing them.
func sampleMoments(smp *sampler, fm *featureMap, set seqSet, n int) *law.Moments {
	sh := smp.shape
	w := sh.weight / float64(n)
	nw := workers()
	smps := clones(smp, nw)
	part := make([]*law.Moments, nw)
	seqs := make([]*sequence, nw)
	acc, u, z := make([][]float64, nw), make([][]float64, nw), make([][]float64, nw)
	for k := range part {
		part[k], seqs[k] = law.NewMoments(fm.size()), newSequence(sh, fm.d)
		acc[k], u[k], z[k] = make([]float64, fm.du), make([]float64, fm.du), make([]float64, fm.size())
	}
	total := law.NewMoments(fm.size())
	compute := func(k, b int) {
		part[k].Reset()
		lo, hi := blockRange(b, n)
		for mu := lo; mu < hi; mu++ {
			smps[k].draw(seqs[k], set, mu)
			fm.prefixes(seqs[k], sh.first, sh.last, acc[k], u[k], func(u, xq []float64, y float64) {
				addPrediction(part[k], u, xq, y, w, z[k])
			})
		}
	}
	forBlocksOrdered(numBlocks(n), nw, compute, func(k, _ int) { total.Add(part[k]) })
	symmetrize(total)
	return total
}

// momentsObjective is the loss through moments as a coeffObjective: full
// batch only.
type momentsObjective struct {
	mo *law.Moments
	r  []float64
}

func newMomentsObjective(mo *law.Moments) *momentsObjective {
	return &momentsObjective{mo: mo, r: make([]float64, mo.F)}
}

// evalC returns L(c) = YY − 2cᵀYZ + cᵀZZc and, with dc not nil,
// ∂L/∂c = −2(YZ − ZZ c).
func (o *momentsObjective) evalC(c, dc []float64, batch []int32) float64 {
	if batch != nil {
		panic("train: the moments cannot evaluate a minibatch")
	}
	loss := o.mo.Residual(o.r, c)
	for i := range dc {
		dc[i] = -2 * o.r[i]
	}
	return loss
}
