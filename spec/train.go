package spec

import (
	"fmt"
	"math"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/train"
)

// resolveTrain fills in and validates the fields of train (their
// defaults: Fields).
func (s *resolver) resolveTrain() error {
	if s.Given("nu") {
		return fmt.Errorf("-nu: train draws sequences, so it needs their lengths: give -N or -ntp-max instead")
	}
	s.def("P")
	if s.P < 1 {
		return fmt.Errorf("-P = %d, want P ≥ 1 training sequences", s.P)
	}
	s.def("lr")
	if !(s.LR > 0) || math.IsInf(s.LR, 0) {
		return fmt.Errorf("-lr = %g, want a finite learning rate η > 0", s.LR)
	}
	s.def("steps")
	if s.Steps < 1 {
		return fmt.Errorf("-steps = %d, want ≥ 1 steps", s.Steps)
	}
	if end := 2 * s.LR * s.Tau * float64(s.Steps); math.IsInf(end, 0) {
		return fmt.Errorf("-lr = %g with -steps = %d and -tau = %g: the final time 2·η·τ·steps is not finite; want a smaller -lr", s.LR, s.Steps, s.Tau)
	}
	s.def("batch")
	if s.Batch < 0 || s.Batch > s.P {
		return fmt.Errorf("-batch = %d, want 0 (full batch) or a minibatch size in [1, P = %d]", s.Batch, s.P)
	}
	s.def("attention")
	s.def("test")
	if s.Test < 0 {
		return fmt.Errorf("-test = %d, want ≥ 0 test sequences", s.Test)
	}
	s.def("gd")
	if !s.GD && s.Batch > 0 {
		return fmt.Errorf("-gd=false integrates the flow of the full training loss; -batch = %d is for SGD, give -batch 0", s.Batch)
	}
	s.def("path")
	if s.Path == train.MomentsPath {
		if s.Attention != train.Linear {
			return fmt.Errorf("-path moments is exact for linear attention only; -attention %s needs -path direct (or auto)", s.Attention)
		}
		if s.Batch > 0 {
			return fmt.Errorf("-path moments is full batch; -batch %d needs -path direct (or auto)", s.Batch)
		}
	}
	if err := s.resolveUnrestricted(); err != nil {
		return err
	}
	// The estimate needs the shapes only: any Λ of the right dimension,
	// whose D×D matrices must fit first.
	if err := s.checkMemory(s.estimateBytes(map[Group]bool{GroupProblem: true})); err != nil {
		return err
	}
	placeholder, err := law.NewData(law.White(s.D, 1), nil, s.lengths())
	if err != nil {
		return err
	}
	cfg := s.trainConfig(placeholder)
	if need, limit := cfg.EstimateBytes(), s.memoryLimit; need > limit {
		return fmt.Errorf("-P = %d, -test = %d: the data need an estimated %s, more than the %s available; lower -P or -test, or use -path moments (linear attention)",
			s.P, s.Test, formatBytes(need), formatBytes(limit))
	}
	return nil
}

// resolveUnrestricted checks -unrestricted: the merged full layer's
// blocks, linear attention, untied layers, gradient descent from its own
// random start.
func (s *resolver) resolveUnrestricted() error {
	s.def("unrestricted")
	switch {
	case !s.Unrestricted:
		return nil
	case s.Model != flow.Merged:
		return fmt.Errorf("-unrestricted: the transformer's heads are merged key–query matrices W^KQ; give -model merged")
	case s.Given("layer") && s.Layer != flow.FullLayer:
		return fmt.Errorf("-unrestricted with -layer %s: the transformer trains every block of the full layer", s.Layer)
	case s.Attention != train.Linear:
		return fmt.Errorf("-unrestricted with -attention %s: the transformer is of linear attention", s.Attention)
	case s.Tie:
		return fmt.Errorf("-unrestricted with -tie: the transformer's layers have weights of their own")
	case s.Given("init") || s.Balanced:
		return fmt.Errorf("-unrestricted starts from its own random weights (-winit, -seed), not -init or -balanced")
	case s.Path != train.AutoPath && s.Path != train.DirectPath:
		return fmt.Errorf("-unrestricted with -path %s: the transformer is evaluated token by token, -path direct", s.Path)
	}
	s.Layer = flow.FullLayer
	s.Mark("layer")
	return nil
}

// TrainConfig returns the training problem of a job resolved for train:
// its data carry the context lengths and the task law.
func (j *Job) TrainConfig() train.Config { return (&resolver{Spec: j.Spec}).trainConfig(j.Data) }

func (s *resolver) trainConfig(data *law.Data) train.Config {
	m := train.Model{Model: s.flowModel(), D: s.D, Unrestricted: s.Unrestricted}
	if s.Unrestricted {
		m.Layer = flow.FullLayer // the trained model's blocks; the flow beside it is the stack of reduced layers
	}
	m.Attention = s.Attention
	return train.Config{Model: m, Data: data, P: s.P, Test: s.Test, Seed: s.DataSeed,
		Path: s.Path, Batch: s.Batch}
}
