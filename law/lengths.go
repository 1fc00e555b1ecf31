package law

import (
	"errors"
	"fmt"
	"math"
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
		return fmt.Errorf("law: Lengths N = %d, NTPMax = %d: want N ≥ 1 or NTPMax ≥ 1", l.N, l.NTPMax)
	case l.N > 0 && (l.NTPMax > 0 || l.Nu != 0):
		return fmt.Errorf("law: Lengths gives N = %d with NTPMax = %d or Nu = %g: want one of the three", l.N, l.NTPMax, l.Nu)
	case l.NTPMax > 0 && l.Nu != 0:
		return fmt.Errorf("law: Lengths gives NTPMax = %d with Nu = %g: want one of the two", l.NTPMax, l.Nu)
	case l.N == 0 && l.NTPMax == 0 && !(l.Nu > 0 && l.Nu <= 1):
		return fmt.Errorf("law: Lengths Nu = E[1/N] = %g, want a value in (0, 1] (or N or NTPMax)", l.Nu)
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

// Lengths returns the law of the context length.
func (d *Data) Lengths() Lengths { return d.lengths }

// Nu returns ν = E[1/N] ∈ (0, 1].
func (d *Data) Nu() float64 { return d.nu }

// Nu2 returns ν₂ = E[1/n²], NaN when the lengths are known only through ν.
func (d *Data) Nu2() float64 { return d.nu2 }

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

// NuFixed returns ν = 1/N for a fixed context length N ≥ 1.
func NuFixed(n int) (float64, error) {
	if n < 1 {
		return 0, fmt.Errorf("law: context length N = %d, want N ≥ 1", n)
	}
	return 1 / float64(n), nil
}

// NuNextToken returns ν = H_{Nmax}/Nmax, E[1/N] for N uniform on 1..Nmax: the
// next-token loss over all prefixes (paper eq. next-token-loss).
func NuNextToken(nmax int) (float64, error) {
	if nmax < 1 {
		return 0, fmt.Errorf("law: Nmax = %d, want Nmax ≥ 1", nmax)
	}
	nu, _ := Lengths{NTPMax: nmax}.moments()
	return nu, nil
}

// NuDistribution returns ν = Σ_N p(N)/N for context lengths N = 1, 2, …,
// len(weights) with probabilities proportional to the non-negative weights.
func NuDistribution(weights []float64) (float64, error) {
	var sum, nu float64
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("law: weights[%d] (for N = %d) = %g, want a finite value ≥ 0", i, i+1, w)
		}
		sum += w
		nu += w / float64(i+1)
	}
	if !(sum > 0) {
		return 0, errors.New("law: context-length weights sum to 0, want a positive total")
	}
	return nu / sum, nil
}
