package flow

import (
	"context"
	"fmt"
	"slices"
)

// Sampling says where a Trajectory's samples come from.
type Sampling int

const (
	// AtTimes: computed at the output times during the run (Times given,
	// a grid on a known T, or the second pass of Run).
	AtTimes Sampling = iota
	// FromDense: evaluated after the run on its continuous extension,
	// which gives the values a pass at these times computes, bit for bit.
	FromDense
	// AtSteps: the accepted steps of a run that ended before its output
	// times were known (an error or an interruption), at most Samples of
	// them spread over the run.
	AtSteps
	// Interpolated: the states of a run that keeps some of them
	// (RunSettings.StateEvery) at steps spread over the run
	// (Trajectory.StateTimes); the loss and the test losses at the output
	// times interpolated between the steps, within the integrator's error
	// (docs/math.md, "Sampling from the steps").
	Interpolated
)

// Sample evaluates the run's continuous extension at the given times in
// [0, FinalT]: the states (original basis, row-major) and the loss. The
// values are those a run with these output times would return, up to the
// step that ends the run, which a run with a final time cuts differently.
func (tr *Trajectory) Sample(times []float64) (states, loss []float64, err error) {
	return tr.sample(times, samplingSettings{ctx: context.Background()})
}

// samplingSettings are the context that interrupts a run's sampling
// and what it saves and resumes (RunSettings.SamplingCheckpoint and
// SamplingResume).
type samplingSettings struct {
	ctx        context.Context
	checkpoint func(*SamplingProgress) error
	resume     *SamplingProgress
}

// sample is Sample that takes the samples ss.resume holds where it is of
// the same sampling, calls ss.checkpoint (if not nil) after each group of
// times sampled (SamplingProgress), and stops between two times when
// ss.ctx is canceled, calling ss.checkpoint once more.
func (tr *Trajectory) sample(times []float64, ss samplingSettings) (states, loss []float64, err error) {
	if tr.dense == nil {
		return nil, nil, fmt.Errorf("flow: Trajectory.Sample: the run kept no dense output (RunSettings.DenseBytes)")
	}
	p := newSamplingProgress(times, tr.sys.n+tr.pad, ss.resume)
	p.hook = ss.checkpoint
	fill := func(on *Trajectory, lo, hi int) error {
		if err := on.sampleRange(ss.ctx, times, lo, hi, p.states, p.loss); err != nil {
			return err
		}
		return p.finish(lo, hi)
	}
	if err := tr.sampleParallel(times, tr.sampleWorkers(len(times)), p.allDone, fill); err != nil {
		if ss.ctx.Err() != nil {
			p.finish(0, 0) // no new samples: the hook saves those made (its error is the context's)
		}
		return nil, nil, err
	}
	return p.states, p.loss, nil
}

// sampleRange writes the loss and the states at times[lo:hi] into their
// places in loss and states, or stops with ctx's error when it is
// canceled.
func (tr *Trajectory) sampleRange(ctx context.Context, times []float64, lo, hi int, states, loss []float64) error {
	n, stride := tr.sys.n, tr.sys.n+tr.pad
	if len(tr.scratch) != n {
		tr.scratch = make([]float64, n)
	}
	ye := tr.scratch
	for i := lo; i < hi; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := tr.dense.At(ye, times[i]); err != nil {
			return fmt.Errorf("flow: Trajectory.Sample: %w", err)
		}
		loss[i] = tr.sys.LossEigen(ye)
		tr.sys.FromEigen(states[i*stride:i*stride+n], ye)
	}
	return nil
}

// atSteps samples the first pass tr, which failed before its output times
// were known, at the accepted steps rec kept with their states, its end
// among them (Sampling AtSteps).
func (tr *Trajectory) atSteps(rec *passRecord) {
	rec.last(tr.FinalT, tr.sys.ToEigen(nil, tr.Final), tr.FinalLoss)
	r := rec.states
	tr.Times, tr.Loss, tr.States, tr.Sampling = r.t, r.loss, r.original(), AtSteps
}

// fromSteps samples the first pass tr at times from what rec recorded at
// its accepted steps (Sampling Interpolated): the loss and the test losses
// interpolated between the steps, the states those rec kept.
func (tr *Trajectory) fromSteps(times []float64, rec *passRecord) {
	rec.last(tr.FinalT, tr.sys.ToEigen(nil, tr.Final), tr.FinalLoss)
	v := rec.steps.at(times)
	tr.Times, tr.Loss, tr.Sampling = times, v[0], Interpolated
	tr.States, tr.StateTimes = rec.states.original(), rec.states.t
	if rec.tests != nil {
		tr.TestICL, tr.TestIWL, tr.TestIDG = v[1], v[2], v[3]
	}
}

// keptStates returns the indices of the output times of nt whose states
// a run with StateEvery every keeps: every every-th and the last; nil for
// all.
func keptStates(nt, every int) []int {
	if every <= 1 || nt == 0 {
		return nil
	}
	var kept []int
	for i := 0; i < nt; i += every {
		kept = append(kept, i)
	}
	if kept[len(kept)-1] != nt-1 {
		kept = append(kept, nt-1)
	}
	return kept
}

// thinStates keeps the states of tr at every-th output time and the last
// (StateIndex).
func (tr *Trajectory) thinStates(every int) {
	kept := keptStates(len(tr.Times), every)
	if kept == nil || !tr.AllStates() || tr.Sampling == AtSteps {
		return
	}
	stride := len(tr.States) / len(tr.Times)
	for row, i := range kept {
		copy(tr.States[row*stride:(row+1)*stride], tr.States[i*stride:(i+1)*stride])
	}
	tr.States = slices.Clip(tr.States[:len(kept)*stride])
	tr.StateIndex = kept
}
