package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/linattn/linattn/flow"
)

// DivergenceFactor: gradient descent stops when the loss exceeds
// DivergenceFactor times its initial value (or is not finite): the
// learning rate is then too large for the curvature of the loss.
const DivergenceFactor = 1e4

// GDSettings controls gradient descent.
type GDSettings struct {
	LR    float64 // learning rate η > 0
	Steps int     // number of steps, ≥ 1
	// Samples is the number S ≥ 2 of output times on Grid over
	// [0, 2ητ·Steps] (flow.Grid.Times; 0: flow.DefaultSamples), each
	// taken at the step nearest to it (t = 2ητ·step, repeats dropped);
	// Times, if not nil, are the output times instead. The drops grid is
	// placed from the loss of every step: the weights of every step are
	// kept within KeepBytes (0: flow.DefaultDenseBytes, as
	// flow.RunSettings.DenseBytes), else the
	// deterministic descent is repeated for the steps chosen.
	Samples   int
	Grid      flow.Grid
	Times     []float64
	KeepBytes int
	// Levels are the levels whose first falling crossings by the loss are
	// the drops (Trajectory.Transitions), by linear interpolation between
	// steps, as flow.System.Levels gives them.
	Levels []flow.Transition
	// Observer, if not nil, is called before every step k with the loss
	// at θ_k; an error stops the descent there.
	Observer func(step int, loss float64) error
	// Checkpoint, if not nil, is called after every step of the descent
	// GD begins with (a second descent, which the drops grid may need,
	// has none) with the state there, which it may save
	// (Checkpoint.Save). An error stops the descent (Interrupted).
	Checkpoint func(*Checkpoint) error
	// Resume, if not nil, continues the descent that saved it
	// (ReadCheckpoint): GD with the same Trainer, theta0 and settings then
	// returns what the descent that was not stopped returns, bit for bit.
	Resume *Resume
}

// descent is the record of one gradient descent.
type descent struct {
	steps  int       // steps taken
	loss   []float64 // loss[k] at θ_k, k = 0..steps
	kept   []int     // the steps whose weights states holds
	states []float64 // row-major
	final  []float64
}

// DivergedError reports a loss that exceeded DivergenceFactor times its
// initial value.
type DivergedError struct {
	Step        int
	Loss, Loss0 float64
	LR          float64
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("train: the loss diverged at step %d (L = %.3g, initially %.3g): the learning rate %g is too large for this problem; lower it",
		e.Step, e.Loss, e.Loss0, e.LR)
}

// GD runs gradient descent θ_{k+1} = θ_k − η ∂L̂/∂θ(θ_k) from theta0:
// full batch, or minibatch SGD when Config.Batch > 0 (batches are
// consecutive slices of a random permutation of the sequences, drawn anew
// every epoch from the data seed; the last batch of an epoch may be
// smaller). It follows the gradient flow of L̂ with t = 2ητ per step, and
// returns it as flow.System.Run returns the flow: sampled at the output
// times (the training loss, for SGD evaluated there), with the drops,
// Status ReachedT and Stats.Steps the steps taken. On an error
// (divergence: Failed; cancellation: Interrupted) it returns what it
// computed with the error: the descent up to the last weights with a
// finite loss below DivergenceFactor·L̂(θ_0).
func (t *Trainer) GD(ctx context.Context, theta0 []float64, gs GDSettings) (*flow.Trajectory, error) {
	if err := t.checkGD(theta0, &gs); err != nil {
		return nil, err
	}
	if gs.Resume != nil {
		if _, err := t.resumeGD(gs.Resume, &gs); err != nil {
			return nil, err
		}
	}
	T := t.Time(gs.LR, gs.Steps)
	drops := gs.Times == nil && gs.Grid == flow.GridDrops && gs.Samples >= 4
	keepAll := drops && float64(gs.Steps+1)*float64(t.Len())*8 <= float64(gs.KeepBytes)
	var keep []int
	if !keepAll { // the lin grid, also a drops run's fallback if it stops
		keep = t.stepsOf(gs, gs.outputTimes(T, nil), gs.Steps)
	}
	d, err := t.descend(ctx, theta0, gs, keep, keepAll)
	if len(d.kept) == 0 {
		return nil, err
	}
	path := &flow.LossPath{T: make([]float64, len(d.loss)), Loss: d.loss}
	for k := range path.T {
		path.T[k] = t.Time(gs.LR, k)
	}
	keep, states := d.kept, d.states
	switch {
	case drops && keepAll:
		keep = t.stepsOf(gs, gs.Grid.Times(t.Time(gs.LR, d.steps), gs.Samples, path), d.steps)
		states = selectStates(d, keep, t.Len())
	case drops && err == nil:
		keep = t.stepsOf(gs, gs.Grid.Times(T, gs.Samples, path), d.steps)
		again, err2 := t.descend(ctx, theta0, GDSettings{LR: gs.LR, Steps: gs.Steps}, keep, false)
		if err2 != nil {
			return nil, err2
		}
		states = again.states
	}
	return t.gdTrajectory(gs, d, path, keep, states, err), err
}

