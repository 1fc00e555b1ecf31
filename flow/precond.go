package flow

import (
	"errors"
	"math"
	"slices"

	"github.com/linattn/linattn/flow/internal/deflation"
	"github.com/linattn/linattn/ode"
)

// Preconditioner returns the preconditioner of the flow's Newton matrix
// I − γJ for ode.BDF (ode.Problem.Precond): for the full layer too large
// to factor (n > ode.MaxDenseDim), and the merged full layer from
// deflateMinDim on, I − γJ on J's stiffest eigenvectors
// (deflation.Precond), for the merged model with the Kronecker structure
// of its key–query block's curvature on their complement
// (deflation.Kron);
// nil for the merged model, the smaller full layer and task laws with
// fixed tasks (whose Jacobian entries jacEntries does not know; BDF then
// factors I − γJ densely).
//
// The stiffness of the separate model's flow is in its learned heads, and
// there J is, in eigen coordinates, close to a sum of small blocks: a head
// aligned with e_σ couples k_j[a] to the query component q_l[σ] of the
// head l that has learned e_a (both move the entry M_aσ of the effective
// map), and v_i to k_j[σ] and q_j[σ]; misalignment and the dormant heads
// add small entries everywhere. The preconditioner is P = I − γJ restricted
// to a partition of the state into blocks of at most precondMaxBlock
// variables, found by joining the variables of the strongest couplings
// γ|J_xy|/√(P_xx P_yy) ≥ precondDrop first (greedily, as Kruskal's
// algorithm, up to the size cap). Each block is a principal submatrix of
// I − γJ, so P is symmetric and positive definite wherever I − γJ is
// (Cauchy interlacing), and P⁻¹(I − γJ) has its spectrum near 1: on the
// D = 16 power-law plateaus within [0.3, 2.2] for h·ρ up to 7·10⁴, within
// [0.8, 1.2] for h·ρ ≤ 10³, where J's own spans four decades.
//
// The couplings are found in O((H·R)²·D) work without forming J
// (couplingScan, jacEntries), the blocks factored by LU; a setup costs
// about as much as a few evaluations of the flow, and BDF asks for one
// every 20 steps or so, for fresh Jacobian data every 51 at most.
//
// References:
//
//	P. N. Brown, A. C. Hindmarsh, Reduced storage matrix methods in stiff
//	ODE systems, Appl. Math. Comput. 31 (1989) 40–91 (preconditioners from
//	the structure of J).
//	Y. Saad, Iterative Methods for Sparse Linear Systems, 2nd ed., SIAM
//	2003, 10.3 (dropping by magnitude relative to the diagonal).
func (s *System) Preconditioner() ode.Preconditioner {
	switch s.plan.Precond {
	case DeflationPrecond:
		return newDeflation(s) // deflation.go
	case NoPrecond:
		return nil
	}
	je := newJacEntries(s)
	n, hr := s.n, je.hr
	return &blockPrecond{s: s, je: je, diag: make([]float64, n), inv: make([]float64, n),
		parent: make([]int32, n), size: make([]int32, n), slot: make([]int32, n),
		cs: couplingScan{je: je, limit: precondCandidates * n, is: make([]float64, n), kaMax: make([]float64, hr), qlMax: make([]float64, hr),
			ca: make([]float64, je.d), cb: make([]float64, je.d), gRowMax: make([]float64, je.d)}}
}

// The preconditioner's dropping threshold and block size cap: on the
// D = 16 plateaus, 0.01 and 16 keep P⁻¹(I − γJ)'s spectrum within
// [0.37, 1.8] at h·ρ = 7·10⁴ with blocks of at most 10 variables.
// Couplings are searched down to precondDrop/precondMargin, so that the
// Jacobian data stay useful while γ grows (the strengths grow with γ),
// and at most precondCandidates per variable are kept, the strongest: a
// variable joins at most precondMaxBlock − 1 others. The power-law runs
// until converged (H = D, R = 1) keep at most 1.7, 1.8, 2.6 and 3.4 per
// variable at D = 16, 32, 64 and 128, where the bound leaves the
// partition as it was; on D = 256's final approach a setup finds 17 million (129 per
// variable), and its sampling, 17 GB resident without the bound, stays
// at 1.5 GB.
const (
	precondDrop       = 0.01
	precondMaxBlock   = 16
	precondMargin     = 4
	precondCandidates = 16
)

// blockPrecond is the block preconditioner of the separate model.
type blockPrecond struct {
	s     *System
	je    *jacEntries
	cs    couplingScan
	diag  []float64 // J_xx
	cands []coupling
	ready bool // the Jacobian data have been evaluated

	parent, size []int32                    // union–find
	slot         []int32                    // the block of each variable, −1 for a singleton
	sizeStart    [precondMaxBlock + 2]int32 // blocks of c variables: sizeStart[c] ≤ b < sizeStart[c+1]
	blockOff     []int32                    // members of block b: members[blockOff[b]:blockOff[b+1]]
	members      []int32
	next         []int32 // scratch for collect
	luOff        []int32 // the inverse of block b: lu[luOff[b]:luOff[b+1]]
	lu           []float64
	bj           []float64 // J on block b, in the same places
	piv          []int32   // scratch for factor
	work         []float64
	inv          []float64 // 1/P_xx of singletons
	rb           []float64 // scratch for one block
}

var errSingularBlock = errors.New("flow: a block of the preconditioner I − γJ is singular")

