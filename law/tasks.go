package law

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Tasks is the law of the labels y = wᵀx + ε of a sequence (docs/math.md,
// "Task laws"; paper appendix supp:icl-iwl): with probability ICL the
// task vector is drawn afresh, w ~ N(0, Ω) (an in-context sequence);
// otherwise w is one of the K rows of Fixed, each with probability
// (1 − ICL)/K, a task the layer can learn in its weights. Every label
// carries independent noise ε ~ N(0, Noise).
//
// The zero value is the paper's task: no fixed tasks, so every sequence
// is in-context (ICL is then 0 or 1), Ω = I and no noise. Fixed, in the
// original basis, also defines the in-weight and in-distribution test
// sets (Sequences), so it may be given with ICL = 1.
type Tasks struct {
	ICL   float64
	Fixed [][]float64
	// Cov is Ω, the covariance of the in-context task vector (original
	// basis, D×D, symmetric positive definite); nil means I.
	Cov *mat.Dense
	// TestCov is the covariance of the in-context test set's task vector
	// (task alignment: it may differ from Cov); nil means Cov.
	TestCov *mat.Dense
	// Noise is σ² ≥ 0, the variance of every label's noise.
	Noise float64
}

// Fraction returns the fraction c of in-context sequences: ICL, or 1
// without fixed tasks.
func (t Tasks) Fraction() float64 {
	if len(t.Fixed) == 0 {
		return 1
	}
	return t.ICL
}

func (t Tasks) validate(d int) error {
	if !(t.ICL >= 0 && t.ICL <= 1) {
		return fmt.Errorf("law: Tasks.ICL = %g, want a fraction c in [0, 1]", t.ICL)
	}
	if t.ICL > 0 && t.ICL < 1 && len(t.Fixed) == 0 {
		return fmt.Errorf("law: Tasks.ICL = %g < 1 needs at least one fixed task vector (Tasks.Fixed)", t.ICL)
	}
	if !(t.Noise >= 0) || math.IsInf(t.Noise, 0) {
		return fmt.Errorf("law: Tasks.Noise = σ² = %g, want a finite variance ≥ 0", t.Noise)
	}
	for k, w := range t.Fixed {
		if len(w) != d {
			return fmt.Errorf("law: Tasks.Fixed[%d] has length %d, want D = %d", k, len(w), d)
		}
		for i, x := range w {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("law: Tasks.Fixed[%d][%d] = %g, want finite values", k, i, x)
			}
		}
	}
	for _, c := range []struct {
		name string
		m    *mat.Dense
	}{{"Tasks.Cov", t.Cov}, {"Tasks.TestCov", t.TestCov}} {
		if c.m == nil {
			continue
		}
		if r, cc := c.m.Dims(); r != d || cc != d {
			return fmt.Errorf("law: %s is %d×%d, want D×D = %d×%d", c.name, r, cc, d, d)
		}
		if _, _, err := eigenSym(c.name, c.m); err != nil {
			return err
		}
	}
	return nil
}

func (t Tasks) clone() Tasks {
	c := t
	c.Fixed = make([][]float64, len(t.Fixed))
	n := 0
	for _, w := range t.Fixed {
		n += len(w)
	}
	flat := make([]float64, 0, n) // one block for any K
	for k, w := range t.Fixed {
		flat = append(flat, w...)
		c.Fixed[k] = flat[len(flat)-len(w) : len(flat) : len(flat)]
	}
	if t.Cov != nil {
		c.Cov = mat.DenseCopyOf(t.Cov)
	}
	if t.TestCov != nil {
		c.TestCov = mat.DenseCopyOf(t.TestCov)
	}
	return c
}

// fixedTaskStream is the PCG stream of the fixed task vectors: the one
// package train has always drawn its w₀ from, so that its data do not
// change.
const fixedTaskStream = 3 << 56

// FixedTasks draws k task vectors w ~ N(0, I_d), each scaled to ‖w‖ = √d
// as the paper's code scales its fixed task (data.py, gen_dataset), from a
// PCG generator seeded by seed: the first is the w₀ of `linattn train
// -icl` with that data seed, and the first j of k are those of any k' ≥ j.
func FixedTasks(d, k int, seed uint64) [][]float64 {
	out := GaussianTasks(d, k, seed)
	for _, w := range out {
		var n2 float64
		for _, x := range w {
			n2 += x * x
		}
		scale := math.Sqrt(float64(d) / n2)
		for i := range w {
			w[i] *= scale
		}
	}
	return out
}

// GaussianTasks draws k task vectors w ~ N(0, I_d), unscaled, as Raventós
// et al. and Lu et al. draw their pretraining tasks, from the stream of
// FixedTasks: task j of both points the same way.
func GaussianTasks(d, k int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, fixedTaskStream))
	flat := make([]float64, d*k)
	out := make([][]float64, k)
	for j := range out {
		w := flat[j*d : (j+1)*d : (j+1)*d]
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		out[j] = w
	}
	return out
}

// Tasks returns the law of the labels (a copy; NewData: the zero value,
// every w ~ N(0, I), noiseless).
func (d *Data) Tasks() Tasks { return d.tasks.clone() }

// InContext reports whether every sequence draws its task afresh (no
// fixed tasks, or ICL = 1), whatever Ω and the noise.
func (t Tasks) InContext() bool { return t.Fraction() == 1 }

// Standard reports whether the law is the paper's task: every sequence
// in-context, w ~ N(0, I), noiseless labels. The reduced theory (plateau
// levels, fixed points, the 1-D dynamics) holds for it alone.
func (t Tasks) Standard() bool { return t.InContext() && t.Cov == nil && t.Noise == 0 }

// InContext reports whether the data's task law is in context
// (Tasks.InContext).
func (d *Data) InContext() bool { return d.tasks.InContext() }

// Standard reports whether the data's task law is the paper's task
// (Tasks.Standard).
func (d *Data) Standard() bool { return d.tasks.Standard() }

// HasFixed reports whether fixed task vectors are given, which define the
// in-weight and in-distribution test sets.
func (d *Data) HasFixed() bool { return len(d.tasks.Fixed) > 0 }

// WithTasks returns a copy of d with the label law t (the fixed tasks and
// task covariances in the original basis).
func (d *Data) WithTasks(t Tasks) (*Data, error) {
	if err := t.validate(d.Dim()); err != nil {
		return nil, err
	}
	c := d.copy()
	c.tasks = t.clone()
	c.fixedEigen = c.rotateTasks()
	return c, nil
}

func (d *Data) copy() *Data {
	c := *d
	c.lambda = append([]float64(nil), d.lambda...)
	c.a = append([]float64(nil), d.a...)
	c.tasks = d.tasks.clone()
	return &c
}
