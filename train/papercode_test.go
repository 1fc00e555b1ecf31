package train

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
)

// paperCase is a case of testdata/papercode/cases.json: the arguments of
// the paper's train.py (model attnM or attnS, --softmax, --head_num,
// --rank, --in_dim, --seq_len N+1, --trainset_size, --seed, --init, --lr,
// --epoch) and the start linattn draws (-winit, -seed).
type paperCase struct {
	Name, Model   string
	Softmax       bool
	H, R, D, N, P int
	Seed          uint64
	Init, LR      float64
	Epochs        int
	Winit         float64
	LinattnSeed   uint64 `json:"linattn_seed"`
}

// paperScale is c with linattn's weights c·θ for the paper code's θ
// (docs/math.md, "The paper's code"): its linear attention sums over the N
// context columns without the paper's 1/N, so its prediction at θ is N
// times linattn's, a product of two weights (merged, c = √N) or three
// (separate, c = N^(1/3)); softmax weights sum to one (c = 1). Its
// learning rate η acts on linattn's weights as c²η.
func paperScale(pc paperCase) float64 {
	switch {
	case pc.Softmax:
		return 1
	case pc.Model == "attnM":
		return math.Sqrt(float64(pc.N))
	}
	return math.Cbrt(float64(pc.N))
}

// TestPaperCode: the paper's own code (PyTorch in float32, run by
// testdata/papercode/make.py on its own data) and gradient descent here on
// the same sequences, from the same initial weights, give the same loss at
// every step to float32 rounding, with the paper code's weights θ and
// learning rate η taken as c·θ and c²η (paperScale), so that its epoch k
// is t/τ = 2c²ηk. Both ways: from the paper code's initialization (mapped
// here) and from linattn's (flow.System.Init, as linattn train draws it;
// mapped by the script); linear and softmax attention, merged and
// separate, on 300 to 1000 steps through their drops. Without the
// mapping (c = 1) the curves part by far more.
func TestPaperCode(t *testing.T) {
	dir := filepath.Join("testdata", "papercode")
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []paperCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	data := readNPZ(t, filepath.Join(dir, "data.npz"))
	for _, pc := range cases {
		t.Run(pc.Name, func(t *testing.T) {
			t.Parallel()
			fix := readNPZ(t, filepath.Join(dir, pc.Name+".npz"))
			tr, m := paperTrainer(t, pc, data["x"], data["y"])
			c := paperScale(pc)
			theirs := paperWeights(t, m, fix, "theirs_")
			ours := paperWeights(t, m, fix, "ours_")
			checkLinattnInit(t, pc, m, ours)
			for _, start := range []struct {
				name  string
				theta []float64
				want  []float64
			}{{"their start", theirs, fix["loss_theirs"].Float}, {"linattn's start", ours, fix["loss_ours"].Float}} {
				got := paperLosses(t, tr, start.theta, c*c*pc.LR, pc.Epochs)
				worst, at := 0.0, 0
				for k := range got {
					if e := math.Abs(got[k]-start.want[k]) / start.want[k]; e > worst {
						worst, at = e, k
					}
				}
				t.Logf("%s: loss %.4f → %.4f in %d epochs (t/τ = %.4g), largest relative difference %.2g at epoch %d",
					start.name, start.want[0], start.want[len(start.want)-1], pc.Epochs, 2*c*c*pc.LR*float64(pc.Epochs), worst, at)
				// Float32 rounding: 2⁻²⁴ ≈ 6·10⁻⁸ per operation, grown
				// through the sums over 64 sequences and the steps (the
				// largest measured is 8.4·10⁻⁷).
				if worst > 1e-5 {
					t.Errorf("%s: the loss of step %d is %.8g here, %.8g in the paper's code (relative %.2g)", start.name, at, got[at], start.want[at], worst)
				}
			}
			if c == 1 {
				return
			}
			// Unmapped (their weights and learning rate taken as ours),
			// the curve is another.
			raw := make([]float64, len(theirs))
			for i, w := range theirs {
				raw[i] = w / c
			}
			got, want := paperLosses(t, tr, raw, pc.LR, pc.Epochs), fix["loss_theirs"].Float
			worst := 0.0
			for k := range got {
				worst = math.Max(worst, math.Abs(got[k]-want[k])/want[k])
			}
			if worst < 0.1 {
				t.Errorf("without the mapping the loss differs by %.2g at most, want a different curve", worst)
			}
		})
	}
}

