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
	if s.Attention != "linear" && s.Attention != "softmax" {
		return fmt.Errorf("-attention = %q, want linear or softmax", s.Attention)
	}
	s.def("test")
	if s.Test < 0 {
		return fmt.Errorf("-test = %d, want ≥ 0 test sequences", s.Test)
	}
	s.def("gd")
	if !s.GD && s.Batch > 0 {
		return fmt.Errorf("-gd=false integrates the flow of the full training loss; -batch = %d is for SGD, give -batch 0", s.Batch)
	}
	s.def("path")
	switch s.Path {
	case "auto", "direct", "columns":
	case "moments":
		if s.Attention != "linear" {
			return fmt.Errorf("-path moments is exact for linear attention only; -attention %s needs -path direct (or auto)", s.Attention)
		}
		if s.Batch > 0 {
			return fmt.Errorf("-path moments is full batch; -batch %d needs -path direct (or auto)", s.Batch)
		}
	default:
		return fmt.Errorf("-path = %q, want auto, direct, moments or columns", s.Path)
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

// TrainConfig returns the training problem of a job resolved for train:
// its data carry the context lengths and the task law.
func (j *Job) TrainConfig() train.Config { return (&resolver{Spec: j.Spec}).trainConfig(j.Data) }

func (s *resolver) trainConfig(data *law.Data) train.Config {
	m := train.Model{Model: flow.Model{Kind: flow.Separate, H: s.H, R: s.R, Tau: s.Tau}, D: s.D}
	m.Layer, _ = flow.LayerByName(s.Layer) // checked by resolveLaw
	if s.Model == "merged" {
		m.Kind, m.R = flow.Merged, 0
	}
	if s.Attention == "softmax" {
		m.Attention = train.Softmax
	}
	paths := map[string]train.Path{"auto": train.AutoPath, "direct": train.DirectPath, "moments": train.MomentsPath, "columns": train.ColumnsPath}
	return train.Config{Model: m, Data: data, P: s.P, Test: s.Test, Seed: s.DataSeed,
		Path: paths[s.Path], Batch: s.Batch}
}
