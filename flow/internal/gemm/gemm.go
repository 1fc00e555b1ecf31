// Package gemm multiplies the small dense row-major matrices of the flow's
// right-hand side and Jacobian, C = A·B with A m×k and B k×n, without
// allocating and without goroutines.
//
// On amd64 processors with AVX2 and FMA, 4×8 blocks of C are computed by an
// assembly kernel that keeps the block in eight vector registers and adds
// one rank-1 update per term of the sum (the register blocking of BLIS's
// micro-kernels: F. G. Van Zee and R. A. van de Geijn, BLIS, ACM TOMS 41
// (2015) 14), and 4×16 blocks by the same kernel with AVX-512 registers
// where the processor has them (golang.org/x/sys/cpu tells, including the
// operating system's support); the rows and columns left over, other
// processors and builds with -tags purego use the portable kernel, plain
// Go with 3×2 register blocks (portable.go). Each element of C is a sum over the
// inner index in increasing order; inside the kernel's blocks the products
// are added with fused multiply–adds, at the edges (the last m mod 4 rows
// and n mod 8 columns) and on other processors without, so the last bits
// depend on the element's position and the processor, never on the run:
// the same product on one machine is bit-identical every time.
package gemm

// kernels says which assembly kernels a product uses: the 4×8 blocks
// (AVX2 and FMA) and the 4×16 blocks (AVX-512F, only with the 4×8 ones).
type kernels struct{ k8, k16 bool }

// Mul sets c = a·b for row-major a (m×k), b (k×n) and c (m×n). c must not
// overlap a or b.
func Mul(m, n, k int, a, b, c []float64) { mul(detected, m, n, k, a, b, c) }

// mul is Mul with the kernels ks.
func mul(ks kernels, m, n, k int, a, b, c []float64) {
	if trivial(m, n, k, a, b, c) {
		return
	}
	m4, n8 := ks.blocks(m, n, k, a, k, k, b, c, kernel4x16, kernel4x8)
	// The right edge (columns n8..n of rows 0..m4) and the bottom rows.
	if n8 < n {
		loops(m4, n-n8, k, a, k, b[n8:], n, c[n8:], n)
	}
	if m4 < m {
		loops(m-m4, n, k, a[m4*k:], k, b, n, c[m4*n:], n)
	}
}

// kernelFunc is the signature of the assembly kernels: the 4×8 or 4×16
// block at c of the product of the block rows at a and columns at b.
type kernelFunc func(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

// blocks computes the blocks of the m×n product c that the kernels
// cover, with k16 on 4×16 blocks where the processor has AVX-512 and k8 on
// the 4×8 ones left, and returns the rows m4 and columns n8 covered. Block
// row i of the left factor starts at a[i·aStep], with leading dimension
// lda (Mul: aStep = lda = k; MulTA, which reads aᵀ: aStep = 1, lda = m).
func (ks kernels) blocks(m, n, k int, a []float64, aStep, lda int, b, c []float64, k16, k8 kernelFunc) (m4, n8 int) {
	if !ks.k8 {
		return 0, 0
	}
	m4, n8 = m-m%4, n-n%8
	n16 := 0
	if ks.k16 {
		n16 = n - n%16
	}
	for i := 0; i < m4; i += 4 {
		for j := 0; j < n16; j += 16 {
			k16(k, &a[i*aStep], lda, &b[j], n, &c[i*n+j], n)
		}
		for j := n16; j < n8; j += 8 {
			k8(k, &a[i*aStep], lda, &b[j], n, &c[i*n+j], n)
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
	m4, n8 := ks.blocks(rows, n, k, ar, 1, m, b, cr, kernelT4x16, kernelT4x8)
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
