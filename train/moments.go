package train

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/linattn/linattn/flow"
)

var impl gonum.Implementation

// moments are the empirical moments of the features Z = u ⊗ x_q
// (featureMap) and the labels over the predictions of a set of sequences,
// each prediction weighted as in the loss (1/P, times 1/N_max for the
// next-token loss):
//
//	zz = Σ w Z Zᵀ (F×F),  yz = Σ w y Z,  yy = Σ w y².
//
// With c = vec(C) the loss of linear attention is the quadratic
// (docs/training.md, "The exact fast path")
//
//	L̂(c) = yy − 2 yzᵀc + cᵀ zz c,   ∂L̂/∂c = 2(zz c − yz),
//
// and its cost no longer depends on the number of sequences. For the
// Reduced model (Z = β ⊗ x_q, c = vec(M) row-major) these are the issue's
// Σ̂_zz and Σ̂_yz; their expectations are A ⊗ Λ and vec(Λ²)
// (populationMoments; docs/math.md "Data statistics" with the other order
// of the Kronecker factors, as vec here is row-major).
type moments struct {
	f      int
	zz, yz []float64
	yy     float64
	zc     []float64 // scratch: zz c
}

func newMoments(f int) *moments {
	return &moments{f: f, zz: make([]float64, f*f), yz: make([]float64, f), zc: make([]float64, f)}
}

// add accumulates o into mo.
func (mo *moments) add(o *moments) {
	for i, x := range o.zz {
		mo.zz[i] += x
	}
	for i, x := range o.yz {
		mo.yz[i] += x
	}
	mo.yy += o.yy
}

func (mo *moments) reset() {
	clear(mo.zz)
	clear(mo.yz)
	mo.yy = 0
}

// addPrediction adds the prediction with features u ⊗ xq, label y and
// weight w, to the upper triangle of zz. z is scratch of length F.
func (mo *moments) addPrediction(u, xq []float64, y, w float64, z []float64) {
	d := len(xq)
	for p, up := range u {
		for c, x := range xq {
			z[p*d+c] = up * x
		}
	}
	f := mo.f
	for i, zi := range z {
		wzi := w * zi
		mo.yz[i] += wzi * y
		row := mo.zz[i*f : (i+1)*f]
		for j := i; j < f; j++ {
			row[j] += wzi * z[j]
		}
	}
	mo.yy += w * y * y
}

// symmetrize copies the upper triangle of zz to the lower one.
func (mo *moments) symmetrize() {
	f := mo.f
	for i := 0; i < f; i++ {
		for j := i + 1; j < f; j++ {
			mo.zz[j*f+i] = mo.zz[i*f+j]
		}
	}
}

// sampleMoments draws the n sequences of set and accumulates their
// moments without storing them.
func sampleMoments(smp *sampler, fm *featureMap, set seqSet, n int) *moments {
	t := smp.task
	first, last, pw := t.prefixes()
	w := pw / float64(n)
	nw := workers()
	smps := clones(smp, nw)
	part := make([]*moments, nw)
	seqs := make([]*sequence, nw)
	acc, u, z := make([][]float64, nw), make([][]float64, nw), make([][]float64, nw)
	for k := range part {
		part[k], seqs[k] = newMoments(fm.size()), newSequence(t)
		acc[k], u[k], z[k] = make([]float64, fm.du), make([]float64, fm.du), make([]float64, fm.size())
	}
	total := newMoments(fm.size())
	compute := func(k, b int) {
		part[k].reset()
		lo, hi := blockRange(b, n)
		for mu := lo; mu < hi; mu++ {
			smps[k].draw(seqs[k], set, mu)
			fm.prefixes(seqs[k], first, last, acc[k], u[k], func(u, xq []float64, y float64) {
				part[k].addPrediction(u, xq, y, w, z[k])
			})
		}
	}
	forBlocksOrdered(numBlocks(n), nw, compute, func(k, _ int) { total.add(part[k]) })
	total.symmetrize()
	return total
}

// populationMoments returns the exact moments of the Reduced features
// z = β ⊗ x_q over the population: zz = E[ββᵀ] ⊗ E[x_q x_qᵀ] = A ⊗ Λ,
// yz = vec(E[β y_q x_qᵀ]) = vec(Λ²) (row-major), yy = E[y_q²] = tr(Λ)
// (docs/math.md, "Data statistics"). Training on them is the population
// flow of package flow.
func populationMoments(data *flow.Data) *moments {
	d := data.Dim()
	lam, a := data.Covariance(), data.A()
	mo := newMoments(d * d)
	for b := 0; b < d; b++ {
		for c := 0; c < d; c++ {
			var l2 float64
			for k := 0; k < d; k++ {
				l2 += lam.At(b, k) * lam.At(k, c)
			}
			mo.yz[b*d+c] = l2
			for b2 := 0; b2 < d; b2++ {
				for c2 := 0; c2 < d; c2++ {
					mo.zz[(b*d+c)*d*d+b2*d+c2] = a.At(b, b2) * lam.At(c, c2)
				}
			}
		}
	}
	mo.yy = data.Trace()
	return mo
}

// evalC returns L̂(c) and, with dc not nil, writes ∂L̂/∂c into dc.
func (mo *moments) evalC(c, dc []float64, batch []int32) float64 {
	if batch != nil {
		panic("train: the moments cannot evaluate a minibatch")
	}
	f := mo.f
	impl.Dgemv(blas.NoTrans, f, f, 1, mo.zz, f, c, 1, 0, mo.zc, 1)
	loss := mo.yy
	for i, ci := range c {
		loss += ci * (mo.zc[i] - 2*mo.yz[i])
	}
	if dc != nil {
		for i := range dc {
			dc[i] = 2 * (mo.zc[i] - mo.yz[i])
		}
	}
	return loss
}

func (mo *moments) sequences() int { return 0 }
