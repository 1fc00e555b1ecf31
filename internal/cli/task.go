package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/linattn/linattn/flow"
)

// taskFlags describe the data Λ and ν, shared by every command.
type taskFlags struct {
	lambda   string
	powerLaw float64
	white    float64
	dim      int
	trace    float64
	rotation uint64
	context  int
	nmax     int
}

func (t *taskFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.lambda, "lambda", "0.4,0.3,0.2,0.1", "eigenvalues of Λ, comma-separated (the paper's D=4 example)")
	fs.Float64Var(&t.powerLaw, "powerlaw", 0, "if > 0, use λ_d ∝ d^-powerlaw with -dim and -trace instead of -lambda")
	fs.Float64Var(&t.white, "white", 0, "if > 0, use Λ = white·I with -dim instead of -lambda")
	fs.IntVar(&t.dim, "dim", 8, "D for -powerlaw and -white")
	fs.Float64Var(&t.trace, "trace", 1, "tr(Λ) for -powerlaw")
	fs.Uint64Var(&t.rotation, "rotation", 1, "seed of the random eigenvectors of Λ; 0 means the identity")
	fs.IntVar(&t.context, "context", 31, "context length N (ν = 1/N)")
	fs.IntVar(&t.nmax, "nmax", 0, "if > 0, next-token loss over lengths 1..nmax (ν = H_nmax/nmax) instead of -context")
}

func (t *taskFlags) data() (*flow.Data, error) {
	var lam []float64
	switch {
	case t.powerLaw > 0 && t.white > 0:
		return nil, usagef("-powerlaw and -white exclude each other")
	case t.powerLaw > 0 || t.white > 0:
		if t.dim < 1 {
			return nil, usagef("-dim = %d, want ≥ 1", t.dim)
		}
		if t.powerLaw > 0 {
			if !(t.trace > 0) {
				return nil, usagef("-trace = %g, want > 0", t.trace)
			}
			lam = flow.PowerLaw(t.dim, t.powerLaw, t.trace)
		} else {
			lam = flow.White(t.dim, t.white)
		}
	default:
		for i, f := range strings.Split(t.lambda, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, usagef("-lambda entry %d %q is not a number", i+1, f)
			}
			lam = append(lam, v)
		}
	}
	var nu float64
	var err error
	if t.nmax > 0 {
		nu, err = flow.NuNextToken(t.nmax)
	} else {
		nu, err = flow.NuFixed(t.context)
	}
	if err != nil {
		return nil, usageError{err}
	}
	var data *flow.Data
	if t.rotation == 0 {
		data, err = flow.NewData(lam, nil, nu)
	} else {
		data, err = flow.NewData(lam, flow.RandomRotation(len(lam), t.rotation), nu)
	}
	if err != nil {
		return nil, usageError{err}
	}
	return data, nil
}

func (t *taskFlags) describe(d *flow.Data) string {
	n := fmt.Sprintf("N=%d", t.context)
	if t.nmax > 0 {
		n = fmt.Sprintf("next-token Nmax=%d", t.nmax)
	}
	return fmt.Sprintf("D=%d, λ=%s, %s (ν=%.6g)", d.Dim(), floats(d.Lambda, "%.6g"), n, d.Nu)
}

func floats(x []float64, format string) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = fmt.Sprintf(format, v)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// modelFlags describe the attention model, shared by run and landscape.
type modelFlags struct {
	kind        string
	heads, rank int
	tau         float64
}

func (m *modelFlags) register(fs *flag.FlagSet, heads int, headsUsage string) {
	fs.StringVar(&m.kind, "model", "separate", "separate (ATTN_S) or merged (ATTN_M)")
	fs.IntVar(&m.heads, "heads", heads, headsUsage)
	fs.IntVar(&m.rank, "rank", 1, "rank R of keys and queries (separate)")
	fs.Float64Var(&m.tau, "tau", 1, "time constant τ")
}

// system builds the flow of the model on data; heads = 0 means H = D.
func (m *modelFlags) system(data *flow.Data) (*flow.System, error) {
	h := m.heads
	if h == 0 {
		h = data.Dim()
	}
	model := flow.Model{H: h, Tau: m.tau}
	switch m.kind {
	case "separate":
		model.Kind, model.R = flow.Separate, m.rank
	case "merged":
		model.Kind = flow.Merged
	default:
		return nil, usagef("-model = %q, want separate or merged", m.kind)
	}
	s, err := flow.NewSystem(data, model)
	if err != nil {
		return nil, usageError{err}
	}
	return s, nil
}
