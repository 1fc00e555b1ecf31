package deflation

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// symmetric is a linearization whose Jacobian is a given symmetric
// matrix, J = −Q diag(eigs) Qᵀ with Q a random orthogonal matrix, the
// same at every point.
type symmetric struct {
	n int
	j []float64 // row-major
}

func (s *symmetric) At([]float64) {}

func (s *symmetric) Apply(dst, x []float64) {
	for i := range dst {
		dst[i] = impl.Ddot(s.n, s.j[i*s.n:], 1, x, 1)
	}
}

// newSymmetric returns J = −Q diag(eigs) Qᵀ, Q orthogonal (the QR
// factor of a Gaussian matrix).
func newSymmetric(eigs []float64, seed uint64) *symmetric {
	n := len(eigs)
	rng := rand.New(rand.NewPCG(seed, 1))
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			g.Set(i, k, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	s := &symmetric{n: n, j: make([]float64, n*n)}
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			var v float64
			for l, e := range eigs {
				v -= q.At(i, l) * e * q.At(k, l)
			}
			s.j[i*n+k] = v
		}
	}
	return s
}

// synthetic returns the Structure of a state θ of dimension d with h
// heads that holds W (its first H(D+1)·D entries, in W's order) and then
// ṽ, with λ_f = 1/(f + 1), τ = 1.5 and ZZ = BBᵀ/F + I for a Gaussian F × F
// matrix B, and the state's length.
func synthetic(d, h int, seed uint64) (Structure, int) {
	d1 := d + 1
	st := Structure{D: d, H: h, Tau: 1.5, Lambda: make([]float64, d)}
	for f := range st.Lambda {
		st.Lambda[f] = 1 / float64(f+1)
	}
	for a := 0; a < d1; a++ {
		for b := a; b < d1; b++ {
			st.Pairs = append(st.Pairs, [2]int{a, b})
		}
	}
	m := h * d1
	st.W, st.V = make([]int32, m*d), make([]int32, m)
	for i := range st.W {
		st.W[i] = int32(i)
	}
	for i := range st.V {
		st.V[i] = int32(m*d + i)
	}
	nf := len(st.Pairs) * d
	rng := rand.New(rand.NewPCG(seed, 2))
	b := mat.NewDense(nf, nf, nil)
	for i := 0; i < nf; i++ {
		for k := 0; k < nf; k++ {
			b.Set(i, k, rng.NormFloat64())
		}
	}
	var zz mat.Dense
	zz.Mul(b, b.T())
	zz.Scale(1/float64(nf), &zz)
	for i := 0; i < nf; i++ {
		zz.Set(i, i, zz.At(i, i)+1)
	}
	st.ZZ = denseMoments{&zz}
	return st, m*d + m
}

type denseMoments struct{ *mat.Dense }

func (z denseMoments) MulVec(dst, c []float64) {
	mat.NewVecDense(len(dst), dst).MulVec(z.Dense, mat.NewVecDense(len(c), c))
}

func normal(rng *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = scale * rng.NormFloat64()
	}
	return x
}

