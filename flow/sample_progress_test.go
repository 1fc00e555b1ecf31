package flow

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/ode"
	"github.com/linattn/linattn/ode/replay"
)

// TestSamplingResume: a run stopped while it sampled its thinned BDF
// extension (the separate model, D = 6, 301 samples with the test
// losses), its samples so far saved (SamplingProgress.Save) and read back,
// run again with them returns the samples of the run that was not
// stopped, bit for bit, and takes fewer steps again; canceled while it
// samples, it stops and saves once more, and resumes so too. The samples of
// another sampling (other output times) are not taken, and a damaged or
// cut file is refused.
func TestSamplingResume(t *testing.T) {
	t.Parallel()
	s, y0 := powerLawSix(t)
	// Label noise, so that the run computes the in-context test loss.
	noisy, err := s.Data.WithTasks(law.Tasks{ICL: 1, Noise: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	s = newSys(t, noisy, s.Model)
	// Without the block preconditioner of the paper's task, the bound it
	// sets: the extension kept is thinned.
	rs := RunSettings{Samples: 301, Method: ode.BDF, DenseBytes: BDFKeptStates * 301 * s.Len() * 8}
	whole, err := s.Run(context.Background(), y0, rs)
	if err != nil || !replay.Thinned(whole.dense) {
		t.Fatalf("%v; want a thinned extension, so that sampling replays", err)
	}
	// Sample, on no times and on the output times (the loss of the run).
	if st, l, err := whole.Sample(nil); err != nil || len(st)+len(l) != 0 {
		t.Errorf("Sample(nil): %d states, %d losses, %v; want none and no error", len(st), len(l), err)
	}
	if _, l, err := whole.Sample(whole.Times); err != nil || !slices.Equal(l, whole.Loss) {
		t.Errorf("Sample at the output times: %v, or the loss differs from the run's", err)
	}
	// Stopped after about half the groups: the samples then, saved.
	groups := len(whole.sampleGroups(whole.Times, 1)) - 1
	var saved bytes.Buffer
	calls := 0
	stop := errors.New("stopped")
	rs.SamplingCheckpoint = func(p *SamplingProgress) error {
		if calls++; calls < groups/2 {
			return nil
		}
		if saved.Len() == 0 { // the other goroutine may finish a group after
			if err := p.Save(&saved); err != nil {
				t.Fatal(err)
			}
		}
		return stop
	}
	if _, err := s.Run(context.Background(), y0, rs); !errors.Is(err, stop) {
		t.Fatalf("the stopped run returned %v, want the hook's error", err)
	}
	resume, err := ReadSamplingProgress(bytes.NewReader(saved.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got, nt := resume.Done(); got == 0 || got >= nt || nt != len(whole.Times) {
		t.Fatalf("saved %d samples of %d, want some of %d", got, nt, len(whole.Times))
	}
	rs.SamplingCheckpoint, rs.SamplingResume = nil, resume
	again, err := s.Run(context.Background(), y0, rs)
	if err != nil {
		t.Fatal(err)
	}
	sameSamples(t, "resumed", again, whole)
	if a, w := again.replayStats().Steps, whole.replayStats().Steps; a >= w {
		t.Errorf("the resumed sampling took %d steps again, the whole one %d: want fewer", a, w)
	}

	// Canceled while it samples: it stops, and saves the samples made.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var atCancel bytes.Buffer
	calls = 0
	rs.SamplingResume = nil
	rs.SamplingCheckpoint = func(p *SamplingProgress) error {
		if calls++; calls == 2 {
			cancel()
		}
		if ctx.Err() != nil {
			atCancel.Reset()
			return p.Save(&atCancel)
		}
		return nil
	}
	if tr, err := s.Run(ctx, y0, rs); !errors.Is(err, context.Canceled) || tr != nil {
		t.Fatalf("canceled while it sampled: %v, want context.Canceled and no Trajectory", err)
	}
	if rs.SamplingResume, err = ReadSamplingProgress(&atCancel); err != nil {
		t.Fatal(err)
	}
	if got, nt := rs.SamplingResume.Done(); got == 0 || got == nt {
		t.Fatalf("canceled: saved %d of %d samples", got, nt)
	}
	rs.SamplingCheckpoint = nil
	if again, err = s.Run(context.Background(), y0, rs); err != nil {
		t.Fatal(err)
	}
	sameSamples(t, "resumed after the cancel", again, whole)

	// Another sampling's samples: not taken.
	other := RunSettings{Samples: 300, Method: ode.BDF, SamplingResume: resume}
	got, err := s.Run(context.Background(), y0, other)
	if err != nil {
		t.Fatal(err)
	}
	other.SamplingResume = nil
	want, err := s.Run(context.Background(), y0, other)
	if err != nil {
		t.Fatal(err)
	}
	sameSamples(t, "another sampling's", got, want)

	for name, b := range map[string][]byte{
		"cut":     saved.Bytes()[:saved.Len()-5],
		"damaged": append([]byte("linattn/flow samples"), bytes.Repeat([]byte{0xff}, 64)...),
		"foreign": []byte("linattn/flow checkpoint"),
	} {
		if _, err := ReadSamplingProgress(bytes.NewReader(b)); !errors.Is(err, ErrCheckpoint) {
			t.Errorf("%s: %v, want ErrCheckpoint", name, err)
		}
	}
}

// sameSamples checks got's times, loss, states and test losses against
// want's, bit for bit.
func sameSamples(t *testing.T, name string, got, want *Trajectory) {
	t.Helper()
	for _, c := range []struct {
		what      string
		got, want []float64
	}{
		{"times", got.Times, want.Times}, {"loss", got.Loss, want.Loss}, {"states", got.States, want.States},
		{"in-context test loss", got.TestICL, want.TestICL}, {"in-weight test loss", got.TestIWL, want.TestIWL},
		{"in-distribution test loss", got.TestIDG, want.TestIDG},
	} {
		if len(c.got) != len(c.want) || (len(c.want) == 0 && c.what != "in-weight test loss" && c.what != "in-distribution test loss") {
			t.Fatalf("%s: %d %s, want %d (not none)", name, len(c.got), c.what, len(c.want))
		}
		for i, x := range c.want {
			if math.Float64bits(c.got[i]) != math.Float64bits(x) {
				t.Fatalf("%s: %s[%d] = %v, want %v", name, c.what, i, c.got[i], x)
			}
		}
	}
}
