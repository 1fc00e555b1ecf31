package layout

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/output"
)

// TestSolverWithoutMethod: a Trajectory that resolved no method (one
// not made by Run, such as NewTrajectory's) describes its solver with no
// method's name rather than panicking.
func TestSolverWithoutMethod(t *testing.T) {
	t.Parallel()
	tr := flow.NewTrajectory(nil)
	tr.FinalT = 2
	if m := Solver(tr); m.Method != "" || m.TEnd != 2 {
		t.Errorf("Solver = %+v, want no method and t_end 2", m)
	}
}

// TestRunTests: the test losses Run writes are those the law
// defines. Under label noise alone (every sequence in-context, no fixed
// tasks) the run has an in-context test and no other: test_icl is there
// and, as its test set is the training law itself, equals the loss at
// every time (to rounding); test_iwl and test_idg, which fixed tasks
// define, are absent rather than NaN (issue 45: export refused the NaN
// and linattn run -noise 0.1 wrote nothing). Under fixed tasks all three
// are written, finite.
func TestRunTests(t *testing.T) {
	t.Parallel()
	base, err := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{N: 31})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		tasks law.Tasks
		want  []string
	}{
		{"noise", law.Tasks{Noise: 0.1}, []string{output.TestICL}},
		{"fixed", law.Tasks{ICL: 0.5, Noise: 0.1, Fixed: law.FixedTasks(4, 2, 3)}, []string{output.TestICL, output.TestIWL, output.TestIDG}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data, err := base.WithTasks(c.tasks)
			if err != nil {
				t.Fatal(err)
			}
			s, err := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: 4, R: 1, Tau: 1})
			if err != nil {
				t.Fatal(err)
			}
			y0, _ := s.Init(0.1, 3)
			tr, err := s.Run(context.Background(), y0, flow.RunSettings{T: 500, Samples: 11})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range Run(s, tr) {
				if strings.HasPrefix(a.Name, "test_") {
					got = append(got, a.Name)
					for i, x := range a.Float {
						if math.IsNaN(x) || math.IsInf(x, 0) {
							t.Fatalf("%s[%d] = %g", a.Name, i, x)
						}
					}
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("test arrays %v, want %v", got, c.want)
			}
			if c.name != "noise" {
				return
			}
			for i, l := range tr.Loss {
				if math.Abs(tr.TestICL[i]-l) > 1e-12*l {
					t.Errorf("t = %g: test_icl %.15g, loss %.15g", tr.Times[i], tr.TestICL[i], l)
				}
			}
		})
	}
}
