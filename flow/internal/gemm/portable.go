package gemm

// The portable kernel: plain Go for the products (or the parts of them)
// that no assembly kernel covers. Each element of c is the sum over the
// inner index in increasing order, started from zero, whatever the block
// that computes it, so the blocking below changes no bit.
//
// The blocks are 3×2: six sums, three values of a and two of b in
// registers, eleven in all. That is what fits the fifteen floating-point
// registers the Go compiler allocates on amd64 without spilling (4×4,
// 4×2 and 2×4 blocks spill, 4×4 at less than half the speed). On one
// core of a 2-core AMD EPYC (Zen 5, virtualized), 32×32 products run at
// 9.4 GFlops (a·b) and 8.5 (aᵀ·b), where the 2×4 blocks of before ran at
// 7.2 and one sum at a time (aᵀ·b before) at 1.8 (the best of 200
// timings of a few products; BenchmarkMul). The offsets into a and b
// advance by their strides rather than being multiplied out, which leaves
// one bounds check per term and operand; the last rows and column are a
// block overlapping the one before.
//
// Where the compiler fuses x·y + s into a multiply–add (arm64 among
// others, and amd64 built for GOAMD64=v3), each term is one fused
// multiply–add, as in the assembly kernels; on amd64 otherwise, a product
// and a sum, each rounded.

// loops sets the m×n block c = a·b with leading dimensions lda, ldb, ldc.
func loops(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m < 3 || n < 2 {
		for i := range m {
			rowTimes(n, k, a[i*lda:i*lda+k], 1, b, ldb, c[i*ldc:i*ldc+n])
		}
		return
	}
	for i := 0; i < m; i += 3 {
		i = min(i, m-3) // the last rows: a block overlapping the one before, which it sets again to the same bits
		a0 := a[i*lda : i*lda+k]
		a1 := a[(i+1)*lda : (i+1)*lda+k][:len(a0)]
		a2 := a[(i+2)*lda : (i+2)*lda+k][:len(a0)]
		c0, c1, c2 := c[i*ldc:i*ldc+n], c[(i+1)*ldc:(i+1)*ldc+n], c[(i+2)*ldc:(i+2)*ldc+n]
		for j := 0; j < n; j += 2 {
			j = min(j, n-2) // the last column likewise
			var s00, s01, s10, s11, s20, s21 float64
			o := j
			for l, x0 := range a0 {
				x1, x2 := a1[l], a2[l]
				bl := b[o : o+2 : o+2]
				o += ldb
				b0, b1 := bl[0], bl[1]
				s00 += x0 * b0
				s01 += x0 * b1
				s10 += x1 * b0
				s11 += x1 * b1
				s20 += x2 * b0
				s21 += x2 * b1
			}
			c0[j], c0[j+1] = s00, s01
			c1[j], c1[j+1] = s10, s11
			c2[j], c2[j+1] = s20, s21
		}
	}
}

// loopsTA sets the m×n block c = aᵀ·b, a read as k×m with leading
// dimension lda (row l of a holds the terms l of the m rows of c).
func loopsTA(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m < 3 || n < 2 {
		for i := range m {
			rowTimes(n, k, a[i:], lda, b, ldb, c[i*ldc:i*ldc+n])
		}
		return
	}
	for i := 0; i < m; i += 3 {
		i = min(i, m-3) // as in loops
		c0, c1, c2 := c[i*ldc:i*ldc+n], c[(i+1)*ldc:(i+1)*ldc+n], c[(i+2)*ldc:(i+2)*ldc+n]
		for j := 0; j < n; j += 2 {
			j = min(j, n-2)
			var s00, s01, s10, s11, s20, s21 float64
			oa, ob := i, j
			for range k {
				al := a[oa : oa+3 : oa+3]
				bl := b[ob : ob+2 : ob+2]
				oa += lda
				ob += ldb
				x0, x1, x2 := al[0], al[1], al[2]
				b0, b1 := bl[0], bl[1]
				s00 += x0 * b0
				s01 += x0 * b1
				s10 += x1 * b0
				s11 += x1 * b1
				s20 += x2 * b0
				s21 += x2 * b1
			}
			c0[j], c0[j+1] = s00, s01
			c1[j], c1[j+1] = s10, s11
			c2[j], c2[j+1] = s20, s21
		}
	}
}

// rowTimes sets the row c (length n) to x·b for the row vector x of k
// terms, term l at x[l·inc], four columns at a time.
func rowTimes(n, k int, x []float64, inc int, b []float64, ldb int, c []float64) {
	j := 0
	for ; j+4 <= n; j += 4 {
		var s0, s1, s2, s3 float64
		ox, ob := 0, j
		for range k {
			v := x[ox]
			bl := b[ob : ob+4 : ob+4]
			ox += inc
			ob += ldb
			s0 += v * bl[0]
			s1 += v * bl[1]
			s2 += v * bl[2]
			s3 += v * bl[3]
		}
		c[j], c[j+1], c[j+2], c[j+3] = s0, s1, s2, s3
	}
	for ; j < n; j++ {
		var s float64
		ox, ob := 0, j
		for range k {
			s += x[ox] * b[ob]
			ox += inc
			ob += ldb
		}
		c[j] = s
	}
}
