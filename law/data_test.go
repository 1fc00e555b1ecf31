package law

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// testData returns a law with a non-diagonal covariance (random rotation)
// and ν of the next-token loss, which differs from 1/N.
func testData(t testing.TB, lambda []float64, seed uint64) *Data {
	t.Helper()
	d, err := NewData(lambda, RandomRotation(len(lambda), seed), Lengths{NTPMax: 7})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range got {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

func TestStatistics(t *testing.T) {
	// A = E[Λ̂²] has the eigenvalues a_d; E[zzᵀ] = Λ ⊗ A satisfies the
	// Kronecker identity (Λ ⊗ A) vec(M) = vec(A M Λ) (docs/math.md).
	data := testData(t, []float64{0.9, 0.4, 0.1}, 4)
	lam, a := data.Covariance(), data.A()
	var want mat.Dense
	want.Mul(lam, lam)
	var tmp mat.Dense
	tmp.Scale(data.Trace(), mat.NewDiagDense(3, []float64{1, 1, 1}))
	tmp.Add(&tmp, lam)
	tmp.Mul(&tmp, lam)
	tmp.Scale(data.Nu(), &tmp)
	want.Add(&want, &tmp)
	if !mat.EqualApprox(a, &want, 1e-14) {
		t.Errorf("A = %v, want Λ² + ν(Λ + tr Λ I)Λ = %v", mat.Formatted(a), mat.Formatted(&want))
	}
	m := mat.NewDense(3, 3, []float64{0.3, -1, 2, 0.5, 0.1, -0.7, 1.1, 0.2, 0.4})
	lhs := mat.NewVecDense(9, nil)
	lhs.MulVec(data.EZZ(), mat.NewVecDense(9, vec(m)))
	var amL mat.Dense
	amL.Mul(a, m)
	amL.Mul(&amL, lam)
	if e := relErr(lhs.RawVector().Data, vec(&amL)); e > 1e-14 {
		t.Errorf("(Λ⊗A)vec(M) vs vec(AMΛ): %.3g", e)
	}
	var l2 mat.Dense
	l2.Mul(lam, lam)
	if e := relErr(data.EYZ(), vec(&l2)); e > 1e-15 {
		t.Errorf("E[yz] ≠ vec(Λ²): %.3g", e)
	}
}

func TestNu(t *testing.T) {
	if nu, _ := NuFixed(31); nu != 1.0/31 {
		t.Errorf("NuFixed(31) = %v", nu)
	}
	// H_3/3 = (1 + 1/2 + 1/3)/3 = 11/18.
	if nu, _ := NuNextToken(3); math.Abs(nu-11.0/18) > 2e-16 {
		t.Errorf("NuNextToken(3) = %v, want 11/18", nu)
	}
	// p(N) uniform on {2, 4}: ν = (1/2 + 1/4)/2 = 3/8.
	if nu, _ := NuDistribution([]float64{0, 1, 0, 1}); math.Abs(nu-0.375) > 1e-16 {
		t.Errorf("NuDistribution = %v, want 3/8", nu)
	}
	if nu, _ := NuDistribution([]float64{0, 0, 2}); math.Abs(nu-1.0/3) > 1e-16 {
		t.Errorf("point mass at N=3: ν = %v", nu)
	}
}

func TestCovarianceRoundTrip(t *testing.T) {
	data := testData(t, []float64{0.7, 0.2, 0.1}, 9)
	d2, err := NewDataCovariance(data.Covariance(), Lengths{Nu: data.Nu()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range data.Lambda() {
		if math.Abs(d2.Lambda()[i]-data.Lambda()[i]) > 1e-14 {
			t.Errorf("eigenvalue %d: %v, want %v", i, d2.Lambda()[i], data.Lambda()[i])
		}
	}
	if !mat.EqualApprox(d2.Covariance(), data.Covariance(), 1e-14) {
		t.Error("covariance changed in the round trip")
	}
}

// TestDataImmutable: Data's accessors return copies, so changing them
// changes nothing cached (the issue of an exported field edited after
// construction, with A and tr(Λ) left stale).
func TestDataImmutable(t *testing.T) {
	nu, _ := NuFixed(31)
	data, err := NewData([]float64{0.4, 0.3, 0.2, 0.1}, RandomRotation(4, 1), Lengths{Nu: nu})
	if err != nil {
		t.Fatal(err)
	}
	before, vec := data.MinLoss(), data.Vecs().At(1, 2)
	data.Lambda()[0] = 9
	data.Vecs().Set(1, 2, 5)
	if data.MinLoss() != before || data.Lambda()[0] != 0.4 || data.Vecs().At(1, 2) != vec {
		t.Errorf("Data changed through its accessors: L* %v → %v, λ₁ = %v", before, data.MinLoss(), data.Lambda()[0])
	}
}

func TestValidation(t *testing.T) {
	// Each error names the offending field and its allowed range; want is
	// the part of the message that does.
	type check struct {
		f    func() error
		want string
	}
	for name, c := range map[string]check{
		"empty lambda": {func() error { _, err := NewData(nil, nil, Lengths{Nu: 0.1}); return err }, "len(lambda) = 0"},
		"zero lambda":  {func() error { _, err := NewData([]float64{1, 0}, nil, Lengths{Nu: 0.1}); return err }, "lambda[1] = 0"},
		"NaN lambda":   {func() error { _, err := NewData([]float64{math.NaN()}, nil, Lengths{Nu: 0.1}); return err }, "lambda[0] = NaN"},
		"nu 0":         {func() error { _, err := NewData([]float64{1}, nil, Lengths{Nu: 0}); return err }, "Nu = E[1/N] = 0"},
		"nu > 1":       {func() error { _, err := NewData([]float64{1}, nil, Lengths{Nu: 1.5}); return err }, "Nu = E[1/N] = 1.5"},
		"not orthogonal": {func() error {
			_, err := NewData([]float64{1, 2}, mat.NewDense(2, 2, []float64{1, 0.1, 0, 1}), Lengths{Nu: 0.1})
			return err
		}, "(VᵀV)[0][1]"},
		"not symmetric": {func() error {
			_, err := NewDataCovariance(mat.NewDense(2, 2, []float64{1, 0.1, 0, 1}), Lengths{Nu: 0.1})
			return err
		}, "not symmetric: [0][1]"},
		"not PD": {func() error {
			_, err := NewDataCovariance(mat.NewDense(2, 2, []float64{1, 2, 2, 1}), Lengths{Nu: 0.1})
			return err
		}, "not positive definite"},
		"N 0":     {func() error { _, err := NuFixed(0); return err }, "context length N = 0"},
		"weights": {func() error { _, err := NuDistribution([]float64{-1, 2}); return err }, "weights[0]"},
	} {
		if err := c.f(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", name, err, c.want)
		}
	}
}
