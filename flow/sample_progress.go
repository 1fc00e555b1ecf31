package flow

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
)

// samplingFormat is the version of the encoding SamplingProgress.Save
// writes.
const samplingFormat = 1

const samplingMagic = "linattn/flow samples"

// SamplingProgress is the sampling of a run's output times on its thinned
// continuous extension (Trajectory.Sample's replays, which at large D
// take as long as the integration) as far as it has gone: the output
// times, and the loss, the test losses and the states kept at those
// sampled so far (RunSettings.SamplingCheckpoint). Read back
// (ReadSamplingProgress), it lets a run killed while it sampled take
// those samples rather than make them again (RunSettings.SamplingResume).
type SamplingProgress struct {
	times  []float64
	kept   []int // the output times whose states are kept; nil: all
	stride int   // values of a state
	tests  bool  // whether the test losses are sampled with the loss

	done   []bool // by output time
	loss   []float64
	test   [3][]float64
	states []float64 // the rows of kept

	mu   sync.Mutex // the groups' goroutines mark done and save under it
	hook func(*SamplingProgress) error
}

// Done returns the number of output times sampled so far, and of all.
func (p *SamplingProgress) Done() (sampled, total int) {
	for _, d := range p.done {
		if d {
			sampled++
		}
	}
	return sampled, len(p.times)
}

// row returns the row of output time i in states, or −1 when its state is
// not kept.
func (p *SamplingProgress) row(i int) int {
	if p.kept == nil {
		return i
	}
	if r, ok := slices.BinarySearch(p.kept, i); ok {
		return r
	}
	return -1
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
	fw := newFloatWriter(w, samplingMagic)
	fw.put(samplingFormat, float64(p.stride), float64(len(p.times)), b2f(p.tests), b2f(p.kept != nil))
	fw.put(p.times...)
	if p.kept != nil {
		fw.put(float64(len(p.kept)))
		for _, i := range p.kept {
			fw.put(float64(i))
		}
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
		fw.put(float64(lo), float64(hi))
		fw.put(p.loss[lo:hi]...)
		if p.tests {
			for j := range p.test {
				fw.put(p.test[j][lo:hi]...)
			}
		}
		for i := lo; i < hi; i++ {
			if r := p.row(i); r >= 0 {
				fw.put(p.states[r*p.stride : (r+1)*p.stride]...)
			}
		}
		lo = hi
	}
	fw.put(-1)
	return fw.flush()
}

// ReadSamplingProgress reads what SamplingProgress.Save wrote. Errors wrap
// ErrCheckpoint.
func ReadSamplingProgress(r io.Reader) (*SamplingProgress, error) {
	fr, err := newFloatReader(r, samplingMagic, "the samples of a flow")
	if err != nil {
		return nil, err
	}
	if f := fr.get(); fr.err == nil && f != samplingFormat {
		return nil, fmt.Errorf("%w: samples of format %g, this program reads %d", ErrCheckpoint, f, samplingFormat)
	}
	stride, nt := fr.count(1<<32), fr.count(1<<24)
	tests, hasKept := fr.get() != 0, fr.get() != 0
	p := &SamplingProgress{stride: stride, tests: tests, times: make([]float64, 0, nt)}
	for i := 0; i < nt && fr.err == nil; i++ {
		p.times = append(p.times, fr.get())
	}
	if hasKept {
		for range fr.count(nt) {
			p.kept = append(p.kept, fr.count(nt-1))
		}
	}
	if fr.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, fr.err)
	}
	p.alloc()
	for {
		lo := fr.get()
		if fr.err != nil || lo == -1 {
			break
		}
		hi := fr.get()
		if !(lo >= 0 && lo < hi && hi <= float64(nt) && lo == math.Trunc(lo) && hi == math.Trunc(hi)) {
			return nil, fmt.Errorf("%w: its samples are damaged (times %g to %g of %d)", ErrCheckpoint, lo, hi, nt)
		}
		p.readRun(int(lo), int(hi), fr.get)
	}
	if fr.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, fr.err)
	}
	return p, nil
}

// readRun reads the values of the sampled times [lo, hi) with get.
func (p *SamplingProgress) readRun(lo, hi int, get func() float64) {
	for i := lo; i < hi; i++ {
		p.loss[i] = get()
	}
	if p.tests {
		for j := range p.test {
			for i := lo; i < hi; i++ {
				p.test[j][i] = get()
			}
		}
	}
	for i := lo; i < hi; i++ {
		if r := p.row(i); r >= 0 {
			for c := range p.stride {
				p.states[r*p.stride+c] = get()
			}
		}
		p.done[i] = true
	}
}

// alloc gives p the arrays of its output times, kept states and tests.
func (p *SamplingProgress) alloc() {
	nt, rows := len(p.times), len(p.times)
	if p.kept != nil {
		rows = len(p.kept)
	}
	p.done, p.loss, p.states = make([]bool, nt), make([]float64, nt), make([]float64, rows*p.stride)
	if p.tests {
		for j := range p.test {
			p.test[j] = make([]float64, nt)
		}
	}
}

// newSamplingProgress returns the progress of a sampling at times that
// keeps the states at kept (nil: all) of stride values, with the test
// losses when tests is set, with its arrays allocated (the sampling's
// output), and takes the samples of resume where it is of the same
// sampling (nil, or of another: none).
func newSamplingProgress(times []float64, kept []int, stride int, tests bool, resume *SamplingProgress) *SamplingProgress {
	p := &SamplingProgress{times: times, kept: kept, stride: stride, tests: tests}
	p.alloc()
	if resume.sameSampling(p) {
		copy(p.done, resume.done)
		copy(p.loss, resume.loss)
		copy(p.states, resume.states)
		for j := range p.test {
			copy(p.test[j], resume.test[j])
		}
	}
	return p
}

// sameSampling reports whether p is not nil and samples the output times
// of q bit for bit, with the same states kept, of the same length, and
// the same tests.
func (p *SamplingProgress) sameSampling(q *SamplingProgress) bool {
	if p == nil || p.stride != q.stride || p.tests != q.tests || !slices.Equal(p.kept, q.kept) || len(p.times) != len(q.times) {
		return false
	}
	for i, t := range p.times {
		if math.Float64bits(t) != math.Float64bits(q.times[i]) {
			return false
		}
	}
	return true
}
