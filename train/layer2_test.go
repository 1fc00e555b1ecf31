package train

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTwoHeadProducts: the two-head products of the column-by-column
// layer (rowTimes2, weightedSum2) give the bits of the general ones
// (rowTimesAny, weightedSumAny), which sum in the same order, for
// contexts of 0 to 9 tokens and D = 1 to 5.
func TestTwoHeadProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for d1 := 2; d1 <= 6; d1++ {
		for n := 0; n <= 9; n++ {
			tok, mat, a := make([]float64, (n+1)*d1), make([]float64, 2*d1), make([]float64, 2*(n+1))
			for _, v := range [][]float64{tok, mat, a} {
				for i := range v {
					v[i] = rng.NormFloat64()
				}
			}
			got, want := make([]float64, 2*(n+1)), make([]float64, 2*(n+1))
			rowTimes2(got, tok, mat, n, d1)
			rowTimesAny(want, tok, mat, n, d1, 2)
			sameBits(t, "rowTimes2", got, want)
			got, want = make([]float64, 2*d1), make([]float64, 2*d1)
			weightedSum2(got, tok, a, n, d1)
			weightedSumAny(want, tok, a, n, d1, 2)
			sameBits(t, "weightedSum2", got, want)
		}
	}
}

func sameBits(t *testing.T, name string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s[%d] = %v, want %v", name, i, got[i], want[i])
		}
	}
}
