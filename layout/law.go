package layout

import (
	"gonum.org/v1/gonum/mat"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/output"
)

// Law lays out the law of the tokens, in every output but a sweep's index:
// Covariance (D, D), Eigvals (D), Eigvecs (D, D) with column d the
// eigenvector e_d, and Plateaus (D+1) = L(M_m).
func Law(data *law.Data) []export.Array { return LawWithPlateaus(data, data.PlateauLevels()) }

// LawWithPlateaus is Law with the plateau levels given, those read off a
// run where the paper's theory does not give them.
func LawWithPlateaus(data *law.Data, plateaus []float64) []export.Array {
	d := data.Dim()
	return []export.Array{
		export.Floats(output.Covariance, rowMajor(data.Covariance()), d, d),
		export.Floats(output.Eigvals, data.Lambda(), d),
		export.Floats(output.Eigvecs, rowMajor(data.Vecs()), d, d),
		export.Floats(output.Plateaus, plateaus, len(plateaus)),
	}
}

// rowMajor returns m's elements in C order.
func rowMajor(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := range r {
		for j := range c {
			out = append(out, m.At(i, j))
		}
	}
	return out
}
