package flow

import (
	"github.com/linattn/linattn/law"
)

// featureMoments are the full layer's population loss as a quadratic form
// in the coefficients c of its features (docs/math.md, "The full layer"),
// L(c) = YY − 2cᵀYZ + cᵀZZc: the dense moments (law.Moments) at small D,
// the matrix-free law.Operator above fullDenseMaxDim (docs/math.md, "The
// full layer without its moment matrices").
type featureMoments interface {
	// MulVec sets dst = ZZ·c.
	MulVec(dst, c []float64)
	// Residual writes YZ − ZZ c into r (unless nil) and returns L(c).
	Residual(r, c []float64) float64
	// Loss returns L(c).
	Loss(c []float64) float64
	// Minimum returns min_c L(c) and a minimizer.
	Minimum() (float64, []float64, error)
}

var (
	_ featureMoments = (*law.Moments)(nil)
	_ featureMoments = (*law.Operator)(nil)
)

// fullDenseMaxDim is the largest D at which the full layer forms its dense
// moments: there a product ZZ·c through ZZ's nonzeros costs about what the
// Operator's contraction does (law.BenchmarkMulVec, CPU time: 3.3 against
// 3.2 µs at D = 8, 23 against 24 µs at D = 16), while forming ZZ costs O(F²) time
// and memory; at D ≤ 8 the dense path keeps every output as it was.
const fullDenseMaxDim = 8

// labelKeyDenseMaxDim is the largest D at which the label-key layer forms
// its dense moments: with F = D(D+1) features they take 35 MB at D = 32,
// and a whole run of Lu et al.'s setting (BenchmarkLabelKeyRun) took
// 0.33 s and 2.2 s at D = 16 and 32 against the Operator's 1.06 s and
// 6.5 s, whose contraction runs over every entry of S.
const labelKeyDenseMaxDim = 32

// denseMoments reports whether the layer forms its dense moments at
// dimension d.
func denseMoments(l Layer, d int) bool {
	if l == FullLayer {
		return d <= fullDenseMaxDim
	}
	return d <= labelKeyDenseMaxDim
}

// featureMoments returns the population moments of the layer's features
// over set, in eigen coordinates: dense up to fullDenseMaxDim (full layer)
// or labelKeyDenseMaxDim (label-key layer), matrix-free above.
func (s *System) featureMoments(set law.Sequences) (featureMoments, error) {
	if denseMoments(s.Model.Layer, s.d) {
		return s.eigenMoments(set)
	}
	return s.Data.Operator(s.Model.Layer.Pairs(s.d), set)
}

// FullLayerBytes returns the memory the full layer's moments take at
// dimension d (MomentBytes).
func FullLayerBytes(d int) float64 { return MomentBytes(FullLayer, d) }

// MomentBytes returns the memory the moments of the layer's features take
// at dimension d, for the training population and the three test sets: up
// to fullDenseMaxDim (labelKeyDenseMaxDim) the F×F matrix E[zzᵀ] of each (F = d(d+1)(d+2)/2 for
// the full layer, d(d+1) for the label-key layer; 4·8F² bytes: 4.1 MB for
// the full layer at d = 8); above, the Operator's O(F) words, a dozen
// vectors of (d+1)²d entries each (36 MB at d = 64, 0.28 GB at d = 128),
// and the conjugate gradients of the least loss.
func MomentBytes(l Layer, d int) float64 {
	f := float64(len(l.Pairs(d)) * d)
	if denseMoments(l, d) {
		return 4 * 8 * f * f
	}
	t := float64((d + 1) * (d + 1) * d)
	return 4*8*(2*t+3*f) + 8*5*f
}

// MaxFullBytes bounds the memory of the full layer's moments
// (FullLayerBytes): 2 GiB, which D ≤ 252 meets.
const MaxFullBytes = 2 << 30
