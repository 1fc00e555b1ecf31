package train

import (
	"context"
	"testing"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// TestFlowResolvesAsFlow: Flow fills its zero settings as package flow
// does for the trainer's model and law (flow.RunSettings.Resolve) and
// reports them: for the full layer under a task mixture (c = 0.5) the
// method is the flow plan's, BDF, not Auto, with its tolerances.
func TestFlowResolvesAsFlow(t *testing.T) {
	t.Parallel()
	data, err := law.NewData([]float64{0.5, 0.3, 0.2}, law.RandomRotation(3, 2), law.Lengths{N: 5})
	if err != nil {
		t.Fatal(err)
	}
	data = withLaw(t, data, law.Lengths{N: 5}, 0.5, 11)
	m := Model{Model: flow.Model{Kind: flow.Merged, H: 2, Layer: flow.FullLayer, Tau: 1}, D: 3}
	tr := newTrainer(t, Config{Model: m, Data: data, P: 50, Seed: 11, Path: MomentsPath})
	for _, fs := range []FlowSettings{{T: 5}, {T: 5, Times: []float64{0, 1, 5}, RTol: 1e-7}} {
		res, err := tr.Flow(context.Background(), randomWeights(tr.Len(), 0.1, 3), fs)
		if err != nil {
			t.Fatal(err)
		}
		plan := flow.PlanFor(m.Model, data)
		want := plan.Resolve(flow.RunSettings{T: fs.T, Times: fs.Times, RTol: fs.RTol}).Resolved()
		if res.Resolved != want || want.Method.Name() != plan.Method.Name() {
			t.Errorf("%+v: resolved %+v (%s), want flow's %+v (%s)", fs, res.Resolved, res.Resolved.Method.Name(), want, want.Method.Name())
		}
	}
}
