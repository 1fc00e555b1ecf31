package flow

import (
	"math"

	"github.com/linattn/linattn/flow/internal/traces"
	"github.com/linattn/linattn/law"
)

// stackTests are the stack's exact test losses (docs/math.md, "Task
// laws" and "Depth"): the stack's loss is linear in M̃ and in the noise,
// so each test law's is the same terms with its own M̃ and σ²; the
// in-weight test's context labels, independent of the tokens with
// variance tr(ΛΩ) + σ², enter as noise of that variance with no signal,
// and the query's fixed task adds tr(M̃).
type stackTests struct {
	eval *traces.Eval
	sets [3]*stackTestLaw // in-context, in-weight, in-distribution; nil where there are no fixed tasks
}

type stackTestLaw struct {
	task        []float64 // M̃
	noise       float64   // σ² of every label
	independent bool      // the in-weight test: context labels of variance labelVar
	labelVar    float64
}

func (st *stack) newTests(data *law.Data) (*stackTests, error) {
	t := &stackTests{eval: st.prog.NewEval(st.d)}
	for i, set := range testSequences(data) {
		tm, err := data.TaskMoments(set, true)
		if err != nil {
			return nil, err
		}
		t.sets[i] = &stackTestLaw{task: st.whiten(tm.Second), noise: tm.Noise, independent: tm.Independent, labelVar: tm.LabelVar}
	}
	return t, nil
}

// testLosses returns the in-context, in-weight and in-distribution test
// losses at y (eigen coordinates); NaN for a test the law has not.
func (st *stack) testLosses(y []float64) (icl, iwl, idg float64) {
	out := [3]float64{math.NaN(), math.NaN(), math.NaN()}
	ev := st.tests.eval
	st.setMaps(ev, y) // the same maps for every test law: only M̃ differs
	for i, tl := range st.tests.sets {
		if tl == nil {
			continue
		}
		ev.Set(0, tl.task)
		if tl.independent {
			var tr float64
			for k := 0; k < st.d; k++ {
				tr += tl.task[k*st.d+k]
			}
			out[i] = ev.Value([]float64{0, tl.labelVar}) + tr + tl.noise
			continue
		}
		out[i] = ev.Value([]float64{1, tl.noise}) + tl.noise
	}
	return out[0], out[1], out[2]
}