func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range got {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

// TestPrecond: on J = −Q diag(θ) Qᵀ with θ spread over seven decades,
// the Ritz values the preconditioner keeps are the largest θ, its Ritz
// vectors orthonormal, Solve applies the pairs with γθ ≥ MinScale (some,
// not all), the structured deflation acts (a scale below −0.1), and
// Solve is the two-level inverse
// V diag(1/(1 + γθ)) Vᵀ + (I − VVᵀ) P_S⁻¹ (I − VVᵀ) formed step by step
// in double, to single precision.
func TestPrecond(t *testing.T) {
	st, n := synthetic(3, 3, 7)
	eigs := make([]float64, n)
	for i := range eigs {
		eigs[i] = 1e3 * math.Pow(1e-7, float64(i)/float64(n-1))
	}
	lin := newSymmetric(eigs, 3)
	p := New(lin, n, 30, NewKron(st, 4, 0), 0)
	const gamma = 0.1
	rng := rand.New(rand.NewPCG(4, 5))
	if _, err := p.Setup(0, normal(rng, n, 0.5), gamma, false); err != nil {
		t.Fatal(err)
	}
	theta, vecs := p.Ritz()
	if len(theta) < 5 {
		t.Fatalf("kept %d Ritz pairs, want at least 5 of n = %d", len(theta), n)
	}
	for i := 0; i < 5; i++ {
		if math.Abs(theta[i]-eigs[i]) > 1e-9*eigs[0] {
			t.Errorf("Ritz value %d: %.15g, eigenvalue of −J %.15g", i, theta[i], eigs[i])
		}
	}
	for i := range vecs {
		for j := 0; j <= i; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if g := impl.Ddot(n, vecs[i], 1, vecs[j], 1); math.Abs(g-want) > 1e-10 {
				t.Fatalf("Ritz vectors %d, %d: inner product %g, want %g", i, j, g, want)
			}
		}
	}
	if k := p.Applied(); k == 0 || k == len(theta) || gamma*theta[k] >= MinScale || gamma*theta[k-1] < MinScale {
		t.Errorf("Solve applies %d of %d Ritz pairs at γ = %g", k, len(theta), gamma)
	}
	if kr := p.Kron(); kr.active == 0 || slices.Min(kr.scale) > -0.1 {
		t.Fatalf("the structured deflation acts little (%d pairs, its least scale %g): the test does not check it", kr.active, slices.Min(kr.scale))
	}
	x := normal(rng, n, 1)
	z := make([]float64, n)
	p.Solve(z, x)
	if e := relErr(z, twoLevelInverse(p, gamma, x)); e > 1e-6 {
		t.Errorf("Solve differs from the two-level inverse by %.3g", e)
	}
}

// twoLevelInverse is P⁻¹x = V diag(1/(1 + γθ)) Vᵀx + (I − VVᵀ) P_S⁻¹ (I −
// VVᵀ) x, in double and step by step (P_S = I without the structured
// deflation). Solve's products with the Ritz vectors are in single
// precision (unit roundoff 6·10⁻⁸), its inner products accumulated in
// double.
func twoLevelInverse(p *Precond, gamma float64, x []float64) []float64 {
	k := len(p.scale)
	complement := func(v []float64) []float64 {
		out := append([]float64(nil), v...)
		for i := 0; i < k; i++ {
			impl.Daxpy(p.n, -impl.Ddot(p.n, p.q[i], 1, v, 1), p.q[i], 1, out, 1)
		}
		return out
	}
	ps := complement(x)
	if kr := p.kron; kr != nil {
		e := make([]float64, kr.active*kr.d)
		kr.coords(e, ps, kr.active)
		for i := range e {
			e[i] *= kr.scale[i]
		}
		kr.addSpan(ps, e)
	}
	z := complement(ps)
	for i := 0; i < k; i++ {
		impl.Daxpy(p.n, impl.Ddot(p.n, p.q[i], 1, x, 1)/(1+gamma*p.theta[i]), p.q[i], 1, z, 1)
	}
	return z
}