// outputTimes are the output times of gs on [0, T]; path is the loss of
// every step, which the drops grid needs (nil: the linear grid).
func (gs *GDSettings) outputTimes(T float64, path *flow.LossPath) []float64 {
	if gs.Times != nil {
		return gs.Times
	}
	return gs.Grid.Times(T, gs.Samples, path)
}

// stepsOf maps output times to steps (t = 2ητ·step), increasing and
// without repeats, in [0, last].
func (t *Trainer) stepsOf(gs GDSettings, times []float64, last int) []int {
	unit := t.Time(gs.LR, 1)
	var out []int
	for _, tt := range times {
		k := min(max(int(math.Round(tt/unit)), 0), last)
		if len(out) == 0 || k > out[len(out)-1] {
			out = append(out, k)
		}
	}
	return out
}

// selectStates picks the weights of the given steps from a descent that
// kept every step.
func selectStates(d *descent, steps []int, n int) []float64 {
	out := make([]float64, 0, len(steps)*n)
	for _, k := range steps {
		out = append(out, d.states[k*n:(k+1)*n]...)
	}
	return out
}

// gdTrajectory is the descent d sampled at the steps keep (weights states).
func (t *Trainer) gdTrajectory(gs GDSettings, d *descent, path *flow.LossPath, keep []int, states []float64, err error) *flow.Trajectory {
	n := t.Len()
	tr := &flow.Trajectory{States: states, Sampling: flow.AtTimes, FinalT: t.Time(gs.LR, d.steps),
		Final: d.final, FinalLoss: d.loss[d.steps], Status: flow.ReachedT}
	tr.Stats.Steps, tr.Stats.FuncEvals = d.steps, d.steps+1
	for i, k := range keep {
		tr.Times = append(tr.Times, t.Time(gs.LR, k))
		l := d.loss[k]
		if t.cfg.Batch > 0 { // the minibatch's loss: evaluate the training loss
			l = t.Loss(states[i*n : (i+1)*n])
		}
		tr.Loss = append(tr.Loss, l)
	}
	tr.Transitions = Crossings(path.T, path.Loss, gs.Levels)
	if t.cfg.Batch > 0 { // the path holds minibatch losses: drops from the training loss
		tr.Transitions = Crossings(tr.Times, tr.Loss, gs.Levels)
		tr.FinalLoss = tr.Loss[len(tr.Loss)-1]
	}
	var de *DivergedError
	switch {
	case errors.As(err, &de):
		tr.Status = flow.Failed
	case err != nil:
		tr.Status = flow.Interrupted
	}
	return tr
}

// descend runs the descent, keeping the weights after the steps keep (or
// every step), from gs.Resume if it is set, and hands its state after
// every step to gs.Checkpoint.
func (t *Trainer) descend(ctx context.Context, theta0 []float64, gs GDSettings, keep []int, keepAll bool) (*descent, error) {
	n := t.Len()
	theta := append([]float64(nil), theta0...)
	prev, grad := make([]float64, n), make([]float64, n)
	res := &descent{loss: make([]float64, 0, gs.Steps+1)}
	batches := t.newBatches()
	var loss0 float64
	var err error
	start := 0
	if gs.Resume != nil {
		st := gs.Resume.gd
		start, loss0, res.steps = st.k, st.loss0, st.k-1
		copy(theta, st.theta)
		copy(prev, st.prev)
		res.loss = append(res.loss, st.loss...)
		res.kept, res.states = append(res.kept, st.kept...), append(res.states, st.states...)
		batches.restore(st.epoch, st.batch)
		for len(keep) > 0 && keep[0] < start {
			keep = keep[1:]
		}
	}
	for k := start; ; k++ {
		var loss float64
		if k < gs.Steps {
			loss = t.eval(t.train, theta, grad, batches.next())
		} else {
			loss = t.Loss(theta)
		}
		if k == 0 {
			loss0 = loss
			if t.cfg.Batch > 0 {
				loss0 = t.Loss(theta)
			}
		}
		if !(loss <= DivergenceFactor*loss0) {
			err = &DivergedError{Step: k, Loss: loss, Loss0: loss0, LR: gs.LR}
			if k > 0 {
				copy(theta, prev) // θ_{k−1}, the last weights with a finite loss
			}
			break
		}
		res.loss = append(res.loss, loss)
		res.steps = k
		if keepAll || (len(keep) > 0 && keep[0] == k) {
			res.kept = append(res.kept, k)
			res.states = append(res.states, theta...)
			if !keepAll {
				keep = keep[1:]
			}
		}
		if k == gs.Steps {
			break
		}
		if err = stepDone(ctx, gs.Observer, k, loss); err != nil {
			break
		}
		copy(prev, theta)
		for i, g := range grad {
			theta[i] -= gs.LR * g
		}
		if gs.Checkpoint != nil {
			st := &gdState{k: k + 1, t: t.Time(gs.LR, k+1), loss0: loss0, theta: theta, prev: prev, loss: res.loss,
				kept: res.kept, states: res.states, epoch: batches.epoch, batch: batches.pos}
			if err = gs.Checkpoint(&Checkpoint{T: st.t, gd: st}); err != nil {
				err = fmt.Errorf("train: stopped after step %d: %w", k+1, err)
				break
			}
		}
	}
	if err != nil && (len(res.kept) == 0 || res.kept[len(res.kept)-1] != res.steps) {
		res.kept = append(res.kept, res.steps) // what was computed ends where it stopped
		res.states = append(res.states, theta...)
	}
	res.final = theta
	return res, err
}