// Setup evaluates the Jacobian data at y unless jacOK and partitions the
// state for γ, then factors the blocks of I − γJ. With jacOK only the
// factorization is redone: the partition of the last evaluation serves
// for the new γ (BDF asks for a setup when γ changes by 30 %).
func (bp *blockPrecond) Setup(_ float64, y []float64, gamma float64, jacOK bool) (bool, error) {
	fresh := !jacOK || !bp.ready
	bp.setScales(gamma, fresh, y)
	if fresh {
		bp.findCouplings()
		bp.ready = true
	}
	if fresh {
		for i := range bp.cands {
			c := &bp.cands[i]
			c.s = gamma * math.Abs(c.j) * bp.cs.is[c.x] * bp.cs.is[c.y]
		}
		bp.partition()
		bp.blockEntries()
	}
	return fresh, bp.factor(gamma)
}

// findCouplings sets the candidates to the couplings at least
// precondDrop/precondMargin strong at the scales' γ (setScales), the
// strongest precondCandidates per variable at most (couplingScan).
func (bp *blockPrecond) findCouplings() {
	bp.cs.minS = precondDrop / precondMargin
	bp.cs.out = bp.cs.out[:0]
	bp.cs.scan()
	bp.cands = bp.cs.out
}

// setScales evaluates the Jacobian data when fresh and sets 1/√P_xx.
func (bp *blockPrecond) setScales(gamma float64, fresh bool, y []float64) {
	if fresh {
		bp.je.at(bp.s, y)
		for x := range bp.diag {
			bp.diag[x] = bp.je.entry(x, x)
		}
	}
	bp.cs.gamma = gamma
	for x, d := range bp.diag {
		bp.cs.is[x] = 1 / math.Sqrt(1-gamma*d)
	}
}

// partition joins the variables of the couplings at least precondDrop
// strong, strongest first, as long as the joined block has at most
// precondMaxBlock variables, and lists the blocks' members in increasing
// order.
func (bp *blockPrecond) partition() {
	slices.SortFunc(bp.cands, strongerFirst)
	for x := range bp.parent {
		bp.parent[x], bp.size[x] = int32(x), 1
	}
	for _, c := range bp.cands {
		if c.s < precondDrop {
			break
		}
		rx, ry := bp.find(c.x), bp.find(c.y)
		if rx != ry && bp.size[rx]+bp.size[ry] <= precondMaxBlock {
			if rx > ry {
				rx, ry = ry, rx
			}
			bp.parent[ry] = rx
			bp.size[rx] += bp.size[ry]
		}
	}
	bp.collect()
}

// collect numbers the blocks of two or more variables by size, and
// within one size in the order of their smallest member (their root), so
// that Solve treats the many pairs and triples in loops of their own, and
// lists each block's members in increasing order.
func (bp *blockPrecond) collect() {
	var count [precondMaxBlock + 2]int32
	for x := range bp.slot {
		if r := bp.find(int32(x)); int(r) == x && bp.size[r] > 1 {
			count[bp.size[r]]++
		}
	}
	bp.sizeStart[0], bp.sizeStart[1], bp.sizeStart[2] = 0, 0, 0
	for c := 2; c <= precondMaxBlock; c++ {
		bp.sizeStart[c+1] = bp.sizeStart[c] + count[c]
	}
	next := bp.sizeStart // the next number of each size
	for x := range bp.slot {
		r := bp.find(int32(x))
		switch c := bp.size[r]; {
		case c == 1:
			bp.slot[x] = -1
		case int(r) == x:
			bp.slot[x] = next[c]
			next[c]++
		default:
			bp.slot[x] = bp.slot[r]
		}
	}
	nb := bp.sizeStart[precondMaxBlock+1]
	bp.blockOff = slices.Grow(bp.blockOff[:0], int(nb)+1)[:nb+1]
	clear(bp.blockOff)
	for _, b := range bp.slot {
		if b >= 0 {
			bp.blockOff[b+1]++
		}
	}
	for b := int32(1); b <= nb; b++ {
		bp.blockOff[b] += bp.blockOff[b-1]
	}
	bp.next = append(bp.next[:0], bp.blockOff[:nb]...)
	bp.members = slices.Grow(bp.members[:0], int(bp.blockOff[nb]))[:bp.blockOff[nb]]
	for x, b := range bp.slot {
		if b >= 0 {
			bp.members[bp.next[b]] = int32(x)
			bp.next[b]++
		}
	}
}

func (bp *blockPrecond) find(x int32) int32 {
	for bp.parent[x] != x {
		bp.parent[x] = bp.parent[bp.parent[x]]
		x = bp.parent[x]
	}
	return x
}

// setPrecondWorkers sets the processors a preconditioner of a System
// shares its work among, procs or for 0 all (the deflation's; the block
// preconditioner does not share).
func setPrecondWorkers(p ode.Preconditioner, procs int) {
	if d, ok := p.(*deflation.Precond); ok {
		d.SetWorkers(procs)
	}
}

// forkPreconditioner returns, for s, a copy of the System p was built for
// (System.clone), a preconditioner of p's kind with scratch space of its
// own, sharing what p's setups do not change (the merged model's U), so
// that the two can run in different goroutines with the same results.
func (s *System) forkPreconditioner(p ode.Preconditioner) ode.Preconditioner {
	switch p := p.(type) {
	case nil:
		return nil
	case *deflation.Precond:
		kron := p.Kron()
		if kron != nil {
			kron = kron.Fork(s.law.full.train, s.workers)
		}
		return newDeflationWith(s, kron)
	}
	return s.Preconditioner()
}
