// Package gemm multiplies the small dense row-major matrices of the flow's
// right-hand side and Jacobian, C = A·B with A m×k and B k×n, without
// allocating, on one goroutine or (MulShared, MulTAShared) with the rows
// of C shared among several, with the same bits.
//
// Three kernels compute the products (the register blocking of BLIS's
// micro-kernels: F. G. Van Zee and R. A. van de Geijn, BLIS, ACM TOMS 41
// (2015) 14), each keeping a block of C in registers and adding one rank-1
// update per term of the sum:
//
//   - amd64 with AVX2 and FMA: 6×8 and 4×8 blocks in twelve and eight YMM
//     registers, or, where the processor has AVX-512F, 4×16 blocks in
//     eight ZMM registers and 4×8 ones in the columns left
//     (golang.org/x/sys/cpu tells, including the operating system's
//     support; GODEBUG=cpu.avx512f=off turns AVX-512 off, and
//     GODEBUG=cpu.avx2=off both);
//   - arm64: 4×8 blocks in sixteen NEON registers;
//   - everywhere else, for the rows and columns the blocks leave over
//     (the last m mod 4 and n mod 8), and in builds with -tags purego:
//     the portable kernel, plain Go in 3×2 blocks (portable.go).
//
// Each element of C is a sum over the inner index in increasing order,
// started from zero. The assembly kernels add each term with a fused
// multiply–add, so their blocks have the same bits on every processor
// (TestKernelsAreFMAChains); the portable kernel adds a product rounded
// on its own on amd64, and a fused multiply–add where the compiler fuses
// (arm64 among others). So the last bits depend on the element's position,
// the architecture and the build, never on the run: the same product in
// one build on one machine is bit-identical every time.
package gemm

// kernels says which assembly kernels a product uses: the 4×8 blocks
// (AVX2 and FMA, or NEON), the 4×16 blocks (AVX-512F, only with the 4×8
// ones) and, where there are no 4×16 blocks, the 6×8 blocks (AVX2, only
// with the 4×8 ones).
type kernels struct{ k8, k16, k6 bool }

// Mul sets c = a·b for row-major a (m×k), b (k×n) and c (m×n). c must not
// overlap a or b.
func Mul(m, n, k int, a, b, c []float64) { mul(detected, m, n, k, a, b, c) }

// mul is Mul with the kernels ks.
func mul(ks kernels, m, n, k int, a, b, c []float64) {
	if trivial(m, n, k, a, b, c) {
		return
	}
	m4, n8 := ks.blocks(m, n, k, a, k, k, b, c, plain)
	// The right edge (columns n8..n of rows 0..m4) and the bottom rows.
	if n8 < n {
		loops(m4, n-n8, k, a, k, b[n8:], n, c[n8:], n)
	}
	if m4 < m {
		loops(m-m4, n, k, a[m4*k:], k, b, n, c[m4*n:], n)
	}
}

// kernelFunc is the signature of the assembly kernels: the block at c of
// the product of the block rows at a and columns at b.
type kernelFunc func(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

// kernelSet are the kernels of one kind of product, by block.
type kernelSet struct{ k4x16, k4x8, k6x8 kernelFunc }

var (
	plain  = kernelSet{kernel4x16, kernel4x8, kernel6x8}    // Mul
	transA = kernelSet{kernelT4x16, kernelT4x8, kernelT6x8} // MulTA
)

// blocks computes the blocks of the m×n product c that the kernels
// cover, the rows m4 = m − m mod 4 and columns n8 = n − n mod 8, and
// returns m4 and n8. Where the processor has AVX-512 they are 4×16 blocks
// and 4×8 ones in the columns left; else 6×8 blocks where ks.k6, the first
// rows (at most eight) in 4×8 blocks so that the 6×8 ones cover a
// multiple of twelve; else 4×8 blocks. Block row i of the left factor
// starts at a[i·aStep], with leading dimension lda (Mul: aStep = lda = k;
// MulTA, which reads aᵀ: aStep = 1, lda = m). Every kernel gives each
// element the same chain of fused multiply–adds, so the choice of blocks
// changes no bit.
func (ks kernels) blocks(m, n, k int, a []float64, aStep, lda int, b, c []float64, kf kernelSet) (m4, n8 int) {
	if !ks.k8 {
		return 0, 0
	}
	m4, n8 = m-m%4, n-n%8
	n16 := 0
	if ks.k16 {
		n16 = n - n%16
	}
	six := m4 // the rows from six on are in 6×8 blocks
	if ks.k6 && !ks.k16 {
		six = m4 % 12
	}
	for i, rows := 0, 4; i < m4; i += rows {
		if i >= six {
			rows = 6
		}
		for j := 0; j < n16; j += 16 {
			kf.k4x16(k, &a[i*aStep], lda, &b[j], n, &c[i*n+j], n)
		}
		kb := kf.k4x8
		if rows == 6 {
			kb = kf.k6x8
		}
		for j := n16; j < n8; j += 8 {
			kb(k, &a[i*aStep], lda, &b[j], n, &c[i*n+j], n)
		}
	}
	return m4, n8
}

// trivial checks the lengths and handles the products with nothing to sum,
// reporting whether that was all.
func trivial(m, n, k int, a, b, c []float64) bool {
	if len(a) < m*k || len(b) < k*n || len(c) < m*n {
		panic("gemm: slice too short")
	}
	if k == 0 {
		clear(c[:m*n])
	}
	return m == 0 || n == 0 || k == 0
}

// MulTA sets c = aᵀ·b for row-major a (k×m), b (k×n) and c (m×n), without
// forming aᵀ. c must not overlap a or b.
func MulTA(m, n, k int, a, b, c []float64) { mulTA(detected, m, n, k, a, b, c) }

// mulTA is MulTA with the kernels ks.
func mulTA(ks kernels, m, n, k int, a, b, c []float64) { mulTARows(ks, 0, m, m, n, k, a, b, c) }

// MulTARows sets the rows i0 … i1−1 of c = aᵀ·b (MulTA's operands), as
// MulTA sets them where i0 is a multiple of RowBlock: bit for bit the
// same, so that goroutines may share a product by rows.
func MulTARows(i0, i1, m, n, k int, a, b, c []float64) {
	mulTARows(detected, i0, i1, m, n, k, a, b, c)
}

// mulTARows is MulTARows with the kernels ks.
func mulTARows(ks kernels, i0, i1, m, n, k int, a, b, c []float64) {
	if i0 < 0 || i1 > m || i0 > i1 {
		panic("gemm: rows out of range")
	}
	if trivial(m, n, k, a, b, c) {
		return
	}
	rows, ar, cr := i1-i0, a[i0:], c[i0*n:]
	m4, n8 := ks.blocks(rows, n, k, ar, 1, m, b, cr, transA)
	// The right edge (columns n8..n of rows 0..m4) and the bottom rows.
	if n8 < n {
		loopsTA(m4, n-n8, k, ar, m, b[n8:], n, cr[n8:], n)
	}
	if m4 < rows {
		loopsTA(rows-m4, n, k, ar[m4:], m, b, n, cr[m4*n:], n)
	}
}

// RowBlock is the number of rows of c the kernels compute together: Mul
// on the rows i0 … i1−1 of a and c (a[i0·k:], c[i0·n:]) and MulTARows
// set them as the whole product does where i0 is a multiple of it.
const RowBlock = 4
