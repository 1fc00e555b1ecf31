package law

import "fmt"

// Sequences names a population of sequences whose feature moments
// Data.Moments forms (docs/math.md, "The full layer"; the test sets are
// those of docs/training.md, "Data").
type Sequences int

const (
	// Training is the law of the training sequences: Data.Tasks.
	Training Sequences = iota
	// InContextTest sequences each have a fresh w ~ N(0, Ω_test)
	// (Tasks.TestCov, else Tasks.Cov, else I).
	InContextTest
	// InWeightTest sequences have their query labeled by a fixed task (one
	// of Tasks.Fixed, uniformly) and context labels independent of the
	// tokens, N(0, tr(ΛΩ) + σ²) (Data.LabelVariance): only weights that
	// memorized the task predict it.
	InWeightTest
	// InDistributionTest sequences are labeled by a fixed task, context
	// and query alike, with fresh tokens: Lu et al.'s in-distribution
	// generalization (e_IDG).
	InDistributionTest
)

func (s Sequences) String() string {
	switch s {
	case Training:
		return "training"
	case InContextTest:
		return "in-context test"
	case InWeightTest:
		return "in-weight test"
	case InDistributionTest:
		return "in-distribution test"
	}
	return fmt.Sprintf("Sequences(%d)", int(s))
}
