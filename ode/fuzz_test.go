package ode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/linattn/linattn/internal/fuzzseed"
)

// fuzzProblem is a small mildly stiff chain (λ from 1 to 50) with an
// event and output times, which every method that can checkpoint solves
// in a few hundred steps.
func fuzzProblem() (Problem, Settings) {
	const n = 6
	f := func(t float64, y, dy []float64) {
		for i := range y {
			dy[i] = -(1 + 49*float64(i*i)/float64((n-1)*(n-1))) * y[i]
			if i+1 < n {
				dy[i] += math.Sin(y[i+1])
			}
		}
		dy[0] += 0.5 * math.Sin(3*t)
	}
	y0 := make([]float64, n)
	for i := range y0 {
		y0[i] = 1 / float64(i+1)
	}
	teval := []float64{0, 0.25, 0.5, 1, 1.5, 2}
	return Problem{Func: f, T0: 0, T1: 2, Y0: y0}, Settings{RTol: 1e-6, ATol: 1e-8, TEval: teval, Dense: true, DenseLimit: 400,
		Events: []Event{{Func: func(_ float64, y []float64) float64 { return y[0] - 0.3 }}}}
}

// fuzzMethods are the methods that can checkpoint, by their names in a
// snapshot.
var fuzzMethods = map[string]Method{DOP853.Name(): DOP853, Tsit5.Name(): Tsit5, ROCK4.Name(): ROCK4, BDF.Name(): BDF, Auto.Name(): Auto}

// TestSeeds writes (with -seeds) the corpus of FuzzReadSnapshot: the
// snapshots of fuzzProblem's solve by each method after its first, a
// middle and its last accepted step; and checks that the valid ones read
// and resume.
func TestSeeds(t *testing.T) {
	for name, m := range fuzzMethods {
		p, s := fuzzProblem()
		s.Method = m
		var snaps [][]byte
		s.Checkpoint = func(c *Checkpoint) error {
			var b bytes.Buffer
			if err := c.Save(&b); err != nil {
				return err
			}
			snaps = append(snaps, b.Bytes())
			return nil
		}
		if _, err := Solve(context.Background(), p, s); err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{0, len(snaps) / 2, len(snaps) - 1} {
			fuzzseed.Write(t, "FuzzReadSnapshot", fmt.Sprintf("valid-%s-%d", name, k), snaps[k])
		}
	}
	// The damages the fuzzing found, each of which made the resumed solve
	// panic or never end before ReadSnapshot and resume refused it: a BDF
	// snapshot whose step record, output count, event, knot's setup or
	// time is one no solve leaves.
	damages := map[string]func(c *Checkpoint) (undo func()){
		"step-kind": func(c *Checkpoint) func() {
			l := &c.r.res.Solution.loc[0]
			was := l.vecs
			l.vecs = -7
			return func() { l.vecs = was }
		},
		"output-count": func(c *Checkpoint) func() {
			was := c.r.iEval
			c.r.iEval = -3
			return func() { c.r.iEval = was }
		},
		"event-index": func(c *Checkpoint) func() {
			was := c.r.res.Events
			c.r.res.Events = append(slices.Clip(was), EventRecord{Index: 9, Y: c.r.in.y})
			return func() { c.r.res.Events = was }
		},
		"knot-setup": func(c *Checkpoint) func() { // FuzzReadCheckpoint found it: the replay set the preconditioner up at an empty state
			kn := &c.r.res.Solution.bdf.knots[len(c.r.res.Solution.bdf.knots)-1]
			was := kn.sc.setup.serial
			kn.sc.setup.serial = was + 1000
			return func() { kn.sc.setup.serial = was }
		},
		"past-the-end": func(c *Checkpoint) func() {
			t, h := c.r.t, c.r.h
			c.r.t, c.r.h = 1e40, -1e38
			return func() { c.r.t, c.r.h = t, h }
		},
	}
	for name, damage := range damages {
		p, s := fuzzProblem()
		s.Method = BDF
		var b bytes.Buffer
		s.Checkpoint = func(c *Checkpoint) error {
			if b.Len() > 0 || c.T < 0.5 {
				return nil
			}
			undo := damage(c)
			defer undo()
			return c.Save(&b)
		}
		if _, err := Solve(context.Background(), p, s); err != nil {
			t.Fatal(err)
		}
		fuzzseed.Write(t, "FuzzReadSnapshot", "damaged-"+name, b.Bytes())
		if err := resumeSnapshot(b.Bytes()); err == nil {
			t.Errorf("damaged %s: resumed", name)
		}
	}
	for name, b := range fuzzseed.Valid(t, "FuzzReadSnapshot") {
		if err := resumeSnapshot(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// resumeSnapshot reads b and resumes fuzzProblem's solve from it, within
// 10 seconds.
func resumeSnapshot(b []byte) error {
	sn, err := ReadSnapshot(bytes.NewReader(b))
	if err != nil {
		return err
	}
	m, ok := fuzzMethods[sn.method]
	if !ok {
		return fmt.Errorf("%w: method %q", errSnapshot, sn.method)
	}
	p, s := fuzzProblem()
	s.Method, s.Resume = m, sn
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = Solve(ctx, p, s)
	if ctx.Err() != nil {
		return fmt.Errorf("hang: the resumed solve ran for 10 s")
	}
	return err
}

// FuzzReadSnapshot: any bytes are either refused by ReadSnapshot with an
// error that says the snapshot is corrupt, or read into a snapshot from
// which the solve resumes without a panic or a hang, to its end or to an
// error.
func FuzzReadSnapshot(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		err := resumeSnapshot(data)
		if err == nil {
			return
		}
		if msg := err.Error(); len(msg) > 9 && msg[:4] == "hang" {
			t.Fatal(err)
		}
		if _, rerr := ReadSnapshot(bytes.NewReader(data)); rerr != nil && !errors.Is(rerr, errSnapshot) {
			t.Fatalf("ReadSnapshot's error %v does not wrap errSnapshot", rerr)
		}
		fuzzseed.OneLine(t, err)
	})
}
