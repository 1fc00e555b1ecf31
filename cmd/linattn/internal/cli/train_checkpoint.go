package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/spec"
	"github.com/linattn/linattn/train"
)

// populationPath is the checkpoint of train's population flow beside the
// output FILE.npz: FILE.population.ckpt (its samples, as run's:
// FILE.population.sampling.ckpt). The training's own is FILE.ckpt.
func populationPath(out string) string { return strings.TrimSuffix(out, ".npz") + ".population.ckpt" }

// trainCheckpoints are the checkpointers of a train job: of its
// population flow, as run's, and of its training (gradient descent or the
// gradient flow of the training loss), with the states to resume from
// found beside the output.
type trainCheckpoints struct {
	pop, train  *checkpointer
	popResume   *flow.Resume
	popSampling *flow.SamplingProgress
	trainResume *train.Resume
}

// newTrainCheckpoints opens the checkpointers of job (nil, nil with
// -checkpoint 0); a checkpoint that is not the job's, or is damaged, is
// refused as run refuses it.
func newTrainCheckpoints(e *env, job *spec.Job) (*trainCheckpoints, error) {
	tc := &trainCheckpoints{}
	base := strings.TrimSuffix(populationPath(e.out), ".ckpt")
	var err error
	tc.pop, err = openCheckpointer(e, job, populationPath(e.out), base+".sampling.ckpt", func(r io.Reader) (err error) {
		tc.popResume, err = flow.ReadCheckpoint(r)
		return err
	})
	if err != nil || tc.pop == nil {
		return nil, err
	}
	tc.train, err = openCheckpointer(e, job, checkpointPath(e.out), "", func(r io.Reader) (err error) {
		tc.trainResume, err = train.ReadCheckpoint(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	if tc.popResume != nil {
		tc.pop.savedT = tc.popResume.T
		if tc.popSampling, err = tc.pop.readSampling(); err != nil {
			return nil, err
		}
		fmt.Fprintf(e.stderr, "linattn %s: continuing the population flow from its checkpoint at t = %.6g (%s)\n", e.cmd.Name, tc.popResume.T, tc.pop.path)
	}
	if tc.trainResume != nil {
		tc.train.savedT = tc.trainResume.T
		fmt.Fprintf(e.stderr, "linattn %s: continuing the training from its checkpoint at t = %.6g (%s)\n", e.cmd.Name, tc.trainResume.T, tc.train.path)
	}
	return tc, nil
}

// population sets the checkpoints of the population flow's run rs.
func (tc *trainCheckpoints) population(rs *flow.RunSettings) {
	if tc == nil {
		return
	}
	rs.Checkpoint, rs.Resume = tc.pop.hook, tc.popResume
	rs.SamplingCheckpoint, rs.SamplingResume = tc.pop.samplingHook, tc.popSampling
}

// training returns the hook and the state to resume from of the training.
func (tc *trainCheckpoints) training() (func(*train.Checkpoint) error, *train.Resume) {
	if tc == nil {
		return nil, nil
	}
	return func(ck *train.Checkpoint) error { return tc.train.saveState(ck.T, ck.Save) }, tc.trainResume
}

// remove deletes both checkpoints once the output of a training that
// ended is written.
func (tc *trainCheckpoints) remove() {
	if tc != nil {
		tc.pop.remove()
		tc.train.remove()
	}
}
