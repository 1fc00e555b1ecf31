package flow

import (
	"math"
	"slices"
)

// blockEntries keeps J on every block (the principal submatrices).
func (bp *blockPrecond) blockEntries() {
	nb := len(bp.blockOff) - 1
	bp.luOff = slices.Grow(bp.luOff[:0], nb+1)[:nb+1]
	bp.luOff[0] = 0
	for b := 0; b < nb; b++ {
		c := bp.blockOff[b+1] - bp.blockOff[b]
		bp.luOff[b+1] = bp.luOff[b] + c*c
	}
	bp.bj = slices.Grow(bp.bj[:0], int(bp.luOff[nb]))[:bp.luOff[nb]]
	for b := 0; b < nb; b++ {
		mem := bp.members[bp.blockOff[b]:bp.blockOff[b+1]]
		a := bp.bj[bp.luOff[b]:bp.luOff[b+1]]
		for r, x := range mem {
			for k, y := range mem {
				if r == k {
					a[r*len(mem)+k] = bp.diag[x]
				} else {
					a[r*len(mem)+k] = bp.je.entry(int(x), int(y))
				}
			}
		}
	}
}

// factor forms P = I − γJ on every block, factors it by LU with partial
// pivoting (each block a principal submatrix, symmetric positive definite
// where I − γJ is; pivoting keeps the factorization stable where γ is too
// large for that) and keeps its inverse, so that a solve is one small
// matrix–vector product per block; and 1/P_xx for the singletons.
func (bp *blockPrecond) factor(gamma float64) error {
	for x, b := range bp.slot {
		bp.inv[x] = 0
		if b < 0 {
			bp.inv[x] = 1 / (1 - gamma*bp.diag[x])
		}
	}
	nb := len(bp.blockOff) - 1
	bp.lu = slices.Grow(bp.lu[:0], len(bp.bj))[:len(bp.bj)]
	bp.piv = slices.Grow(bp.piv[:0], precondMaxBlock)[:precondMaxBlock]
	bp.work = slices.Grow(bp.work[:0], precondMaxBlock*precondMaxBlock)[:precondMaxBlock*precondMaxBlock]
	bp.rb = slices.Grow(bp.rb[:0], precondMaxBlock)[:precondMaxBlock]
	for b := 0; b < nb; b++ {
		c := int(bp.blockOff[b+1] - bp.blockOff[b])
		a, jb := bp.work[:c*c], bp.bj[bp.luOff[b]:bp.luOff[b+1]]
		for i, v := range jb {
			a[i] = -gamma * v
		}
		for r := 0; r < c; r++ {
			a[r*c+r]++
		}
		if !luFactor(a, c, bp.piv[:c]) {
			return errSingularBlock
		}
		inv, col := bp.lu[bp.luOff[b]:bp.luOff[b+1]], bp.rb[:c]
		for k := 0; k < c; k++ { // column k of the inverse
			clear(col)
			col[k] = 1
			luSolve(a, c, bp.piv[:c], col)
			for r, v := range col {
				inv[r*c+k] = v
			}
		}
	}
	return nil
}

// Solve writes P⁻¹r into z: the singletons' quotients, then the blocks'
// products with their inverses, pairs and triples in loops of their own.
func (bp *blockPrecond) Solve(z, r []float64) {
	for x, v := range bp.inv {
		z[x] = v * r[x]
	}
	s2, s3, s4 := int(bp.sizeStart[2]), int(bp.sizeStart[3]), int(bp.sizeStart[4])
	m2, inv2 := bp.members[bp.blockOff[s2]:bp.blockOff[s3]], bp.lu[bp.luOff[s2]:bp.luOff[s3]]
	for b := 0; 2*b+1 < len(m2); b++ {
		x, y := m2[2*b], m2[2*b+1]
		p, rx, ry := inv2[4*b:4*b+4], r[x], r[y]
		z[x], z[y] = p[0]*rx+p[1]*ry, p[2]*rx+p[3]*ry
	}
	m3, inv3 := bp.members[bp.blockOff[s3]:bp.blockOff[s4]], bp.lu[bp.luOff[s3]:bp.luOff[s4]]
	for b := 0; 3*b+2 < len(m3); b++ {
		x, y, w := m3[3*b], m3[3*b+1], m3[3*b+2]
		p, rx, ry, rw := inv3[9*b:9*b+9], r[x], r[y], r[w]
		z[x], z[y], z[w] = p[0]*rx+p[1]*ry+p[2]*rw, p[3]*rx+p[4]*ry+p[5]*rw, p[6]*rx+p[7]*ry+p[8]*rw
	}
	for b := s4; b+1 < len(bp.blockOff); b++ {
		mem := bp.members[bp.blockOff[b]:bp.blockOff[b+1]]
		inv := bp.lu[bp.luOff[b]:bp.luOff[b+1]]
		c := len(mem)
		for row, x := range mem {
			var s float64
			w := inv[row*c : (row+1)*c]
			for k, y := range mem {
				s += w[k] * r[y]
			}
			z[x] = s
		}
	}
}

// luFactor factors the row-major c×c matrix a in place, PA = LU with
// partial pivoting (LAPACK's dgetf2); false if a pivot vanishes.
func luFactor(a []float64, c int, piv []int32) bool {
	for k := 0; k < c; k++ {
		p := k
		for i := k + 1; i < c; i++ {
			if math.Abs(a[i*c+k]) > math.Abs(a[p*c+k]) {
				p = i
			}
		}
		piv[k] = int32(p)
		if a[p*c+k] == 0 {
			return false
		}
		if p != k {
			for j := 0; j < c; j++ {
				a[k*c+j], a[p*c+j] = a[p*c+j], a[k*c+j]
			}
		}
		inv := 1 / a[k*c+k]
		for i := k + 1; i < c; i++ {
			l := a[i*c+k] * inv
			a[i*c+k] = l
			for j := k + 1; j < c; j++ {
				a[i*c+j] -= l * a[k*c+j]
			}
		}
	}
	return true
}

// luSolve solves A x = b in place with luFactor's factors.
func luSolve(a []float64, c int, piv []int32, b []float64) {
	for k := 0; k < c; k++ {
		if p := int(piv[k]); p != k {
			b[k], b[p] = b[p], b[k]
		}
	}
	for i := 1; i < c; i++ {
		for j := 0; j < i; j++ {
			b[i] -= a[i*c+j] * b[j]
		}
	}
	for i := c - 1; i >= 0; i-- {
		for j := i + 1; j < c; j++ {
			b[i] -= a[i*c+j] * b[j]
		}
		b[i] /= a[i*c+i]
	}
}