// paperTrainer is a Trainer of the case's layer (the full layer: every
// block the paper code's prediction reads) on the paper code's sequences
// x (P, N+1, D+1, the query's label 0) with labels y (P, N+1).
func paperTrainer(t *testing.T, pc paperCase, x, y export.Array) (*Trainer, *Model) {
	t.Helper()
	m := Model{Model: flow.Model{Kind: flow.Separate, H: pc.H, R: pc.R, Tau: 1, Layer: flow.FullLayer}, D: pc.D}
	if pc.Model == "attnM" {
		m.Kind, m.R = flow.Merged, 0
	}
	if pc.Softmax {
		m.Attention = Softmax
	}
	d1, tokens := pc.D+1, pc.N+1
	if want := []int{pc.P, tokens, d1}; !slices.Equal(x.Shape, want) || !slices.Equal(y.Shape, want[:2]) {
		t.Fatalf("data of shapes %v and %v, want %v and %v", x.Shape, y.Shape, want, want[:2])
	}
	data, err := law.NewData(law.White(pc.D, 0.25), nil, law.Lengths{N: pc.N})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Config{Model: m, Data: data, P: 1, Path: ColumnsPath})
	if err != nil {
		t.Fatal(err)
	}
	set := &rawSet{n: pc.P, tokens: tokens, d: pc.D, tok: x.Float, yt: y.Float}
	tr.train = newTokenObjective(set, &tr.cfg.Model, tr.coef, tr.shape)
	return tr, &tr.cfg.Model
}

// paperWeights reads the weights θ (train's layout) stored under prefix.
func paperWeights(t *testing.T, m *Model, fix map[string]export.Array, prefix string) []float64 {
	t.Helper()
	names := []string{"v", "K", "Q", "v_x", "k_y"}
	if m.Kind == flow.Merged {
		names = []string{"v", "U", "v_x", "u_y"}
	}
	var theta []float64
	for _, n := range names {
		a, ok := fix[prefix+n]
		if !ok && (n == "v_x" || n == "k_y" || n == "u_y") {
			continue // linattn's start: zero extra blocks
		}
		if !ok {
			t.Fatalf("no array %s%s", prefix, n)
		}
		theta = append(theta, a.Float...)
	}
	if len(theta) == m.FlowLen() {
		theta = append(theta, make([]float64, m.Len()-m.FlowLen())...)
	}
	if len(theta) != m.Len() {
		t.Fatalf("%s weights of length %d, want %d", prefix, len(theta), m.Len())
	}
	return theta
}

// checkLinattnInit: the start the script gave the paper's code is the
// paper's initialization as linattn draws it (flow.System.Init).
func checkLinattnInit(t *testing.T, pc paperCase, m *Model, theta []float64) {
	t.Helper()
	data, err := law.NewData(law.White(pc.D, 0.25), nil, law.Lengths{N: pc.N})
	if err != nil {
		t.Fatal(err)
	}
	s, err := flow.NewSystem(data, flow.Model{Kind: m.Kind, H: m.H, R: m.R})
	if err != nil {
		t.Fatal(err)
	}
	y0, err := s.Init(pc.Winit, pc.LinattnSeed)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range y0 {
		if theta[i] != w {
			t.Fatalf("linattn's start differs from flow.System.Init(%g, %d) at %d: %v, want %v", pc.Winit, pc.LinattnSeed, i, theta[i], w)
		}
	}
}

// paperLosses runs gradient descent and returns the loss before every
// step, as the paper's train.py records it.
func paperLosses(t *testing.T, tr *Trainer, theta0 []float64, lr float64, steps int) []float64 {
	t.Helper()
	out := make([]float64, 0, steps)
	_, err := tr.GD(context.Background(), theta0, GDSettings{LR: lr, Steps: steps, Samples: 2, Grid: flow.GridLinear,
		Observer: func(_ int, loss float64) error { out = append(out, loss); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readNPZ(t *testing.T, path string) map[string]export.Array {
	t.Helper()
	z, err := export.LoadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]export.Array{}
	for _, n := range z.Names() {
		if out[n], err = z.Read(n); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