// TestKronEigenpairs: the eigenpairs Kron keeps are G's largest, G formed
// column by column from MulG, and G is symmetric.
func TestKronEigenpairs(t *testing.T) {
	st, n := synthetic(4, 2, 9)
	k := NewKron(st, 5, 0)
	k.At(normal(rand.New(rand.NewPCG(6, 7)), n, 1))
	m := k.m
	g := make([]float64, m*m)
	e, col := make([]float64, m), make([]float64, m)
	for j := 0; j < m; j++ {
		clear(e)
		e[j] = 1
		k.MulG(col, e)
		for i := range col {
			g[i*m+j] = col[i]
		}
	}
	for i := 0; i < m; i++ {
		for j := 0; j < i; j++ {
			if math.Abs(g[i*m+j]-g[j*m+i]) > 1e-12*math.Abs(g[i*m+i]) {
				t.Fatalf("G is not symmetric: G[%d, %d] = %g, G[%d, %d] = %g", i, j, g[i*m+j], j, i, g[j*m+i])
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(m, g), false) {
		t.Fatal("eigendecomposition failed")
	}
	want := eig.Values(nil)
	sort.Sort(sort.Reverse(sort.Float64Slice(want)))
	for j, mu := range k.mu {
		if math.Abs(mu-want[j]) > 1e-9*want[0] {
			t.Errorf("eigenvalue %d of G: %.15g, want %.15g", j, mu, want[j])
		}
	}
}

// TestSolveShared: Solve's passes over the Ritz vectors shared by one to
// four goroutines (solveShare; here over five blocks and a part of one)
// give the same Vᵀr and the same V c, bit for bit, and Vᵀr equals the
// inner products to single precision.
func TestSolveShared(t *testing.T) {
	const n, m = 4*solveBlock + 300, 7
	rnd := rand.New(rand.NewPCG(5, 6))
	p := &Precond{n: n, m: m, v32: make([]float32, m*n), r32: make([]float32, n), c32: make([]float32, m),
		proj: make([]float64, m)}
	for i := range p.v32 {
		p.v32[i] = float32(rnd.NormFloat64())
	}
	x, c := normal(rnd, n, 1), normal(rnd, m, 1)
	var coords, span []float64
	for w := 1; w <= 4; w++ {
		p.share(w)
		got := slices.Clone(p.coords(m, x))
		z := make([]float64, n)
		p.addSpan(z, c)
		if w == 1 {
			coords, span = got, z
			for i := range m { // row i of V, by blocks: vBlock's layout
				var want float64
				for j0 := 0; j0 < n; j0 += solveBlock {
					vb, nb := p.vBlock(j0)
					for j := range nb {
						want += float64(vb[i*nb+j]) * x[j0+j]
					}
				}
				if math.Abs(got[i]-want) > 1e-5*math.Sqrt(n) {
					t.Errorf("(Vᵀx)_%d = %.9g, want %.9g", i, got[i], want)
				}
			}
			continue
		}
		for i := range coords {
			if math.Float64bits(got[i]) != math.Float64bits(coords[i]) {
				t.Fatalf("%d goroutines: (Vᵀx)_%d = %v, one goroutine %v", w, i, got[i], coords[i])
			}
		}
		for i := range span {
			if math.Float64bits(z[i]) != math.Float64bits(span[i]) {
				t.Fatalf("%d goroutines: (Vc)_%d = %v, one goroutine %v", w, i, z[i], span[i])
			}
		}
	}
}

// TestKronShared: the structured deflation's coordinates and span shared
// by 2 and 3 goroutines (products by rows from multiples of
// gemm.RowBlock, gathers and scatters by entries) give the bits of one
// goroutine, for every count of pairs applied (row counts off the
// blocks), and its coordinates are Qᵀ X (to 1e-12 of a plain loop's).
func TestKronShared(t *testing.T) {
	const d = 9 // the kernels take 8 and 16 columns
	st, n := synthetic(d, d, 11)
	k := NewKron(st, 40, 0)
	rng := rand.New(rand.NewPCG(8, 9))
	k.At(normal(rng, n, 0.5))
	x := normal(rng, n, 1)
	for nj := 1; nj <= k.r; nj += 3 {
		c := make([]float64, nj*d)
		var coords, span []float64
		for w := 1; w <= 3; w++ {
			k.workers = w
			k.coords(c, x, nj)
			z := slices.Clone(x)
			k.addSpan(z, c)
			if w == 1 {
				coords, span = slices.Clone(c), z
				for j := 0; j < nj; j++ {
					for f := 0; f < d; f++ {
						var want float64
						for i := 0; i < k.m; i++ {
							want += k.q[j*k.m+i] * x[st.W[i*d+f]]
						}
						if math.Abs(c[j*d+f]-want) > 1e-12*(1+math.Abs(want)) {
							t.Fatalf("pairs %d: coordinate (%d, %d) = %v, plain loop %v", nj, j, f, c[j*d+f], want)
						}
					}
				}
				continue
			}
			for i := range c {
				if math.Float64bits(c[i]) != math.Float64bits(coords[i]) {
					t.Fatalf("pairs %d, %d goroutines: coordinate %d = %v, one goroutine %v", nj, w, i, c[i], coords[i])
				}
			}
			for i := range z {
				if math.Float64bits(z[i]) != math.Float64bits(span[i]) {
					t.Fatalf("pairs %d, %d goroutines: entry %d of the span = %v, one goroutine %v", nj, w, i, z[i], span[i])
				}
			}
		}
	}
}
