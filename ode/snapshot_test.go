package ode

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
)

// errKilled stands for a process killed after a checkpoint was written.
var errKilled = errors.New("killed")

// TestResumeEqualsUninterrupted: a solve stopped after the checkpoint of
// about half its steps and resumed from it (a new Problem value, its
// preconditioner new, as in another process) returns what the solve that
// was not stopped returns, bit for bit: final state, output times, events,
// the counts of work, and the dense Solution at every queried time, for
// Auto (DOP853, switching to ROCK4 on this stiff chain, whose Solution
// thins ROCK4's steps) and BDF (dense LU and GMRES with a preconditioner,
// its Solution thinned to the kept knots).
func TestResumeEqualsUninterrupted(t *testing.T) {
	type solveCase struct {
		method Method
		p      func() Problem
		limit  int
	}
	cases := map[string]solveCase{
		"Auto":         {Auto, func() Problem { p, _ := stiffChain(40, 3); return p }, 1 << 17},
		"Auto dropped": {Auto, func() Problem { p, _ := stiffChain(40, 3); return p }, 3000},
		"BDF dense LU": {BDF, func() Problem { return bdfSolutionCases(3)["dense LU"] }, 3000},
		"BDF GMRES":    {BDF, func() Problem { return bdfSolutionCases(3)["GMRES"] }, 3000},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			teval := make([]float64, 101)
			for i := range teval {
				teval[i] = 3 * float64(i) / 100
			}
			settings := func() Settings {
				return Settings{Method: c.method, RTol: 1e-8, ATol: 1e-10, TEval: teval, Dense: true, DenseLimit: c.limit,
					Events: []Event{{Func: func(_ float64, y []float64) float64 { return y[0] - 0.05 }}}}
			}
			want, err := Solve(context.Background(), c.p(), settings())
			if err != nil {
				t.Fatal(err)
			}
			if want.Stats.Steps < 40 || (c.method == Auto && want.Stats.Switches == 0) {
				t.Fatalf("%d steps, %d switches: too few to test", want.Stats.Steps, want.Stats.Switches)
			}
			var saved bytes.Buffer
			s := settings()
			steps := 0
			s.Checkpoint = func(c *Checkpoint) error {
				if steps++; steps < want.Stats.Steps/2 {
					return nil
				}
				if err := c.Save(&saved); err != nil {
					return err
				}
				return errKilled
			}
			if _, err := Solve(context.Background(), c.p(), s); !errors.Is(err, errKilled) {
				t.Fatalf("the stopped solve returned %v", err)
			}
			sn, err := ReadSnapshot(bytes.NewReader(saved.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if !(sn.T > 0 && sn.T < 3) {
				t.Fatalf("snapshot at t = %g", sn.T)
			}
			s = settings()
			s.Resume = sn
			got, err := Solve(context.Background(), c.p(), s)
			if err != nil {
				t.Fatal(err)
			}
			if (want.Solution == nil) != (c.limit == 3000 && c.method == Auto) {
				t.Fatalf("the Solution kept: %v", want.Solution != nil)
			}
			sameResult(t, got, want)
		})
	}
}

// sameResult compares two results bit for bit, their dense Solutions at
// 997 times over the solve.
func sameResult(t *testing.T, got, want *Result) {
	t.Helper()
	if got.T != want.T || !reflect.DeepEqual(got.Y, want.Y) || !reflect.DeepEqual(got.TEval, want.TEval) ||
		!reflect.DeepEqual(got.YEval, want.YEval) {
		t.Fatalf("resumed solve ends at t = %v with other states than the uninterrupted one (t = %v)", got.T, want.T)
	}
	if !reflect.DeepEqual(got.Events, want.Events) || len(want.Events) == 0 {
		t.Errorf("events %v, want %v", got.Events, want.Events)
	}
	if !reflect.DeepEqual(got.Stats, want.Stats) {
		t.Errorf("stats %+v, want %+v", got.Stats, want.Stats)
	}
	if (got.Solution == nil) != (want.Solution == nil) {
		t.Fatalf("a Solution kept: %v, want %v", got.Solution != nil, want.Solution != nil)
	}
	if want.Solution == nil {
		return
	}
	a, b := make([]float64, len(got.Y)), make([]float64, len(got.Y))
	for i := 0; i <= 996; i++ {
		tt := want.T * float64(i) / 996
		if _, err := got.Solution.At(a, tt); err != nil {
			t.Fatal(err)
		}
		want.Solution.At(b, tt)
		for j := range a {
			if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
				t.Fatalf("Solution.At(%g)[%d] = %v, want %v", tt, j, a[j], b[j])
			}
		}
	}
}

// TestReadSnapshotRefusesDamage: a snapshot cut short, or of another
// method, is refused with an error, not used.
func TestReadSnapshotRefusesDamage(t *testing.T) {
	p, _ := stiffChain(10, 1)
	var saved bytes.Buffer
	s := Settings{Method: BDF, Dense: true, Checkpoint: func(c *Checkpoint) error {
		if saved.Len() == 0 {
			return c.Save(&saved)
		}
		return nil
	}}
	if _, err := Solve(context.Background(), p, s); err != nil {
		t.Fatal(err)
	}
	b := saved.Bytes()
	if _, err := ReadSnapshot(bytes.NewReader(b[:len(b)-9])); !errors.Is(err, errSnapshot) {
		t.Errorf("a truncated snapshot read with error %v", err)
	}
	sn, err := ReadSnapshot(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Solve(context.Background(), p, Settings{Method: Auto, Dense: true, Resume: sn}); err == nil {
		t.Errorf("a BDF snapshot resumed an Auto solve")
	}
}
