package landscape

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/linattn/linattn/law"
)

// MaxEnumerateDim bounds D for Enumerate: 2^D subsets must be countable.
const MaxEnumerateDim = 40

// Subset is the fixed point M(S) of the separate model that has learned the
// eigenvectors in S (paper section 4.2, eq. attnS-def-M; docs/math.md "Fixed
// points"). Bit d of Mask (from 0) stands for e_{d+1} of the spectrum sorted
// by decreasing eigenvalue.
type Subset struct {
	Mask uint64
	Size int     // |S|
	Loss float64 // L(S) = tr(Λ) − Σ_{d∈S} λ_d³/a_d
	// OnPath reports whether S can be visited from small initialization:
	// S = {1..m}, learned in decreasing order of the eigenvalues. With tied
	// eigenvalues any order among the ties is possible, so S is on the path
	// exactly when no eigenvalue outside S exceeds one inside it.
	OnPath bool
}

// Indices returns the 0-based eigenvector indices in mask, increasing.
func Indices(mask uint64) []int {
	out := make([]int, 0, bits.OnesCount64(mask))
	for mask != 0 {
		d := bits.TrailingZeros64(mask)
		out = append(out, d)
		mask &^= 1 << d
	}
	return out
}

// Table gives random access to the loss table: At computes one row in O(D)
// without allocating.
type Table struct {
	lambda, gain []float64
	trace        float64
}

// NewTable prepares the table of data's 2^D subsets.
func NewTable(data *law.Data) (*Table, error) {
	if d := data.Dim(); d > MaxEnumerateDim {
		return nil, fmt.Errorf("landscape: D = %d, the table supports D ≤ %d", d, MaxEnumerateDim)
	}
	return &Table{lambda: data.Lambda(), gain: data.Gains(), trace: data.Trace()}, nil
}

// Len returns 2^D.
func (t *Table) Len() int { return 1 << len(t.lambda) }

// At returns the row of mask (mask < Len()).
func (t *Table) At(mask uint64) Subset {
	s := Subset{Mask: mask, Size: bits.OnesCount64(mask), Loss: t.trace}
	minIn, maxOut := math.Inf(1), math.Inf(-1)
	for e, l := range t.lambda {
		if mask&(1<<e) != 0 {
			s.Loss -= t.gain[e]
			minIn = math.Min(minIn, l)
		} else {
			maxOut = math.Max(maxOut, l)
		}
	}
	s.OnPath = minIn >= maxOut // no eigenvalue outside S exceeds one inside
	return s
}

// Enumerate calls fn for every subset S ⊆ {1..D}, in increasing Mask order,
// with O(D) memory: the loss table of all 2^D fixed points streams through
// fn. It stops at fn's first error and returns it.
func Enumerate(data *law.Data, fn func(Subset) error) error {
	t, err := NewTable(data)
	if err != nil {
		return err
	}
	for mask, n := uint64(0), uint64(t.Len()); mask < n; mask++ {
		if err := fn(t.At(mask)); err != nil {
			return err
		}
	}
	return nil
}

// SubsetOf returns the Subset record of one mask.
func SubsetOf(data *law.Data, mask uint64) (Subset, error) {
	t, err := NewTable(data)
	if err != nil {
		return Subset{}, err
	}
	if mask >= uint64(t.Len()) {
		return Subset{}, fmt.Errorf("landscape: mask %b has bits beyond D = %d", mask, data.Dim())
	}
	return t.At(mask), nil
}
