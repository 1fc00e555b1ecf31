package law

import (
	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/output"
)

// Arrays are the arrays that describe the law, in every output but a
// sweep's index (package output names them): Covariance (D, D), Eigvals (D), Eigvecs (D, D) with
// column d the eigenvector e_d, and Plateaus (D+1) = L(M_m).
func (data *Data) Arrays() []export.Array {
	d := data.Dim()
	return []export.Array{
		export.Floats(output.Covariance, rowMajor(data.Covariance()), d, d),
		export.Floats(output.Eigvals, data.Lambda(), d),
		export.Floats(output.Eigvecs, rowMajor(data.Vecs()), d, d),
		export.Floats(output.Plateaus, data.PlateauLevels(), d+1),
	}
}

// rowMajor returns m's elements in C order.
func rowMajor(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out = append(out, m.At(i, j))
		}
	}
	return out
}
