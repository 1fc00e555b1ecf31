package law

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// TaskMoments are the moments of a population's task vector w through
// which alone its feature moments depend on the label law (docs/math.md,
// "Task laws"), in the basis in which Λ is given:
//
//	Mean = E[w],  Second = E[wwᵀ],  Third = E[(wᵀΛw) w],  Quad = E[wᵀΛw],  Fourth = E[(wᵀΛw)²].
//
// Every label carries noise of variance Noise. With Independent the
// context labels are independent of the tokens, N(0, LabelVar), and only
// the query is labeled by w (the in-weight test); otherwise y = wᵀx + ε.
type TaskMoments struct {
	Mean, Second, Third []float64
	Quad, Fourth        float64
	Noise               float64
	Independent         bool
	LabelVar            float64
}

func newTaskMoments(d int) *TaskMoments {
	return &TaskMoments{Mean: make([]float64, d), Second: make([]float64, d*d), Third: make([]float64, d)}
}

// addGaussian adds weight wt of w ~ N(0, Ω) (omega D×D, nil: I): the odd
// moments vanish, and Isserlis' theorem gives
// E[(wᵀΛw)²] = tr(ΛΩ)² + 2 tr(ΛΩΛΩ).
func (m *TaskMoments) addGaussian(wt float64, lam, omega []float64) {
	d := len(m.Mean)
	if omega == nil {
		omega = identity(d).RawMatrix().Data
	}
	lo := mulMat(lam, omega, d) // ΛΩ
	var tr, tr2 float64
	for i := 0; i < d; i++ {
		tr += lo[i*d+i]
		for k := 0; k < d; k++ {
			tr2 += lo[i*d+k] * lo[k*d+i]
		}
	}
	for i, x := range omega {
		m.Second[i] += wt * x
	}
	m.Quad += wt * tr
	m.Fourth += wt * (tr*tr + 2*tr2)
}

// addSet adds weight wt of the task vectors ws, uniformly: O(K·D²), and
// never more per evaluation.
func (m *TaskMoments) addSet(wt float64, lam []float64, ws [][]float64) {
	d := len(m.Mean)
	lw := make([]float64, d)
	p := wt / float64(len(ws))
	for _, w := range ws {
		var wlw float64 // wᵀΛw, in the order of the in-weight test's past code
		for i := 0; i < d; i++ {
			var s float64
			for k := 0; k < d; k++ {
				wlw += w[i] * lam[i*d+k] * w[k]
				s += lam[i*d+k] * w[k]
			}
			lw[i] = s
		}
		for i, wi := range w {
			m.Mean[i] += p * wi
			m.Third[i] += p * wlw * wi
			row := m.Second[i*d : (i+1)*d]
			pwi := p * wi
			for k, wk := range w {
				row[k] += pwi * wk
			}
		}
		m.Quad += p * wlw
		m.Fourth += p * wlw * wlw
	}
}

// TaskMoments returns the task moments of the population set in the
// eigenbasis of Λ (eigen) or the original basis.
func (d *Data) TaskMoments(set Sequences, eigen bool) (*TaskMoments, error) {
	if err := d.checkSet(set); err != nil {
		return nil, err
	}
	return d.taskMoments(set, d.basisLambda(eigen), eigen), nil
}

func (d *Data) checkSet(set Sequences) error {
	switch {
	case set < Training || set > InDistributionTest:
		return fmt.Errorf("law: Sequences = %d, want Training, InContextTest, InWeightTest or InDistributionTest", int(set))
	case (set == InWeightTest || set == InDistributionTest) && len(d.tasks.Fixed) == 0:
		return fmt.Errorf("law: the %v needs fixed task vectors (Data.WithTasks)", set)
	}
	return nil
}

// basisLambda returns Λ (D×D row-major) in eigen coordinates (diagonal)
// or in the original basis.
func (d *Data) basisLambda(eigen bool) []float64 {
	n := d.Dim()
	if !eigen {
		return d.Covariance().RawMatrix().Data
	}
	lam := make([]float64, n*n)
	for i, l := range d.lambda {
		lam[i*n+i] = l
	}
	return lam
}

func (d *Data) taskMoments(set Sequences, lam []float64, eigen bool) *TaskMoments {
	n := d.Dim()
	m := newTaskMoments(n)
	m.Noise = d.tasks.Noise
	switch set {
	case Training:
		c := d.tasks.Fraction()
		if c > 0 {
			m.addGaussian(c, lam, d.basisMatrix(d.tasks.Cov, eigen))
		}
		if c < 1 {
			m.addSet(1-c, lam, d.basisTasks(eigen))
		}
	case InContextTest:
		cov := d.tasks.TestCov
		if cov == nil {
			cov = d.tasks.Cov
		}
		m.addGaussian(1, lam, d.basisMatrix(cov, eigen))
	case InWeightTest:
		m.addSet(1, lam, d.basisTasks(eigen))
		m.Independent = true
		m.LabelVar = d.LabelVariance()
	case InDistributionTest:
		m.addSet(1, lam, d.basisTasks(eigen))
	}
	return m
}

// LabelVariance returns E[y²] of an in-context sequence, tr(ΛΩ) + σ²: the
// variance of the in-weight test's context labels, which carry no
// information about the query's (docs/math.md, "Task laws").
func (d *Data) LabelVariance() float64 {
	m := newTaskMoments(d.Dim())
	m.addGaussian(1, d.basisLambda(true), d.basisMatrix(d.tasks.Cov, true))
	return m.Quad + d.tasks.Noise
}

// basisMatrix returns the matrix m of the original basis (nil: nil) in
// eigen coordinates, VᵀmV, or as given, row-major.
func (d *Data) basisMatrix(m *mat.Dense, eigen bool) []float64 {
	if m == nil {
		return nil
	}
	if !eigen {
		return mat.DenseCopyOf(m).RawMatrix().Data
	}
	var vm, out mat.Dense
	vm.Mul(d.vecs.T(), m)
	out.Mul(&vm, d.vecs)
	return out.RawMatrix().Data
}

// basisTasks returns the fixed tasks in eigen coordinates (Vᵀw) or as
// given.
func (d *Data) basisTasks(eigen bool) [][]float64 {
	if !eigen {
		return d.tasks.Fixed
	}
	return d.fixedEigen
}

// rotateTasks returns Vᵀw for every fixed task, in one flat array.
func (d *Data) rotateTasks() [][]float64 {
	n, k := d.Dim(), len(d.tasks.Fixed)
	v := d.vecs.RawMatrix().Data
	flat := make([]float64, n*k)
	out := make([][]float64, k)
	for j, w := range d.tasks.Fixed {
		o := flat[j*n : (j+1)*n : (j+1)*n]
		for c := range o {
			for r, x := range w {
				o[c] += v[r*n+c] * x
			}
		}
		out[j] = o
	}
	return out
}