func stepDone(ctx context.Context, observer func(int, float64) error, k int, loss float64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("train: stopped before step %d: %w", k+1, err)
	}
	if observer != nil {
		return observer(k, loss)
	}
	return nil
}

func (t *Trainer) checkGD(theta0 []float64, gs *GDSettings) error {
	if len(theta0) != t.Len() {
		return fmt.Errorf("train: theta0 has length %d, want %d", len(theta0), t.Len())
	}
	for i, x := range theta0 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("train: theta0[%d] = %g, want finite weights", i, x)
		}
	}
	if !(gs.LR > 0) || math.IsInf(gs.LR, 0) {
		return fmt.Errorf("train: learning rate = %g, want a finite η > 0", gs.LR)
	}
	if gs.Steps < 1 {
		return fmt.Errorf("train: Steps = %d, want ≥ 1", gs.Steps)
	}
	// The defaults of the output grid are flow's (flow.RunSettings.Resolve).
	rs := t.resolve(flow.RunSettings{Samples: gs.Samples, Times: gs.Times, DenseBytes: gs.KeepBytes})
	gs.Samples, gs.KeepBytes = rs.Samples, rs.DenseBytes
	if gs.Times == nil && gs.Samples < 2 {
		return fmt.Errorf("train: Samples = %d, want S ≥ 2 output times (0: %d)", gs.Samples, flow.DefaultSamples)
	}
	for i, tt := range gs.Times {
		if !(tt >= 0 && tt <= t.Time(gs.LR, gs.Steps)) || (i > 0 && tt < gs.Times[i-1]) {
			return fmt.Errorf("train: Times[%d] = %g, want increasing times in [0, 2ητ·Steps = %g]", i, tt, t.Time(gs.LR, gs.Steps))
		}
	}
	return nil
}

// batches yields the minibatches of SGD (nil batches for full-batch
// descent).
type batches struct {
	p, size, epoch, pos int
	seed                uint64
	perm, batch         []int32
}

func (t *Trainer) newBatches() *batches {
	b := &batches{p: t.cfg.P, size: t.cfg.Batch, seed: t.cfg.Seed, epoch: -1}
	if b.size > 0 {
		b.perm = make([]int32, b.p)
	}
	return b
}

// setBatches is the random stream of the minibatch order.
const setBatches seqSet = 8

func (b *batches) next() []int32 {
	if b.size == 0 {
		return nil
	}
	if b.epoch < 0 || b.pos == b.p {
		b.epoch++
		b.pos = 0
		b.shuffle()
	}
	end := min(b.pos+b.size, b.p)
	b.batch = b.perm[b.pos:end]
	b.pos = end
	return b.batch
}

// shuffle draws the order of the sequences in the current epoch from the
// data seed.
func (b *batches) shuffle() {
	rng := rand.New(rand.NewPCG(b.seed, stream(setBatches, b.epoch)))
	for i := range b.perm {
		b.perm[i] = int32(i)
	}
	rng.Shuffle(b.p, func(i, j int) { b.perm[i], b.perm[j] = b.perm[j], b.perm[i] })
}

// restore sets the minibatches to where a descent saved them: pos
// sequences into epoch (−1: none drawn yet).
func (b *batches) restore(epoch, pos int) {
	if b.size == 0 || epoch < 0 {
		return
	}
	b.epoch, b.pos = epoch, pos
	b.shuffle()
}
