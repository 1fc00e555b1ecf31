package theory

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// DMMSE is the discrete minimum-mean-squared-error predictor of Raventós et
// al.: the posterior mean of w when w is drawn uniformly from a finite set
// of K tasks w_1..w_K and the labels carry Gaussian noise of variance σ²,
//
//	ŵ = Σ_k p_k w_k,  p_k ∝ exp(−‖y − X w_k‖² / (2σ²)).
//
// It is the Bayes predictor for tasks drawn from the set (models.DiscreteMMSE
// in icl/models.py of mansheej/icl-task-diversity, commit
// 7c35803e68c49f94ac2e618ce4e1bc14470b771b; theory_runs/dmmse.py of Pehlevan-Group/incontext-asymptotics-experiments is
// the same estimator). σ² = 0 is the limit σ² → 0⁺: the mean of the tasks
// with the least residual. An empty context gives the mean of the tasks.
//
// The residuals are computed as ‖y‖² + w_kᵀ(XᵀX)w_k − 2(Xᵀy)ᵀw_k, whose
// first term cancels in p, so a context costs O(N·D² + K·D²) whatever N.
// A DMMSE keeps scratch space and is not safe for concurrent use.
//
// References:
//
//	Raventós, Paul, Chen, Ganguli, NeurIPS 2023, arXiv:2306.15063.
type DMMSE struct {
	tasks    *mat.Dense // K×D
	noiseVar float64
	gram     mat.Dense    // D×D
	b        mat.VecDense // Xᵀy
	logit    []float64    // K
}

// NewDMMSE returns the discrete-MMSE predictor over the rows of tasks
// (K×D, copied) for label noise of variance noiseVar ≥ 0.
func NewDMMSE(tasks mat.Matrix, noiseVar float64) (*DMMSE, error) {
	if tasks == nil {
		return nil, fmt.Errorf("theory: dMMSE tasks: nil, want a K×D matrix")
	}
	if !(noiseVar >= 0) || math.IsInf(noiseVar, 1) {
		return nil, fmt.Errorf("theory: dMMSE noiseVar = %v: must be ≥ 0 and finite", noiseVar)
	}
	k, d := tasks.Dims()
	for i := range k {
		for j := range d {
			if v := tasks.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("theory: dMMSE tasks[%d][%d] = %v: must be finite", i, j, v)
			}
		}
	}
	return &DMMSE{tasks: mat.DenseCopyOf(tasks), noiseVar: noiseVar, logit: make([]float64, k)}, nil
}

// Weights implements Predictor.
func (m *DMMSE) Weights(dst []float64, c Context) ([]float64, error) {
	dst, err := weightsDst(dst, c)
	if err != nil {
		return dst, err
	}
	k, d := m.tasks.Dims()
	if c.D != d {
		return dst, fmt.Errorf("theory: dMMSE: Context.D = %d: must be the tasks' D = %d", c.D, d)
	}
	if n := len(c.Y); n == 0 {
		for i := range m.logit {
			m.logit[i] = 1 / float64(k)
		}
	} else {
		x := mat.NewDense(n, d, c.X)
		m.gram.Reset()
		m.gram.Mul(x.T(), x)
		m.b.Reset()
		m.b.MulVec(x.T(), mat.NewVecDense(n, c.Y))
		b := m.b.RawVector().Data
		gram := m.gram.RawMatrix()
		for i := range k {
			// r_i = w_iᵀ(XᵀX)w_i − 2(Xᵀy)ᵀw_i = ‖y − Xw_i‖² − ‖y‖².
			w := m.tasks.RawRowView(i)
			var r float64
			for j, wj := range w {
				g := gram.Data[j*gram.Stride : j*gram.Stride+d]
				var gw float64
				for l, wl := range w {
					gw += g[l] * wl
				}
				r += wj * (gw - 2*b[j])
			}
			m.logit[i] = r
		}
		m.posterior()
	}
	p := mat.NewVecDense(k, m.logit)
	mat.NewVecDense(d, dst).MulVec(m.tasks.T(), p)
	return dst, nil
}

// posterior turns the residuals r_i in m.logit into the normalized
// posterior weights p_i ∝ exp(−(r_i − min r)/(2σ²)); at σ² = 0 the weight
// is shared equally by the tasks with the least residual.
func (m *DMMSE) posterior() {
	lo := math.Inf(1)
	for _, r := range m.logit {
		lo = math.Min(lo, r)
	}
	var sum float64
	for i, r := range m.logit {
		var p float64
		switch {
		case m.noiseVar > 0:
			if z := (r - lo) / (2 * m.noiseVar); z < 746 { // exp(−746) underflows
				p = math.Exp(-z)
			}
		case r == lo:
			p = 1
		}
		m.logit[i] = p
		sum += p
	}
	for i := range m.logit {
		m.logit[i] /= sum
	}
}
