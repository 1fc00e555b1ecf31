package spec

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/law"
)

// covariance names the fields that give a task covariance as Λ is given:
// eigenvalues (-PREFIX-eigs, -PREFIX-spectrum power:ALPHA with trace D, or
// -PREFIX-white C) and eigenvectors (-PREFIX-eigvecs, default identity).
type covariance struct {
	prefix   string
	eigs     *[]float64
	spectrum *string
	white    *float64
	eigvecs  *string
}

// taskCovariance is Ω, the in-context tasks' covariance (-task-*).
func taskCovariance(s *Spec) covariance {
	return covariance{"task", &s.TaskEigs, &s.TaskSpectrum, &s.TaskWhite, &s.TaskEigvecs}
}

// testTaskCovariance is Ω_test, the in-context test set's (-test-task-*).
func testTaskCovariance(s *Spec) covariance {
	return covariance{"test-task", &s.TestTaskEigs, &s.TestTaskSpectrum, &s.TestTaskWhite, &s.TestTaskEigvecs}
}

func (c covariance) name(field string) string { return c.prefix + "-" + field }

// given reports whether the covariance's eigenvalues were given.
func (c covariance) given(s *resolver) bool {
	return s.Given(c.name("eigs")) || s.Given(c.name("spectrum")) || s.Given(c.name("white"))
}

// resolveCovariance validates the fields of c; the eigenvectors need
// eigenvalues, and a white covariance C·I has none of its own (every basis
// is one), so -PREFIX-white refuses -PREFIX-eigvecs other than identity
// and records none. Ω_test's eigenvectors default to Ω's when Ω has
// eigenvalues of its own (Ω_test given by its eigenvalues alone is a law
// in Ω's eigenbasis), else to identity.
func (s *resolver) resolveCovariance(c covariance) error {
	switch {
	case !c.given(s):
		if s.Given(c.name("eigvecs")) {
			return fmt.Errorf("-%s needs the eigenvalues: give -%s, -%s or -%s", c.name("eigvecs"), c.name("eigs"), c.name("spectrum"), c.name("white"))
		}
		return nil
	case s.Given(c.name("eigs")):
		if len(*c.eigs) != s.D {
			return fmt.Errorf("-%s has %d values, want D = %d", c.name("eigs"), len(*c.eigs), s.D)
		}
		for i, x := range *c.eigs {
			if !(x > 0) || math.IsInf(x, 0) {
				return fmt.Errorf("-%s: entry %d is %g, want a finite eigenvalue > 0", c.name("eigs"), i+1, x)
			}
		}
	case s.Given(c.name("white")):
		if !(*c.white > 0) || math.IsInf(*c.white, 0) {
			return fmt.Errorf("-%s = %g, want a finite C > 0", c.name("white"), *c.white)
		}
		if s.Given(c.name("eigvecs")) && *c.eigvecs != "identity" {
			return fmt.Errorf("-%s = %q: -%s %g makes the covariance %g·I, of which every vector is an eigenvector; leave -%s out (or give eigenvalues of its own: -%s or -%s)",
				c.name("eigvecs"), *c.eigvecs, c.name("white"), *c.white, *c.white, c.name("eigvecs"), c.name("eigs"), c.name("spectrum"))
		}
		return nil
	default:
		if _, err := parsePower(c.name("spectrum"), *c.spectrum); err != nil {
			return err
		}
	}
	s.defTo(c.name("eigvecs"), func() {
		*c.eigvecs = "identity"
		if train := taskCovariance(s.Spec); c.prefix == "test-task" && train.given(s) && !s.Given(train.name("white")) {
			*c.eigvecs = *train.eigvecs // Ω's, resolved before Ω_test's
		}
	})
	return nil
}

// covarianceMatrix returns the matrix V diag(e) Vᵀ that c gives, nil when
// it was not given (the identity).
func (j *Job) covarianceMatrix(s *resolver, c covariance) (*mat.Dense, error) {
	if !c.given(s) {
		return nil, nil
	}
	d := s.D
	var e []float64
	switch {
	case s.Given(c.name("eigs")):
		e = *c.eigs
	case s.Given(c.name("white")):
		e = law.White(d, *c.white)
	default:
		alpha, _ := parsePower(c.name("spectrum"), *c.spectrum) // checked by resolveCovariance
		e = law.PowerLaw(d, alpha, float64(d))
	}
	var v *mat.Dense // C·I: any basis
	if !s.Given(c.name("white")) {
		var err error
		if v, err = j.eigenvectorsOf(c.name("eigvecs"), c.eigvecs, d); err != nil {
			return nil, err
		}
	}
	cov, err := law.Covariance(e, v) // checked as Λ's: one implementation
	if err != nil {
		return nil, fmt.Errorf("-%s: %w", c.name("eigvecs"), err)
	}
	return cov, nil
}
