package flow

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/linattn/linattn/law"
)

// TestTensorProductsMatchLoops: the tensor, its tangent and its chain rule
// by matrix products (tensorProducts) against the loops over the tensor's
// entries that define them (tensor_loops_test.go: T_abc = Σ_i ṽ_ia W̃_ibc
// merged, Σ_{i,r} ṽ_ia k̃_{i,r,b} q_{i,r,c} separate, on the rows and keys
// of tensorRange), to 1e-13 relative, for every layer, merged and separate
// R = 1, 2, at random weights, directions and gradients; the entries
// outside the layer's range are zero.
func TestTensorProductsMatchLoops(t *testing.T) {
	for _, layer := range []Layer{FullLayer, LabelKeyLayer, ReducedLayer} {
		for _, m := range []Model{{Kind: Merged, H: 3}, {Kind: Separate, H: 3, R: 1}, {Kind: Separate, H: 2, R: 2}} {
			for _, d := range []int{3, 6} {
				m.Tau, m.Layer = 1, layer
				t.Run(fmt.Sprintf("%v/%v/R=%d/D=%d", layer, m.Kind, m.R, d), func(t *testing.T) {
					checkTensorProducts(t, NewCoefficients(d, m), rand.New(rand.NewPCG(uint64(d), 5)))
				})
			}
		}
	}
}

func checkTensorProducts(t *testing.T, c *Coefficients, rng *rand.Rand) {
	random := func(b *Blocks) *Blocks {
		for i := range b.buf {
			b.buf[i] = rng.NormFloat64()
		}
		return b
	}
	w, dw := random(c.NewBlocks()), random(c.NewBlocks())
	nt := len(c.t)
	dt := make([]float64, nt)
	for i := range dt {
		dt[i] = rng.NormFloat64()
	}
	garbage := func() []float64 { // what set and setTangent overwrite
		x := make([]float64, nt)
		for i := range x {
			x[i] = 7
		}
		return x
	}
	tensor := func(products bool) []float64 {
		got := garbage()
		if products {
			c.prod.set(got, w)
			return got
		}
		clear(got)
		c.loopTensor(got, w, w, w)
		return got
	}
	tangent := func(products bool) []float64 {
		got := garbage()
		if products {
			c.prod.setTangent(got, w, dw)
			return got
		}
		clear(got)
		c.loopTensor(got, dw, w, w)
		c.loopTensor(got, w, dw, w)
		if c.model.Kind == Separate {
			c.loopTensor(got, w, w, dw)
		}
		return got
	}
	chain := func(products bool) []float64 {
		pullback := c.loopPullback
		if products {
			pullback = c.prod.pullback
		}
		g := c.NewBlocks()
		pullback(g, dt, w, w, w, [3]bool{true, true, true})
		pullback(g, dt, dw, w, w, [3]bool{false, true, true})
		pullback(g, dt, w, dw, w, [3]bool{true, false, true})
		if c.model.Kind == Separate {
			pullback(g, dt, w, w, dw, [3]bool{true, true, false})
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
}

// TestFullShared checks that the full layer's flow and its Jacobian–vector
// products give the same bits with their matrix products and the
// moments' operator shared among 2 and 3 processors as on one
// (System.setWorkers): the merged full layer at D = 51, where the
// operator shares, and the separate one at D = 12, where it does not (the
// operator is the same for both); the products, which share from D ≈ 45
// at H = D, made to share at H = 2 and 5.
func TestFullShared(t *testing.T) {
	for _, c := range []struct {
		m Model
		d int
	}{{Model{Kind: Merged, H: 2, Tau: 1, Layer: FullLayer}, 51}, {Model{Kind: Separate, H: 5, R: 2, Tau: 1, Layer: FullLayer}, 12}} {
		kind := c.m.Kind
		s, err := NewSystem(matfreeData(t, c.d), c.m)
		if err != nil {
			t.Fatal(err)
		}
		y, dy := randomState(s, 0.1, 1), randomState(s, 1, 2)
		if _, ok := s.law.full.train.(*law.Operator); !ok {
			t.Fatalf("%v: the full layer at D = %d does not use the operator", kind, c.d)
		}
		l := s.NewLinearization()
		eval := func(procs int) (f, jv []float64) {
			s.setWorkers(procs)
			s.law.full.coef.prod.workers = procs
			l.full.coef.prod.workers = procs
			f, jv = make([]float64, len(y)), make([]float64, len(y))
			s.DerivEigen(f, y)
			l.At(y)
			l.Apply(jv, dy)
			return f, jv
		}
		f1, j1 := eval(1)
		for _, w := range []int{2, 3} {
			f, jv := eval(w)
			for i := range f {
				if f[i] != f1[i] || jv[i] != j1[i] {
					t.Fatalf("%v, %d goroutines: entry %d of the flow %v and JVP %v, want %v and %v (one)", kind, w, i, f[i], jv[i], f1[i], j1[i])
				}
			}
		}
	}
}
