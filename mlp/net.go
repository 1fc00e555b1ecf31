package mlp

import (
	"errors"
	"fmt"
	"math"

	"github.com/linattn/linattn/law"
	"gonum.org/v1/gonum/mat"
)

// Net is the network of H hidden units on the features of one task law.
// Its state is one flat vector [w₂ (H) | W₁ (H × D², row-major: row i is
// the first-layer weights of unit i)].
type Net struct {
	H, D int
	Tau  float64 // time constant τ > 0 of τ dθ/dt = −½ ∂L/∂θ
	// eyy is E[y_q²] = tr Λ; eyz is E[y z] (D²) and ezz E[z zᵀ] (D² × D²,
	// row-major).
	eyy      float64
	eyz, ezz []float64
	// c and r are scratch: the network's map c = W₁ᵀ w₂ (D²) and the
	// residual r = E[y z] − E[z zᵀ] c.
	c, r []float64
}

// New returns the network with h hidden units on the features of data
// (Λ and ν: its E[y z] and E[z zᵀ]) and time constant tau (0 means 1).
func New(data *law.Data, h int, tau float64) (*Net, error) {
	if data == nil {
		return nil, errors.New("mlp: data is nil")
	}
	if h < 1 {
		return nil, fmt.Errorf("mlp: H = %d hidden units, want H ≥ 1", h)
	}
	if tau == 0 {
		tau = 1
	}
	if !(tau > 0) || math.IsInf(tau, 0) {
		return nil, fmt.Errorf("mlp: τ = %g, want a finite τ > 0 (0 for τ = 1)", tau)
	}
	d := data.Dim()
	f := d * d
	ezz := mat.DenseCopyOf(data.EZZ()).RawMatrix().Data
	return &Net{H: h, D: d, Tau: tau, eyy: data.Trace(), eyz: data.EYZ(), ezz: ezz,
		c: make([]float64, f), r: make([]float64, f)}, nil
}

// Len is the length of the state, H + H·D².
func (n *Net) Len() int { return n.H * (1 + n.D*n.D) }

// Map returns the network's linear map of z, c = W₁ᵀ w₂ = vec(M): the
// effective map M of the attention the network is equivalent to.
func (n *Net) Map(y []float64) []float64 {
	n.check("y", y)
	out := make([]float64, n.D*n.D)
	n.mapInto(out, y)
	return out
}

func (n *Net) mapInto(c, y []float64) {
	f := n.D * n.D
	clear(c)
	for i, w2 := range y[:n.H] {
		for k, w := range y[n.H+i*f : n.H+(i+1)*f] {
			c[k] += w2 * w
		}
	}
}

// residual sets n.r = E[y z] − E[z zᵀ] c for c = n.c.
func (n *Net) residual() {
	f := len(n.c)
	for a := range n.r {
		row := n.ezz[a*f : (a+1)*f]
		var s float64
		for b, cb := range n.c {
			s += row[b] * cb
		}
		n.r[a] = n.eyz[a] - s
	}
}

// Loss returns the population loss E(y_q − w₂ᵀW₁z)² =
// E[y_q²] − 2 cᵀ E[y z] + cᵀ E[z zᵀ] c with c = W₁ᵀ w₂.
func (n *Net) Loss(y []float64) float64 {
	n.check("y", y)
	n.mapInto(n.c, y)
	n.residual()
	// cᵀ E[zzᵀ] c = cᵀ (E[yz] − r).
	l := n.eyy
	for k, ck := range n.c {
		l -= 2 * ck * n.eyz[k]
		l += ck * (n.eyz[k] - n.r[k])
	}
	return l
}

// Deriv writes the flow dθ/dt at the state y into dy (paper eq. attnM-gd):
// τ dw₂_i/dt = W₁[i]·r and τ dW₁[i]/dt = w₂_i r with the residual
// r = E[y z] − E[z zᵀ] W₁ᵀ w₂.
func (n *Net) Deriv(dy, y []float64) {
	n.check("y", y)
	n.check("dy", dy)
	n.mapInto(n.c, y)
	n.residual()
	f, inv := n.D*n.D, 1/n.Tau
	for i, w2 := range y[:n.H] {
		row := y[n.H+i*f : n.H+(i+1)*f]
		drow := dy[n.H+i*f : n.H+(i+1)*f]
		var dv float64
		for k, rk := range n.r {
			dv += row[k] * rk
			drow[k] = w2 * rk * inv
		}
		dy[i] = dv * inv
	}
}

// Balance returns the H × H matrix w₂w₂ᵀ − W₁W₁ᵀ (row-major), which the
// flow conserves (paper eq. attnM-conservation).
func (n *Net) Balance(y []float64) []float64 {
	n.check("y", y)
	h, f := n.H, n.D*n.D
	out := make([]float64, h*h)
	for i := 0; i < h; i++ {
		for j := 0; j < h; j++ {
			var s float64
			for k := 0; k < f; k++ {
				s += y[h+i*f+k] * y[h+j*f+k]
			}
			out[i*h+j] = y[i]*y[j] - s
		}
	}
	return out
}

func (n *Net) check(name string, y []float64) {
	if len(y) != n.Len() {
		panic(fmt.Sprintf("mlp: len(%s) = %d, want H + H·D² = %d", name, len(y), n.Len()))
	}
}

// FromAttention returns the state of the network that computes what merged
// attention with value weights v (H) and key–query matrices u (H·D·D, U_i
// row-major, as package flow lays them out) computes (paper eq. attnM-mlp):
// w₂ = v and row i of W₁ = vec(U_i)ᵀ, vec stacking columns.
func FromAttention(v, u []float64, d int) ([]float64, error) {
	h := len(v)
	if h < 1 || len(u) != h*d*d {
		return nil, fmt.Errorf("mlp: %d value weights and %d key–query entries, want H ≥ 1 and H·D² = %d", h, len(u), h*d*d)
	}
	y := make([]float64, h*(1+d*d))
	copy(y, v)
	for i := 0; i < h; i++ {
		ui, row := u[i*d*d:(i+1)*d*d], y[h+i*d*d:h+(i+1)*d*d]
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				row[b*d+a] = ui[a*d+b] // vec(U)[b·D + a] = U[a][b]
			}
		}
	}
	return y, nil
}

// ToAttention is FromAttention's inverse: v and the U_i (H·D·D, row-major)
// of the state y of a network on D² features.
func ToAttention(y []float64, h, d int) (v, u []float64) {
	v, u = append([]float64(nil), y[:h]...), make([]float64, h*d*d)
	for i := 0; i < h; i++ {
		ui, row := u[i*d*d:(i+1)*d*d], y[h+i*d*d:h+(i+1)*d*d]
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				ui[a*d+b] = row[b*d+a]
			}
		}
	}
	return v, u
}
