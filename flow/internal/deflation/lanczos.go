package deflation

import (
	"math"
	"math/rand/v2"

	"github.com/linattn/linattn/internal/share"
	"gonum.org/v1/gonum/mat"
)

// lanczos is the Lanczos iteration with full reorthogonalization on a
// symmetric operator of order n, which the preconditioner runs on −J
// (Precond) and on the key–query block's curvature G (Kron).
//
// References:
//
//	Y. Saad, Numerical Methods for Large Eigenvalue Problems, 2nd ed.,
//	SIAM (2011), 6.6 (the Lanczos algorithm with full reorthogonalization).
type lanczos struct {
	n, steps int
	procs    int         // the processors orthogonalize may share (share.GemvWorkers)
	slab     []float64   // the basis, (steps+1) × n row-major
	q        [][]float64 // its rows
	w, proj  []float64
}

func newLanczos(n, steps, procs int) *lanczos {
	l := &lanczos{n: n, steps: steps, procs: procs, slab: make([]float64, (steps+1)*n), w: make([]float64, n), proj: make([]float64, steps+1)}
	for j := 0; j <= steps; j++ {
		l.q = append(l.q, l.slab[j*n:(j+1)*n:(j+1)*n])
	}
	return l
}

// run takes up to l.steps steps on op (dst = A·x) from a start drawn from
// the fixed stream seed (the same bits every run), each new vector
// reorthogonalized against the whole basis after the three-term
// recurrence (so that one pass of Gram–Schmidt mostly suffices), and
// returns the coefficients of the tridiagonal T = QᵀAQ and its order m:
// fewer than l.steps where the Krylov space is invariant
// (β ≤ 10⁻¹²|α₀|).
func (l *lanczos) run(op func(dst, x []float64), seed [2]uint64) (alpha, beta []float64, m int) {
	n, q, w := l.n, l.q, l.w
	rng := rand.New(rand.NewPCG(seed[0], seed[1]))
	for k := range q[0] {
		q[0][k] = rng.NormFloat64()
	}
	impl.Dscal(n, 1/impl.Dnrm2(n, q[0], 1), q[0], 1)
	alpha, beta = make([]float64, 0, l.steps), make([]float64, 0, l.steps)
	for j := 0; j < l.steps; j++ {
		op(w, q[j])
		alpha = append(alpha, impl.Ddot(n, w, 1, q[j], 1))
		impl.Daxpy(n, -alpha[j], q[j], 1, w, 1) // the three-term recurrence, then the reorthogonalization
		if j > 0 {
			impl.Daxpy(n, -beta[j-1], q[j-1], 1, w, 1)
		}
		b := l.orthogonalize(w, j+1)
		m = j + 1
		beta = append(beta, b)
		if !(b > 1e-12*math.Abs(alpha[0])) || j+1 == l.steps {
			break
		}
		copy(q[j+1], w)
		impl.Dscal(n, 1/b, q[j+1], 1)
	}
	return alpha, beta, m
}

// orthogonalize makes w orthogonal to the basis q[:k] by classical
// Gram–Schmidt, a second time where the first lost more than 1 − 1/√2 of
// w's norm (the DGKS criterion: twice is enough), and returns ‖w‖. Its
// passes over the basis are shared among l.procs processors
// (share.GemvWorkers), with the same bits.
//
// References:
//
//	J. W. Daniel, W. B. Gragg, L. Kaufman, G. W. Stewart, Reorthogonalization
//	and stable algorithms for updating the Gram–Schmidt QR factorization,
//	Math. Comp. 30 (1976) 772–795.
func (l *lanczos) orthogonalize(w []float64, k int) float64 {
	n, c := l.n, l.proj[:k]
	workers := share.GemvWorkers(k, n, l.procs)
	before := impl.Dnrm2(n, w, 1)
	for pass := 0; pass < 2; pass++ {
		share.MulVec(k, n, l.slab, w, c, workers)
		share.AddMulTVec(k, n, -1, l.slab, c, w, workers)
		after := impl.Dnrm2(n, w, 1)
		if after > before/math.Sqrt2 {
			return after
		}
		before = after
	}
	return before
}

// tridiagonalEigen returns the eigenvalues of the m × m tridiagonal T with
// diagonal alpha and off-diagonal beta, in increasing order, and its
// eigenvectors as the columns of vecs; ok is false if the decomposition
// failed.
func tridiagonalEigen(alpha, beta []float64, m int) (vals []float64, vecs *mat.Dense, ok bool) {
	t := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		t.SetSym(i, i, alpha[i])
		if i+1 < m {
			t.SetSym(i, i+1, beta[i])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(t, true) {
		return nil, nil, false
	}
	vecs = new(mat.Dense)
	eig.VectorsTo(vecs)
	return eig.Values(nil), vecs, true
}
