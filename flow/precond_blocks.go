package flow

import (
	"math"
	"slices"
)

// factor forms P = I − γJ on every block and factors it by LU with partial
// pivoting (each block a principal submatrix, symmetric positive definite
// where I − γJ is; pivoting keeps the factorization stable where γ is too
// large for that), and 1/P_xx for the singletons.
func (bp *blockPrecond) factor(gamma float64) error {
	for x, b := range bp.slot {
		bp.inv[x] = 0
		if b < 0 {
			bp.inv[x] = 1 / (1 - gamma*bp.diag[x])
		}
	}
	nb := len(bp.blockOff) - 1
	bp.luOff = slices.Grow(bp.luOff[:0], nb+1)[:nb+1]
	bp.luOff[0] = 0
	for b := 0; b < nb; b++ {
		c := bp.blockOff[b+1] - bp.blockOff[b]
		bp.luOff[b+1] = bp.luOff[b] + c*c
	}
	bp.lu = slices.Grow(bp.lu[:0], int(bp.luOff[nb]))[:bp.luOff[nb]]
	bp.piv = slices.Grow(bp.piv[:0], len(bp.members))[:len(bp.members)]
	for b := 0; b < nb; b++ {
		mem := bp.members[bp.blockOff[b]:bp.blockOff[b+1]]
		a := bp.lu[bp.luOff[b]:bp.luOff[b+1]]
		c := len(mem)
		for r, x := range mem {
			for k, y := range mem {
				var e float64
				if r == k {
					e = 1 - gamma*bp.diag[x]
				} else {
					e = -gamma * bp.je.entry(int(x), int(y))
				}
				a[r*c+k] = e
			}
		}
		if !luFactor(a, c, bp.piv[bp.blockOff[b]:bp.blockOff[b+1]]) {
			return errSingularBlock
		}
	}
	return nil
}

// Solve writes P⁻¹r into z.
func (bp *blockPrecond) Solve(z, r []float64) {
	for x, v := range bp.inv {
		z[x] = v * r[x]
	}
	for b := 0; b+1 < len(bp.blockOff); b++ {
		mem := bp.members[bp.blockOff[b]:bp.blockOff[b+1]]
		bp.rb = slices.Grow(bp.rb[:0], len(mem))[:len(mem)]
		for i, x := range mem {
			bp.rb[i] = r[x]
		}
		luSolve(bp.lu[bp.luOff[b]:bp.luOff[b+1]], len(mem), bp.piv[bp.blockOff[b]:bp.blockOff[b+1]], bp.rb)
		for i, x := range mem {
			z[x] = bp.rb[i]
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
