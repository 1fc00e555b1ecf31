package spec

import (
	"fmt"
	"math"
	"slices"

	"github.com/linattn/linattn/law"
)

// resolveLaw settles the layer and the law of the task vector (-layer,
// -icl, -tasks or -w0, -data-seed), read by run and train (forTrain).
func (s *Spec) resolveLaw(forTrain bool) error {
	s.def("layer", func() {
		s.Layer = "reduced"
		if forTrain {
			s.Layer = "full"
		}
	})
	if s.Layer != "full" && s.Layer != "reduced" {
		return fmt.Errorf("-layer = %q, want full or reduced", s.Layer)
	}
	if s.Layer == "full" && s.Given("nu") {
		return fmt.Errorf("-nu: the full layer's population loss needs the context lengths themselves (E[1/N²] too), not only ν: give -N or -ntp-max")
	}
	s.def("icl", func() { s.ICL = 1 })
	if !(s.ICL >= 0 && s.ICL <= 1) {
		return fmt.Errorf("-icl = %g, want a fraction c in [0, 1]", s.ICL)
	}
	if !s.usesTasks() { // the fixed tasks, and run's data seed, have no effect
		if s.Given("tasks") || s.Given("w0") {
			return s.noEffect()
		}
		if !forTrain {
			return nil
		}
	} else if err := s.resolveTasks(); err != nil {
		return err
	}
	s.def("data-seed", func() {
		s.DataSeed = DefaultSeed
		if s.Given("seed") {
			s.DataSeed = s.Seed
		}
	})
	return nil
}

// noEffect refuses fixed tasks given where they have no effect.
func (s *Spec) noEffect() error {
	flag := "-tasks"
	if s.Given("w0") {
		flag = "-w0"
	}
	return fmt.Errorf("%s: with -icl 1 every sequence is in-context and no in-weight test is computed here, so the fixed tasks have no effect; give -icl below 1 (or -layer full)", flag)
}

// resolveTasks settles the fixed tasks where they have an effect (some
// sequences not in-context, or the in-weight test loss computed: train
// with test sets, run of the full layer): -w0 (K·D numbers), or -tasks K
// drawn from the data seed.
func (s *Spec) resolveTasks() error {
	if s.Given("w0") {
		if len(s.W0) == 0 || len(s.W0)%s.D != 0 {
			return fmt.Errorf("-w0 has %d numbers, want K·D = a multiple of D = %d (K task vectors)", len(s.W0), s.D)
		}
		for i, x := range s.W0 {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("-w0: entry %d is %g, want finite numbers", i+1, x)
			}
		}
		if k := len(s.W0) / s.D; s.Given("tasks") && s.Tasks != k {
			return fmt.Errorf("-tasks = %d but -w0 holds %d task vectors of D = %d; give one of the two", s.Tasks, k, s.D)
		}
		s.Tasks = len(s.W0) / s.D
		s.Mark("tasks")
	}
	s.def("tasks", func() { s.Tasks = 1 })
	if s.Tasks < 1 {
		return fmt.Errorf("-tasks = %d, want K ≥ 1 fixed task vectors", s.Tasks)
	}
	return nil
}

// usesTasks reports whether the fixed tasks have an effect: some
// sequences are not in-context, or the in-weight test loss is computed
// (train with test sets, run of the full layer).
func (s *Spec) usesTasks() bool {
	if s.Given("test") { // train
		return s.ICL < 1 || s.Test > 0
	}
	return s.ICL < 1 || s.Layer == "full"
}

// lengths returns the context lengths of -N or -ntp-max (only ν with -nu).
func (s *Spec) lengths() law.Lengths {
	switch {
	case s.Given("N"):
		return law.Lengths{N: s.N}
	case s.Given("ntp-max"):
		return law.Lengths{NTPMax: s.NTPMax}
	}
	return law.Lengths{Nu: s.Nu}
}

// law returns data with the task law: -icl, and the fixed tasks of -w0 or drawn (K of them, from
// the data seed). A sidecar records the drawn tasks as -w0 when they have
// an effect, so that it reruns them.
func (s *Spec) law(data *law.Data) (*law.Data, error) {
	if !s.Given("tasks") {
		return data, nil // landscape and reduced: in-context
	}
	fixed := make([][]float64, 0, s.Tasks)
	if s.Given("w0") {
		for k := 0; k < s.Tasks; k++ {
			fixed = append(fixed, s.W0[k*s.D:(k+1)*s.D])
		}
	} else {
		fixed = law.FixedTasks(s.D, s.Tasks, s.DataSeed)
		if s.usesTasks() {
			s.W0 = slices.Concat(fixed...)
			s.Mark("w0")
		}
	}
	data, err := data.WithTasks(law.Tasks{ICL: s.ICL, Fixed: fixed})
	if err != nil {
		return nil, fmt.Errorf("-w0: %w", err)
	}
	return data, nil
}
