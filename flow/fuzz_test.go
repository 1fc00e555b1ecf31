package flow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/linattn/linattn/internal/floatio"
	"github.com/linattn/linattn/internal/fuzzseed"
	"github.com/linattn/linattn/ode"
)

// fuzzRuns are the runs of the checkpoint corpus: the paper's example
// (separate model, D = 4) with Auto and BDF sampling their continuous
// extension, and BDF keeping every 7th state (the record of a run that
// thins its states; the paper's task has no test losses to record).
var fuzzRuns = map[string]RunSettings{
	"auto":    {T: 60, Samples: 40, Method: ode.Auto},
	"bdf":     {T: 60, Samples: 40, Method: ode.BDF},
	"thinned": {T: 60, Samples: 40, Method: ode.BDF, StateEvery: 7},
}

// TestSeeds writes (with -seeds) the corpora of FuzzReadCheckpoint (the
// checkpoints of fuzzRuns after their first, a middle and their last
// accepted step) and FuzzReadSamplingProgress (the samples of a run that
// samples its thinned extension, part way and whole); and checks that the
// valid ones read, and the checkpoints resume.
func TestSeeds(t *testing.T) {
	s, y0 := paperExample(t, Separate, 3)
	for name, rs := range fuzzRuns {
		var saved [][]byte
		rs.Checkpoint = func(ck *Checkpoint) error {
			var b bytes.Buffer
			if err := ck.Save(&b); err != nil {
				return err
			}
			saved = append(saved, b.Bytes())
			return nil
		}
		if _, err := s.Run(context.Background(), y0, rs); err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{0, len(saved) / 2, len(saved) - 1} {
			fuzzseed.Write(t, "FuzzReadCheckpoint", fmt.Sprintf("valid-%s-%d", name, k), saved[k])
		}
	}
	if *fuzzseed.Update {
		ps, py := powerLawSix(t)
		var saved [][]byte
		rs := RunSettings{Samples: 61, Method: ode.BDF, DenseBytes: 1 << 16, SamplingCheckpoint: func(p *SamplingProgress) error {
			var b bytes.Buffer
			if err := p.Save(&b); err != nil {
				return err
			}
			saved = append(saved, b.Bytes())
			return nil
		}}
		if _, err := ps.Run(context.Background(), py, rs); err != nil || len(saved) < 2 {
			t.Fatalf("%v; %d samplings saved, want a thinned extension", err, len(saved))
		}
		fuzzseed.Write(t, "FuzzReadSamplingProgress", "valid-first", saved[0])
		fuzzseed.Write(t, "FuzzReadSamplingProgress", "valid-last", saved[len(saved)-1])
	}
	// The damage that made ReadSamplingProgress allocate what the file
	// claims: 2³² values per state at 2²⁴ output times, in 40 bytes.
	var claim bytes.Buffer
	fw := floatio.NewWriter(&claim, samplingMagic)
	fw.Put(samplingFormat, 1<<32, 1<<24)
	fw.Flush()
	fuzzseed.Write(t, "FuzzReadSamplingProgress", "claims-2^56-values", claim.Bytes())
	// damaged-time-past-the-end (FuzzReadCheckpoint) is a checkpoint whose
	// snapshot's time the fuzzing moved to 2·10⁴⁰, past the run's end,
	// with a step going back: its resume never ended.
	if err := resumeCheckpoint(s, y0, fuzzseed.Arg(t, "FuzzReadCheckpoint", "damaged-time-past-the-end")); err == nil {
		t.Error("the checkpoint past the end resumed")
	}
	for name, b := range fuzzseed.Valid(t, "FuzzReadCheckpoint") {
		if err := resumeCheckpoint(s, y0, b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, b := range fuzzseed.Valid(t, "FuzzReadSamplingProgress") {
		if _, err := ReadSamplingProgress(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// resumeCheckpoint reads b and resumes the run of s from y0 with it,
// within 10 seconds, with the settings of the corpus's run of the same
// kind.
func resumeCheckpoint(s *System, y0 []float64, b []byte) error {
	rs, err := ReadCheckpoint(bytes.NewReader(b))
	if err != nil {
		return err
	}
	settings := fuzzRuns["auto"]
	switch {
	case rs.record.thinned():
		settings = fuzzRuns["thinned"]
	case rs.snapshot != nil && rs.snapshot.Method() == ode.BDF.Name():
		settings = fuzzRuns["bdf"]
	}
	settings.Resume = rs
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = s.Run(ctx, y0, settings)
	if ctx.Err() != nil {
		return errHang
	}
	return err
}

var errHang = errors.New("hang: the resumed run ran for 10 s")

// FuzzReadCheckpoint: any bytes are either refused by ReadCheckpoint with
// an error wrapping ErrCheckpoint, in one line, or read into a checkpoint
// from which the run resumes without a panic or a hang, to its end or to
// an error.
func FuzzReadCheckpoint(f *testing.F) {
	s, y0 := paperExample(f, Separate, 3)
	f.Fuzz(func(t *testing.T, data []byte) {
		err := resumeCheckpoint(s, y0, data)
		switch {
		case err == nil:
			return
		case errors.Is(err, errHang):
			t.Fatal(err)
		}
		if _, rerr := ReadCheckpoint(bytes.NewReader(data)); rerr != nil && !errors.Is(rerr, ErrCheckpoint) {
			t.Fatalf("ReadCheckpoint's error %v does not wrap ErrCheckpoint", rerr)
		}
		fuzzseed.OneLine(t, err)
	})
}

// FuzzReadSamplingProgress: any bytes are either refused with an error
// wrapping ErrCheckpoint, in one line, or read into samples whose Save
// reads back and saves the same bytes again.
func FuzzReadSamplingProgress(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadSamplingProgress(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("error %v does not wrap ErrCheckpoint", err)
			}
			fuzzseed.OneLine(t, err)
			return
		}
		var b1, b2 bytes.Buffer
		if err := p.Save(&b1); err != nil {
			t.Fatal(err)
		}
		q, err := ReadSamplingProgress(bytes.NewReader(b1.Bytes()))
		if err != nil {
			t.Fatalf("what Save wrote does not read: %v", err)
		}
		if err := q.Save(&b2); err != nil || !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("read → save → read → save changed the bytes (%v)", err)
		}
		if d1, n1 := p.Done(); d1 > n1 {
			t.Fatalf("%d of %d samples done", d1, n1)
		}
		// Taken by a sampling of the same times, it fills that many.
		if d1, _ := p.Done(); p.stride*len(p.times) < 1<<22 {
			r := newSamplingProgress(p.times, p.stride, p)
			if d2, _ := r.Done(); d2 != d1 {
				t.Fatalf("resumed %d samples of %d", d2, d1)
			}
		}
	})
}
