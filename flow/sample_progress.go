package flow

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/linattn/linattn/internal/floatio"
)

// samplingFormat is the version of the encoding SamplingProgress.Save
// writes: 2 has no states thinned or test losses (fromSteps makes those).
const samplingFormat = 2

const samplingMagic = "linattn/flow samples"

// SamplingProgress is the sampling of a run's output times on its thinned
// continuous extension (Trajectory.Sample's replays, which at large D
// take as long as the integration) as far as it has gone: the output
// times, and the loss and the states at those sampled so far
// (RunSettings.SamplingCheckpoint). Read back
// (ReadSamplingProgress), it lets a run killed while it sampled take
// those samples rather than make them again (RunSettings.SamplingResume).
type SamplingProgress struct {
	times  []float64
	stride int // values of a state

	done   []bool // by output time
	loss   []float64
	states []float64 // by output time

	// runs are the samples of a progress read back
	// (ReadSamplingProgress), which has no arrays of its own: a file
	// costs no more memory than it holds, whatever it claims.
	runs []sampleRun

	mu   sync.Mutex // the groups' goroutines mark done and save under it
	hook func(*SamplingProgress) error
}

// sampleRun is a run of sampled output times [lo, hi) read back, with
// their loss and states.
type sampleRun struct {
	lo, hi       int
	loss, states []float64
}

// Done returns the number of output times sampled so far, and of all.
func (p *SamplingProgress) Done() (sampled, total int) {
	p.eachRun(func(r sampleRun) { sampled += r.hi - r.lo })
	return sampled, len(p.times)
}

// eachRun calls fn with every maximal run of sampled output times, in
// order (a progress read back: its runs as read).
func (p *SamplingProgress) eachRun(fn func(sampleRun)) {
	if p.done == nil {
		for _, r := range p.runs {
			fn(r)
		}
		return
	}
	for lo := 0; lo < len(p.done); {
		if !p.done[lo] {
			lo++
			continue
		}
		hi := lo
		for hi < len(p.done) && p.done[hi] {
			hi++
		}
		fn(sampleRun{lo, hi, p.loss[lo:hi], p.states[lo*p.stride : hi*p.stride]})
		lo = hi
	}
}

// finish marks the output times [lo, hi) sampled and calls the hook.
func (p *SamplingProgress) finish(lo, hi int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := lo; i < hi; i++ {
		p.done[i] = true
	}
	if p.hook == nil {
		return nil
	}
	return p.hook(p)
}

// allDone reports whether the output times [lo, hi) are sampled.
func (p *SamplingProgress) allDone(lo, hi int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !slices.Contains(p.done[lo:hi], false)
}

// Save writes the samples made so far (numbers as little-endian float64
// bits, so they come back bit for bit): the output times, then each run
// of sampled times with its values. It is called within the hook, which
// the goroutines that sample call one at a time; it reads only the
// values of sampled times, which no goroutine writes any more.
func (p *SamplingProgress) Save(w io.Writer) error {
	fw := floatio.NewWriter(w, samplingMagic)
	fw.Put(samplingFormat, float64(p.stride), float64(len(p.times)))
	fw.Put(p.times...)
	p.eachRun(func(r sampleRun) {
		fw.Put(float64(r.lo), float64(r.hi))
		fw.Put(r.loss...)
		fw.Put(r.states...)
	})
	fw.Put(-1)
	return fw.Flush()
}

// ReadSamplingProgress reads what SamplingProgress.Save wrote: runs of
// sampled output times in increasing order, none overlapping. Errors wrap
// ErrCheckpoint.
func ReadSamplingProgress(r io.Reader) (*SamplingProgress, error) {
	fr, err := newFloatReader(r, samplingMagic, "the samples of a flow")
	if err != nil {
		return nil, err
	}
	if f := fr.Get(); fr.Err == nil && f != samplingFormat {
		return nil, fmt.Errorf("%w: samples of format %g, this program reads %d", ErrCheckpoint, f, samplingFormat)
	}
	stride, nt := fr.Count(1<<32), fr.Count(1<<24)
	p := &SamplingProgress{stride: stride, times: fr.Floats(nt)}
	if fr.Err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, fr.Err)
	}
	prev := 0.0
	for {
		lo := fr.Get()
		if fr.Err != nil || lo == -1 {
			break
		}
		hi := fr.Get()
		if !(lo >= prev && lo < hi && hi <= float64(nt) && lo == math.Trunc(lo) && hi == math.Trunc(hi)) {
			return nil, fmt.Errorf("%w: its samples are damaged (times %g to %g of %d)", ErrCheckpoint, lo, hi, nt)
		}
		prev = hi
		r := sampleRun{lo: int(lo), hi: int(hi)}
		r.loss = fr.Floats(r.hi - r.lo)
		r.states = fr.Floats((r.hi - r.lo) * p.stride)
		p.runs = append(p.runs, r)
	}
	if fr.Err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, fr.Err)
	}
	return p, nil
}

// alloc gives p the arrays of its output times and states.
func (p *SamplingProgress) alloc() {
	nt := len(p.times)
	p.done, p.loss, p.states = make([]bool, nt), make([]float64, nt), make([]float64, nt*p.stride)
}

// newSamplingProgress returns the progress of a sampling at times of
// states of stride values, with its arrays allocated (the sampling's
// output), and takes the samples of resume where it is of the same
// sampling (nil, or of another: none).
func newSamplingProgress(times []float64, stride int, resume *SamplingProgress) *SamplingProgress {
	p := &SamplingProgress{times: times, stride: stride}
	p.alloc()
	if resume.sameSampling(p) {
		resume.eachRun(func(r sampleRun) {
			copy(p.loss[r.lo:r.hi], r.loss)
			copy(p.states[r.lo*p.stride:r.hi*p.stride], r.states)
			for i := r.lo; i < r.hi; i++ {
				p.done[i] = true
			}
		})
	}
	return p
}

// sameSampling reports whether p is not nil and samples the output times
// of q bit for bit, with states of the same length.
func (p *SamplingProgress) sameSampling(q *SamplingProgress) bool {
	if p == nil || p.stride != q.stride || len(p.times) != len(q.times) {
		return false
	}
	for i, t := range p.times {
		if math.Float64bits(t) != math.Float64bits(q.times[i]) {
			return false
		}
	}
	return true
}
