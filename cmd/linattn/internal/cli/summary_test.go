package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/sbinet/npyio/npz"
)

// TestSummaryLossSettled: the separate full layer under fixed tasks (D = 4,
// H = 4, R = 1, c = 0.5, K = 4) has no known least loss, and a run until
// converged stops when its loss has settled, while its value weights still
// grow (docs/math.md, "Least loss"). The summary states the stop rule in one
// sentence with the bound L_lb, names the status "loss settled" (also the
// sidecar's), and prints ‖θ‖ and ‖v‖ at t/10 and at t as the output holds
// them.
func TestSummaryLossSettled(t *testing.T) {
	t.Parallel()
	for _, every := range []string{"1", "7"} {
		summaryLossSettled(t, every)
	}
}

// summaryLossSettled checks the summary of the run with -state-every
// every: with at most every 7th state and the last kept (59, at least a
// third of them), ‖θ‖ and ‖v‖ are those of the first state kept at or
// after t/10 (state_t).
func summaryLossSettled(t *testing.T, every string) {
	out := filepath.Join(t.TempDir(), "run.npz")
	code, stdout, stderr := runCLI(t, "run", "-q", "-layer", "full", "-icl", "0.5", "-tasks", "4", "-samples", "401", "-state-every", every, "-o", out)
	if code != 0 {
		t.Fatalf("-state-every %s: exit %d: %s", every, code, stderr)
	}
	for _, want := range []string{
		"integrated until L − L_lb ≤ 1e-06·(L(0) − L_lb), L_lb = 0.124295 the least loss over all coefficients, or until L moved by less than that over a decade of time [t/10, t]: the loss settled at t = ",
		"note: L_min is not known",
		"note: the loss settled, not the weights: from t = ",
		"; L_lb = 0.1242950755 (gap ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "L − L_min ≤") {
		t.Errorf("summary states the rule with L_min, which is not known:\n%s", stdout)
	}
	if st := sidecarOf(t, out)["meta"].(map[string]any)["status"]; st != "loss settled" {
		t.Errorf("sidecar status %q, want %q", st, "loss settled")
	}
	r, err := npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ts, v := readFloats(t, r, "t"), readFloats(t, r, "v")
	if every == "7" {
		ts = readFloats(t, r, "state_t") // written where states are thinned
		if len(ts) > 59 || 3*len(ts) < 59 || len(v) != 4*len(ts) {
			t.Fatalf("-state-every 7: %d states, want at most 59 (every 7th and the last), at least a third of them", len(ts))
		}
	}
	last := len(ts) - 1
	k := sort.SearchFloat64s(ts, ts[last]/10)
	norm := func(x []float64) float64 { return math.Sqrt(dot(x, x)) }
	va, vb := norm(v[4*k:4*k+4]), norm(v[4*last:])
	want := fmt.Sprintf("from t = %.4g to %.4g, ‖θ‖", ts[k], ts[last])
	if !strings.Contains(stdout, want) {
		t.Errorf("-state-every %s: want %q in\n%s", every, want, stdout)
	}
	want = fmt.Sprintf("‖v‖ from %.4g to %.4g", va, vb)
	if !strings.Contains(stdout, want) || !(vb > 1.2*va) {
		t.Errorf("-state-every %s: want %q (‖v‖ growing) in\n%s", every, want, stdout)
	}
}

func dot(x, y []float64) float64 {
	var s float64
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

// TestUsageLinesListFlags: the usage line of figures and sweep, which
// spell their flags out, names every flag their -h lists.
func TestUsageLinesListFlags(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"figures", "sweep"} {
		code, stdout, _ := runCLI(t, cmd, "-h")
		usage, flags, ok := strings.Cut(stdout, "\nflags:\n")
		if code != 0 || !ok {
			t.Fatalf("%s -h: exit %d\n%s", cmd, code, stdout)
		}
		first := usage[:strings.Index(usage, "\n\n")] // the usage lines
		for _, line := range strings.Split(flags, "\n") {
			name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
			if !strings.HasPrefix(line, "  -") {
				continue
			}
			if !strings.Contains(first, "["+name+" ") && !strings.Contains(first, "["+name+"]") && !strings.Contains(first, " "+name+" ") {
				t.Errorf("%s: the usage line does not name %s:\n%s", cmd, name, first)
			}
		}
	}
}

// TestSummaryUnreadPlateau: with too few output times for a short plateau
// (the paper's example with 12: the last plateau, from t₄ = 28381.4 to the
// end of the run at 28504.2, holds no two of them), the table stops at the
// last plateau read and a note says which one follows and how to read it,
// rather than ending in silence.
func TestSummaryUnreadPlateau(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run.npz")
	code, stdout, stderr := runCLI(t, "run", "-q", "-samples", "12", "-o", out)
	want := "note: the output times read the plateaus up to m = 3 only: the next, from t = 28381.4 to 28504.2, is shorter than their spacing (more -samples read it)"
	if code != 0 || !strings.Contains(stdout, want) || strings.Contains(stdout, "m=4      0.13599507") {
		t.Errorf("exit %d (%s); want %q and no m = 4 row in\n%s", code, stderr, want, stdout)
	}
	_, stdout, _ = runCLI(t, "run", "-q", "-o", out)
	if strings.Contains(stdout, "note: the output times read") {
		t.Errorf("the default run reads every plateau, yet:\n%s", stdout)
	}
}

// TestStopRuleUnfinished: the stop rule's sentence of a run that ended
// before its rule applied (interrupted, or failed) does not say the rule
// was met, with L_min known (the paper's task) or not (fixed tasks).
func TestStopRuleUnfinished(t *testing.T) {
	data, err := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, nil, law.Lengths{N: 31})
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := data.WithTasks(law.Tasks{ICL: 0.5, Fixed: law.FixedTasks(4, 2, 3)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		data   *law.Data
		layer  flow.Layer
		status flow.Status
		want   string
	}{
		{data, flow.ReducedLayer, flow.Converged, ": t = 5"},
		{data, flow.ReducedLayer, flow.Interrupted, ": ended before, at t = 5"},
		{fixed, flow.FullLayer, flow.Converged, ": L reached that at t = 5"},
		{fixed, flow.FullLayer, flow.LossSettled, ": the loss settled at t = 5"},
		{fixed, flow.FullLayer, flow.Failed, ": it ended before either at t = 5"},
	} {
		s, err := flow.NewSystem(c.data, flow.Model{Kind: flow.Merged, H: 4, Layer: c.layer}) // the full layer with H < D+1: L_min not known
		if err != nil {
			t.Fatal(err)
		}
		if got := stopRule(s, 0, 1e-6, &flow.Trajectory{Status: c.status, FinalT: 5}); !strings.HasSuffix(got, c.want) {
			t.Errorf("%v, %v: %q, want it to end %q", c.layer, c.status, got, c.want)
		}
	}
}
