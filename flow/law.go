package flow

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Lengths is the law of the context length n of a prediction: a fixed
// N, the next-token loss over every prefix n = 1..NTPMax of a sequence
// (paper eq. next-token-loss: n uniform), or, with N and NTPMax zero, a law
// known only through Nu = E[1/n]. The reduced layer's population loss
// depends on it through ν = E[1/n] alone; the full layer's also through
// ν₂ = E[1/n²] (docs/math.md, "The full layer"), and sampling sequences
// needs the lengths themselves.
type Lengths struct {
	N      int
	NTPMax int
	Nu     float64
}

func (l Lengths) validate() error {
	switch {
	case l.N < 0 || l.NTPMax < 0:
		return fmt.Errorf("flow: Lengths N = %d, NTPMax = %d: want N ≥ 1 or NTPMax ≥ 1", l.N, l.NTPMax)
	case l.N > 0 && (l.NTPMax > 0 || l.Nu != 0):
		return fmt.Errorf("flow: Lengths gives N = %d with NTPMax = %d or Nu = %g: want one of the three", l.N, l.NTPMax, l.Nu)
	case l.NTPMax > 0 && l.Nu != 0:
		return fmt.Errorf("flow: Lengths gives NTPMax = %d with Nu = %g: want one of the two", l.NTPMax, l.Nu)
	case l.N == 0 && l.NTPMax == 0 && !(l.Nu > 0 && l.Nu <= 1):
		return fmt.Errorf("flow: Lengths Nu = E[1/N] = %g, want a value in (0, 1] (or N or NTPMax)", l.Nu)
	}
	return nil
}

// moments returns ν = E[1/n] and ν₂ = E[1/n²]; ν₂ is NaN for a law known
// only through ν.
func (l Lengths) moments() (nu, nu2 float64) {
	switch {
	case l.N > 0:
		return 1 / float64(l.N), 1 / float64(l.N*l.N)
	case l.NTPMax > 0:
		for n := l.NTPMax; n >= 1; n-- {
			nu += 1 / float64(n)
			nu2 += 1 / float64(n*n)
		}
		return nu / float64(l.NTPMax), nu2 / float64(l.NTPMax)
	}
	return l.Nu, math.NaN()
}

// Sampled reports whether the lengths are known, not only ν, so that
// sequences can be drawn and the full layer's moments formed.
func (l Lengths) Sampled() bool { return l.N > 0 || l.NTPMax > 0 }

// Tasks is the law of the task vector w of a sequence (paper appendix
// supp:icl-iwl): with probability ICL, w ~ N(0, I), an in-context
// sequence; otherwise w is one of the K rows of Fixed, each with
// probability (1 − ICL)/K, a task the layer can learn in its weights.
// ICL = 1 is the paper's purely in-context task. Fixed, in the original
// basis, also defines the in-weight test set (InWeight), so it may be
// given with ICL = 1.
type Tasks struct {
	ICL   float64
	Fixed [][]float64
}

func (t Tasks) validate(d int) error {
	if !(t.ICL >= 0 && t.ICL <= 1) {
		return fmt.Errorf("flow: Tasks.ICL = %g, want a fraction c in [0, 1]", t.ICL)
	}
	if t.ICL < 1 && len(t.Fixed) == 0 {
		return errors.New("flow: Tasks.ICL < 1 needs at least one fixed task vector (Tasks.Fixed)")
	}
	for k, w := range t.Fixed {
		if len(w) != d {
			return fmt.Errorf("flow: Tasks.Fixed[%d] has length %d, want D = %d", k, len(w), d)
		}
		for i, x := range w {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("flow: Tasks.Fixed[%d][%d] = %g, want finite values", k, i, x)
			}
		}
	}
	return nil
}

func (t Tasks) clone() Tasks {
	c := Tasks{ICL: t.ICL, Fixed: make([][]float64, len(t.Fixed))}
	for k, w := range t.Fixed {
		c.Fixed[k] = append([]float64(nil), w...)
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
	rng := rand.New(rand.NewPCG(seed, fixedTaskStream))
	out := make([][]float64, k)
	for j := range out {
		w := make([]float64, d)
		var n2 float64
		for i := range w {
			w[i] = rng.NormFloat64()
			n2 += w[i] * w[i]
		}
		scale := math.Sqrt(float64(d) / n2)
		for i := range w {
			w[i] *= scale
		}
		out[j] = w
	}
	return out
}

// Lengths returns the law of the context length (NewData: Nu only).
func (d *Data) Lengths() Lengths { return d.lengths }

// Nu2 returns ν₂ = E[1/n²], NaN when the lengths are known only through ν.
func (d *Data) Nu2() float64 { return d.nu2 }

// Tasks returns the law of the task vector (a copy; NewData: ICL = 1, no
// fixed tasks).
func (d *Data) Tasks() Tasks { return d.tasks.clone() }

// InContext reports whether every sequence is in-context (ICL = 1), the
// paper's task, for which the reduced layer's theory holds.
func (d *Data) InContext() bool { return d.tasks.ICL == 1 }

// WithLengths returns a copy of d with the context lengths l, from which ν
// (and A) follow.
func (d *Data) WithLengths(l Lengths) (*Data, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	c := d.copy()
	c.lengths = l
	c.nu, c.nu2 = l.moments()
	c.init()
	return c, nil
}

// WithTasks returns a copy of d with the task law t (the fixed tasks in
// the original basis).
func (d *Data) WithTasks(t Tasks) (*Data, error) {
	if err := t.validate(d.Dim()); err != nil {
		return nil, err
	}
	c := d.copy()
	c.tasks = t.clone()
	return c, nil
}

func (d *Data) copy() *Data {
	c := *d
	c.lambda = append([]float64(nil), d.lambda...)
	c.tasks = d.tasks.clone()
	return &c
}
