package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// smallCase is a small problem on which every evaluation is checked.
type smallCase struct {
	kind   flow.Kind
	att    Attention
	blocks flow.Layer
	ntp    bool
	icl    float64
}

func (c smallCase) String() string {
	ctx := "N=5"
	if c.ntp {
		ctx = "ntp=4"
	}
	return fmt.Sprintf("%v/%v/%v/%s/c=%g", c.kind, c.att, c.blocks, ctx, c.icl)
}

func allSmallCases() []smallCase {
	var out []smallCase
	for _, kind := range []flow.Kind{flow.Merged, flow.Separate} {
		for _, att := range []Attention{Linear, Softmax} {
			for _, blocks := range []flow.Layer{flow.FullLayer, flow.ReducedLayer} {
				for _, ntp := range []bool{false, true} {
					out = append(out, smallCase{kind, att, blocks, ntp, 0.5})
				}
			}
		}
	}
	return out
}

// withLaw returns data with the context lengths l and the task law: a
// fraction icl of in-context sequences, one fixed task drawn with seed
// (as linattn train draws it from the data seed).
func withLaw(t testing.TB, data *law.Data, l law.Lengths, icl float64, seed uint64) *law.Data {
	t.Helper()
	data, err := data.WithLengths(l)
	if err != nil {
		t.Fatal(err)
	}
	if data, err = data.WithTasks(law.Tasks{ICL: icl, Fixed: law.FixedTasks(data.Dim(), 1, seed)}); err != nil {
		t.Fatal(err)
	}
	return data
}

// smallConfig is D = 3 with a random rotation, H = 2 heads (R = 2 for the
// separate model), P = 7 sequences and 5 of each test set.
func smallConfig(t testing.TB, c smallCase, path Path) Config {
	t.Helper()
	lambda := []float64{0.5, 0.3, 0.2}
	lengths := law.Lengths{N: 5}
	if c.ntp {
		lengths = law.Lengths{NTPMax: 4}
	}
	data, err := law.NewData(lambda, law.RandomRotation(3, 2), law.Lengths{Nu: 1})
	if err != nil {
		t.Fatal(err)
	}
	data = withLaw(t, data, lengths, c.icl, 11)
	m := Model{Model: flow.Model{Kind: c.kind, H: 2, Layer: c.blocks, Tau: 1}, D: 3, Attention: c.att}
	if c.kind == flow.Separate {
		m.R = 2
	}
	return Config{Model: m, Data: data, P: 7, Test: 5, Seed: 11, Path: path}
}

func newTrainer(t testing.TB, cfg Config) *Trainer {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// randomWeights returns weights with N(0, scale²) entries: far from any
// fixed point, so that every block has a gradient.
func randomWeights(n int, scale float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = scale * rng.NormFloat64()
	}
	return out
}

// centralGradient returns the central differences of tr's loss at theta
// with step h (error O(h²)); theta is restored.
func centralGradient(tr *Trainer, theta []float64, h float64) []float64 {
	fd := make([]float64, len(theta))
	for i := range theta {
		x := theta[i]
		theta[i] = x + h
		lp := tr.Loss(theta)
		theta[i] = x - h
		lm := tr.Loss(theta)
		theta[i] = x
		fd[i] = (lp - lm) / (2 * h)
	}
	return fd
}

// relDiff returns max_i |a_i − b_i| / max_i |b_i|.
func relDiff(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num = math.Max(num, math.Abs(a[i]-b[i]))
		den = math.Max(den, math.Abs(b[i]))
	}
	return num / den
}

// TestGradientFiniteDifferences checks the hand-written gradient of every
// model (merged, separate rank 2; linear, softmax; full, reduced blocks;
// fixed context and next-token loss) on every path against central
// differences (L(θ+h e_i) − L(θ−h e_i))/2h, whose error is O(h²L”') +
// O(ε L/h): with h = 1e-5 both are ≲ 1e-9 relative here, so the bound
// 1e-7 (relative to the largest gradient entry) leaves a margin.
func TestGradientFiniteDifferences(t *testing.T) {
	for _, c := range allSmallCases() {
		paths := []Path{ColumnsPath, DirectPath}
		if c.att == Linear {
			paths = append(paths, MomentsPath)
		}
		for _, p := range paths {
			t.Run(c.String()+"/"+p.String(), func(t *testing.T) {
				tr := newTrainer(t, smallConfig(t, c, p))
				theta := randomWeights(tr.Len(), 0.7, 5)
				grad := make([]float64, tr.Len())
				tr.Gradient(grad, theta)
				fd := centralGradient(tr, theta, 1e-5)
				if d := relDiff(grad, fd); !(d < 1e-7) {
					t.Errorf("gradient vs central differences: relative difference %.3g, want < 1e-7\ngrad %v\nfd   %v", d, grad, fd)
				}
			})
		}
	}
}

// TestPathsAgree checks that linear attention gives the same loss,
// gradient, test losses and gradient-descent trajectory, to 1e-12
// relative, column by column (the literal layer), from the features of
// each prediction (Direct) and from the empirical moments (the fast path):
// three evaluations of one function that differ only in rounding.
func TestPathsAgree(t *testing.T) {
	for _, c := range allSmallCases() {
		if c.att != Linear {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			ref := newTrainer(t, smallConfig(t, c, ColumnsPath))
			theta := randomWeights(ref.Len(), 0.7, 6)
			gRef := make([]float64, ref.Len())
			lRef := ref.Gradient(gRef, theta)
			icl, iwl, idg := ref.TestLosses(theta)
			for _, p := range []Path{DirectPath, MomentsPath} {
				tr := newTrainer(t, smallConfig(t, c, p))
				g := make([]float64, tr.Len())
				l := tr.Gradient(g, theta)
				if d := math.Abs(l-lRef) / lRef; !(d < 1e-12) {
					t.Errorf("%v: loss %.17g, columns %.17g: relative difference %.3g", p, l, lRef, d)
				}
				if d := relDiff(g, gRef); !(d < 1e-12) {
					t.Errorf("%v: gradient differs from the columns' by %.3g relative", p, d)
				}
				i2, w2, d2 := tr.TestLosses(theta)
				if d := max(math.Abs(i2-icl)/icl, math.Abs(w2-iwl)/iwl, math.Abs(d2-idg)/idg); !(d < 1e-12) {
					t.Errorf("%v: test losses %g, %g, %g; columns %g, %g, %g", p, i2, w2, d2, icl, iwl, idg)
				}
				// 50 steps of descent stay together. (From a small start
				// the escape from the saddle at 0 amplifies rounding
				// differences exponentially, as for the flow.)
				a, _ := ref.GD(context.Background(), theta, GDSettings{LR: 0.02, Steps: 50})
				b, _ := tr.GD(context.Background(), theta, GDSettings{LR: 0.02, Steps: 50})
				t.Logf("%v: loss %.2g, gradient %.2g, 50 steps %.2g", p, math.Abs(l-lRef)/lRef, relDiff(g, gRef), relDiff(b.Final, a.Final))
				if d := relDiff(b.Final, a.Final); !(d < 1e-12) {
					t.Errorf("%v: after 50 steps the weights differ from the columns' by %.3g relative", p, d)
				}
			}
		})
	}
}
