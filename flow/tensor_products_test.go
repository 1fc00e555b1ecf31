package flow

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestTensorProductsMatchLoops: the full layer's tensor, its tangent and
// its chain rule by matrix products (tensorProducts) against the loops
// over the tensor's entries that define them (addTensor, pullback with the
// products switched off: T_abc = Σ_i ṽ_ia W̃_ibc merged, Σ_{i,r} ṽ_ia
// k̃_{i,r,b} q_{i,r,c} separate), to 1e-13 relative, merged and separate
// R = 1, 2, at random weights, directions and gradients.
func TestTensorProductsMatchLoops(t *testing.T) {
	for _, m := range []Model{{Kind: Merged, H: 3}, {Kind: Separate, H: 3, R: 1}, {Kind: Separate, H: 2, R: 2}} {
		for _, d := range []int{3, 6} {
			m.Tau, m.Layer = 1, FullLayer
			t.Run(fmt.Sprintf("%v/R=%d/D=%d", m.Kind, m.R, d), func(t *testing.T) {
				c := NewCoefficients(d, m)
				rng := rand.New(rand.NewPCG(uint64(d), 5))
				random := func() *Blocks {
					b := c.NewBlocks()
					for i := range b.buf {
						b.buf[i] = rng.NormFloat64()
					}
					return b
				}
				w, dw := random(), random()
				nt := len(c.t)
				dt := make([]float64, nt)
				for i := range dt {
					dt[i] = rng.NormFloat64()
				}
				prod := c.prod
				tensor := func(products bool) []float64 {
					c.prod = nil
					if products {
						c.prod = prod
					}
					got := make([]float64, nt)
					if products {
						prod.set(got, w)
						return got
					}
					c.addTensor(got, w, w, w)
					return got
				}
				tangent := func(products bool) []float64 {
					got := make([]float64, nt)
					if products {
						prod.setTangent(got, w, dw)
						return got
					}
					c.addTensor(got, dw, w, w)
					c.addTensor(got, w, dw, w)
					if m.Kind == Separate {
						c.addTensor(got, w, w, dw)
					}
					return got
				}
				chain := func(products bool) []float64 {
					c.prod = nil
					if products {
						c.prod = prod
					}
					g := c.NewBlocks()
					c.pullback(g, dt, w, w, w, [3]bool{true, true, true})
					c.pullback(g, dt, dw, w, w, [3]bool{false, true, true})
					c.pullback(g, dt, w, dw, w, [3]bool{true, false, true})
					if m.Kind == Separate {
						c.pullback(g, dt, w, w, dw, [3]bool{true, true, false})
					}
					return g.buf
				}
				for _, check := range []struct {
					name string
					f    func(bool) []float64
				}{{"tensor", tensor}, {"tangent", tangent}, {"chain rule", chain}} {
					if e := relErr(check.f(true), check.f(false)); e > 1e-13 {
						t.Errorf("%s: relative difference %.3g from the loops", check.name, e)
					}
				}
				c.prod = prod
			})
		}
	}
}
