package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
)

// DivergenceFactor: gradient descent stops when the loss exceeds
// DivergenceFactor times its initial value (or is not finite): the
// learning rate is then too large for the curvature of the loss.
const DivergenceFactor = 1e4

// GDSettings controls gradient descent.
type GDSettings struct {
	LR    float64 // learning rate η > 0
	Steps int     // number of steps, ≥ 1
	// Keep lists the steps, increasing in [0, Steps], after which the
	// weights are kept; KeepAll keeps them after every step.
	Keep    []int
	KeepAll bool
	// Observer, if not nil, is called before every step k with the loss
	// at θ_k; an error stops the descent there.
	Observer func(step int, loss float64) error
}

// GDResult is the outcome of GD.
type GDResult struct {
	// Steps is the number of steps taken to Final: GDSettings.Steps, or
	// fewer when an error stopped the descent.
	Steps int
	// Loss[k] is the loss at θ_k, k = 0..Steps: the training loss L̂ for
	// full-batch descent; for SGD the loss of the minibatch of step k, and
	// Loss[Steps] the training loss.
	Loss []float64
	// Kept lists the steps whose weights States holds, row-major.
	Kept   []int
	States []float64
	Final  []float64
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
// smaller). It follows the gradient flow of L̂ with t = 2ητ per step. On
// an error (divergence, cancellation) it returns what it computed with
// the error: the descent up to the last weights with a finite loss below
// DivergenceFactor·L̂(θ_0).
func (t *Trainer) GD(ctx context.Context, theta0 []float64, gs GDSettings) (*GDResult, error) {
	if err := t.checkGD(theta0, &gs); err != nil {
		return nil, err
	}
	n := t.Len()
	theta := append([]float64(nil), theta0...)
	prev, grad := make([]float64, n), make([]float64, n)
	res := &GDResult{Loss: make([]float64, 0, gs.Steps+1)}
	keep := gs.Keep
	batches := t.newBatches()
	var loss0 float64
	var err error
	for k := 0; ; k++ {
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
		res.Loss = append(res.Loss, loss)
		res.Steps = k
		if gs.KeepAll || (len(keep) > 0 && keep[0] == k) {
			res.Kept = append(res.Kept, k)
			res.States = append(res.States, theta...)
			if !gs.KeepAll {
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
	}
	res.Final = theta
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
	for i, k := range gs.Keep {
		if k < 0 || k > gs.Steps || (i > 0 && k <= gs.Keep[i-1]) {
			return fmt.Errorf("train: Keep[%d] = %d, want increasing steps in [0, %d]", i, k, gs.Steps)
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
		rng := rand.New(rand.NewPCG(b.seed, stream(setBatches, b.epoch)))
		for i := range b.perm {
			b.perm[i] = int32(i)
		}
		rng.Shuffle(b.p, func(i, j int) { b.perm[i], b.perm[j] = b.perm[j], b.perm[i] })
	}
	end := min(b.pos+b.size, b.p)
	b.batch = b.perm[b.pos:end]
	b.pos = end
	return b.batch
}
