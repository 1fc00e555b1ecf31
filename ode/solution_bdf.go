package ode

import (
	"fmt"
	"sort"
)

// bdfTrack is what a Solution keeps of a BDF solve: for every step its
// times and the step sizes it attempted, and the state of the solve at
// the start of some steps (knots): the Nordsieck array z₀…z_q, the saved
// correction, the scalars (bdfScalars), and the state at the last
// preconditioner setup with fresh data. The extension of step k is the
// Nordsieck polynomial of the knot after it, started at z₀ of the knot
// before it (nordsieckVecs); where one of them is not kept, the solve is
// restored from the nearest kept knot before k and the steps are taken
// again, with the sizes they were attempted with (replay): the same
// arithmetic on the same values, so the same results bit for bit.
//
// A knot takes (q+2)·n values, as much as a step of the extension would
// (y, f and q vectors), so while every knot fits in Settings.DenseLimit
// every step is evaluated directly; beyond it the knots are kept at every
// spacing-th step only (thinBDF), and evaluating a step between two kept
// knots costs the steps from the one before it (fewer when the last
// evaluation left the replay nearer) and one preconditioner setup with
// fresh data, unless the preconditioner holds them from the replay
// already (bdfReplayer.held).
type bdfTrack struct {
	prob    Problem // Func, Jac, Precond and SymmetricJac for the replay
	rtol    float64
	atol    []float64
	fixed   bool
	workers int                                               // the processors the replays' GMRES may share (Settings.Workers)
	start   func(z [bdfMaxOrder + 1][]float64, h float64) int // the stepper's startHistory

	attempts []float64 // the step sizes attempted, step after step
	attEnd   []int32   // those of step k: attempts[attEnd[k−1]:attEnd[k]]
	spacing  int       // knots are kept at the steps k ≡ 0 (mod spacing)
	knots    []bdfKnot // kept, by increasing step
	setups   []bdfSetupRec
	parts    [][]float64 // scratch for storeKnot

	tailZ [bdfMaxOrder + 1][]float64 // z after the last step, of order tailQ
	tailQ int

	rp      *bdfReplayer
	vecs    [][]float64 // the extension of step vecStep (−1: none)
	vecY0   []float64
	vecQ    int
	vecStep int
}

// bdfKnot is the state of the solve at the start of step step; its
// values z₀…z_q and the saved correction, (q+2)·n of them, are at (block,
// off) in the Solution's blocks (z₀ = y₀ alone before the first step).
type bdfKnot struct {
	step       int
	block, off int32
	sc         bdfScalars
}

// bdfSetupRec is the state of a preconditioner setup with fresh data
// that a kept knot refers to (bdfSetups.serial).
type bdfSetupRec struct {
	serial int
	y      []float64
}

// bdfStepLoc marks a step of a BDF solve in Solution.loc.
const bdfStepLoc = -3

// beginBDF starts the record of a BDF solve of p from y₀ = p.Y0.
func (s *Solution) beginBDF(p *Problem, in *Integrator, st *bdfStepper) {
	n := s.n
	tr := &bdfTrack{prob: *p, rtol: in.rtol, atol: append([]float64(nil), in.atol...), fixed: in.fixedStep, workers: in.workers,
		start: st.startHistory, spacing: 1, vecStep: -1, vecY0: make([]float64, n)}
	for j := range tr.tailZ {
		tr.tailZ[j] = make([]float64, n)
		tr.vecs = append(tr.vecs, make([]float64, n))
	}
	tr.prob.Y0 = nil // kept as knot 0
	s.bdf = tr
	block, off := s.storeValues([][]float64{p.Y0})
	tr.knots = append(tr.knots, bdfKnot{block: block, off: off})
}

// addBDF stores the accepted step (t0, h) ending at t1 at y1, attempted
// with the sizes attempts; st holds the state after it.
func (s *Solution) addBDF(t0, h, t1 float64, y1, attempts []float64, st *bdfStepper) {
	tr := s.bdf
	s.t0, s.t1, s.h = append(s.t0, t0), append(s.t1, t1), append(s.h, h)
	s.loc = append(s.loc, stepLoc{block: -1, vecs: bdfStepLoc})
	tr.attempts = append(tr.attempts, attempts...)
	tr.attEnd = append(tr.attEnd, int32(len(tr.attempts)))
	tr.tailQ = st.hs.q
	for j := 0; j <= tr.tailQ; j++ {
		copy(tr.tailZ[j], st.hs.z[j])
	}
	if k := len(s.t0); k%tr.spacing == 0 {
		s.storeKnot(k, st)
	}
	s.tail = append(s.tail[:0], y1...)
}

// storeKnot keeps the state of st as the knot at the start of step k,
// with the state of its last fresh preconditioner setup.
func (s *Solution) storeKnot(k int, st *bdfStepper) {
	tr := s.bdf
	sc := st.scalars()
	tr.parts = append(append(tr.parts[:0], st.hs.z[:sc.q+1]...), st.saved)
	block, off := s.storeValues(tr.parts)
	tr.knots = append(tr.knots, bdfKnot{step: k, block: block, off: off, sc: sc})
	if ser := sc.setup.serial; ser > 0 && (len(tr.setups) == 0 || tr.setups[len(tr.setups)-1].serial != ser) {
		tr.setups = append(tr.setups, bdfSetupRec{serial: ser, y: append([]float64(nil), st.setupY...)})
		s.size += s.n
	}
}

// knotLen is the number of values of a knot.
func (s *Solution) knotLen(kn *bdfKnot) int {
	if !kn.sc.started {
		return s.n
	}
	return (kn.sc.q + 2) * s.n
}

// knotValues returns the knot's z₀…z_q and saved correction.
func (s *Solution) knotValues(kn *bdfKnot) (z [bdfMaxOrder + 1][]float64, saved []float64) {
	n := s.n
	data := s.blocks[kn.block][int(kn.off):]
	z[0] = data[:n]
	if !kn.sc.started {
		return z, nil
	}
	for j := 1; j <= kn.sc.q; j++ {
		z[j] = data[j*n : (j+1)*n]
	}
	return z, data[(kn.sc.q+1)*n : (kn.sc.q+2)*n]
}

// knotAt returns the kept knot at the start of step k, or nil.
func (tr *bdfTrack) knotAt(k int) *bdfKnot {
	i := sort.Search(len(tr.knots), func(i int) bool { return tr.knots[i].step >= k })
	if i < len(tr.knots) && tr.knots[i].step == k {
		return &tr.knots[i]
	}
	return nil
}

// knotBefore returns the last kept knot at or before the start of step k.
func (tr *bdfTrack) knotBefore(k int) *bdfKnot {
	i := sort.Search(len(tr.knots), func(i int) bool { return tr.knots[i].step > k })
	return &tr.knots[i-1] // knot 0 is always kept
}

// setupY returns the state of the fresh setup serial, or nil for 0.
func (tr *bdfTrack) setupY(serial int) []float64 {
	i := sort.Search(len(tr.setups), func(i int) bool { return tr.setups[i].serial >= serial })
	if i < len(tr.setups) && tr.setups[i].serial == serial {
		return tr.setups[i].y
	}
	return nil
}

// thinBDF brings the stored values under limit by doubling the spacing of
// the kept knots, as often as needed, and reports whether it could: the
// knot before the first step is always kept.
func (s *Solution) thinBDF(limit int) bool {
	for s.size > limit {
		before := s.size
		s.bdf.spacing *= 2
		s.compactKnots()
		if s.size == before {
			return false
		}
	}
	return true
}

// compactKnots drops the knots off the spacing, and the setups no kept
// knot refers to, and moves the kept values forward (valueMover).
func (s *Solution) compactKnots() {
	tr := s.bdf
	mv := valueMover{s: s}
	kept := tr.knots[:0]
	for _, kn := range tr.knots {
		if kn.step%tr.spacing != 0 {
			continue
		}
		kn.block, kn.off = mv.move(kn.block, kn.off, s.knotLen(&kn))
		kept = append(kept, kn)
	}
	mv.end()
	tr.knots = kept
	setups, i := tr.setups[:0], 0
	for _, su := range tr.setups { // both are in increasing order of serial
		for i < len(kept) && kept[i].sc.setup.serial < su.serial {
			i++
		}
		if i < len(kept) && kept[i].sc.setup.serial == su.serial {
			setups = append(setups, su)
		}
	}
	clear(tr.setups[len(setups):])
	tr.setups = setups
	s.size += s.n * len(setups)
	tr.rp, tr.vecStep = nil, -1
}

// bdfAt writes y(t) into dst for t in step k of a BDF solve.
func (s *Solution) bdfAt(dst []float64, t float64, k int) ([]float64, error) {
	if t == s.t0[k] {
		y, err := s.bdfStart(k)
		if err != nil {
			return dst, err
		}
		return append(dst[:0], y...), nil
	}
	y0, vecs, err := s.bdfVectors(k)
	if err != nil {
		return dst, err
	}
	evalHairer(dst, y0, vecs, (t-s.t0[k])/s.h[k])
	return dst, nil
}

// bdfStart returns y at the start of step k (k = Steps() gives the tail),
// kept or replayed; the slice is valid until the next call.
func (s *Solution) bdfStart(k int) ([]float64, error) {
	tr := s.bdf
	if k == len(s.t0) {
		return s.tail, nil
	}
	if kn := tr.knotAt(k); kn != nil {
		z, _ := s.knotValues(kn)
		return z[0], nil
	}
	if err := s.bdfReplayTo(k); err != nil {
		return nil, err
	}
	return tr.rp.st.hs.z[0], nil // k > 0: the replay has taken a step
}

// bdfVectors returns y₀ and the Hairer-form vectors of step k: from the
// knots at its ends where both are kept, else from a replay of it.
func (s *Solution) bdfVectors(k int) ([]float64, [][]float64, error) {
	tr := s.bdf
	if tr.vecStep != k {
		a, b := tr.knotAt(k), tr.knotAt(k+1)
		last := k+1 == len(s.t0)
		var z *[bdfMaxOrder + 1][]float64
		var q int
		if a != nil && (b != nil || last) {
			za, _ := s.knotValues(a)
			copy(tr.vecY0, za[0])
			if last {
				z, q = &tr.tailZ, tr.tailQ
			} else {
				zb, _ := s.knotValues(b)
				z, q = &zb, b.sc.q
			}
		} else {
			if err := s.bdfReplayTo(k); err != nil {
				return nil, nil, err
			}
			rp := tr.rp
			copy(tr.vecY0, rp.st.hs.z[0])
			if k == 0 {
				copy(tr.vecY0, rp.in.y) // not started: z₀ is set by the step
			}
			rp.step(s, k)
			z, q = &rp.st.hs.z, rp.st.hs.q
		}
		tr.vecStep, tr.vecQ = -1, q
		nordsieckVecs(tr.vecs, tr.vecY0, z, q)
		tr.vecStep = k
	}
	return tr.vecY0, tr.vecs[:tr.vecQ], nil
}

// bdfReplayer takes BDF steps of a Solution again: its own integrator
// holds the state at the start of step pos (−1: none).
type bdfReplayer struct {
	in  *Integrator
	st  *bdfStepper
	pos int
	// held is the serial of the solve's fresh setup whose data the
	// Problem's preconditioner holds from this replay (0: none). The
	// replay is made after the solve, which no longer sets it up.
	held int
}

// bdfReplayReach is how many steps a replay goes on to reach a kept knot
// rather than be restored there, where the restore sets the
// preconditioner up with fresh data, which costs about as much (flow's
// block preconditioner at D = 32: 0.5 ms, ten steps).
const bdfReplayReach = 8

// bdfReplayTo brings the replay to the start of step k: from where it is
// if that is before k and at or after the last kept knot before k, or at
// most bdfReplayReach steps before it unless the preconditioner holds the
// knot's setup already (a restore then costs no setup), else from that
// knot. Both take the same steps.
func (s *Solution) bdfReplayTo(k int) error {
	tr := s.bdf
	if tr.rp == nil {
		in := NewIntegrator(BDF, s.n)
		in.f, in.rtol, in.fixedStep, in.workers = tr.prob.Func, tr.rtol, tr.fixed, tr.workers
		copy(in.atol, tr.atol)
		st := in.st.(*bdfStepper)
		st.startHistory, st.keepSetups = tr.start, true // keepSetups: the serial of the fresh setups (held)
		tr.rp = &bdfReplayer{in: in, st: st, pos: -1}
	}
	rp := tr.rp
	kn := tr.knotBefore(k)
	onward := rp.pos >= 0 && rp.pos <= k &&
		(rp.pos >= kn.step || rp.pos+bdfReplayReach >= kn.step && kn.sc.setup.serial != rp.held)
	if !onward {
		if err := rp.restore(s, kn); err != nil {
			rp.pos = -1
			return fmt.Errorf("ode: Solution.At: replaying BDF steps from t = %g: %w", s.t0[kn.step], err)
		}
	}
	for rp.pos < k {
		rp.step(s, rp.pos)
	}
	return nil
}

// restore sets the replay to the knot kn.
func (rp *bdfReplayer) restore(s *Solution, kn *bdfKnot) error {
	tr, in, st := s.bdf, rp.in, rp.st
	z, saved := s.knotValues(kn)
	rp.pos = kn.step
	if err := st.begin(&tr.prob); err != nil {
		return err
	}
	held := rp.held > 0 && rp.held == kn.sc.setup.serial
	rp.held, st.setups = 0, kn.sc.setup
	if !kn.sc.started { // the start of the solve
		copy(in.y, z[0])
		tr.prob.Func(s.t0[0], in.y, in.f0)
		in.stats.FuncEvals++
		return nil
	}
	return st.restore(&kn.sc, z[:kn.sc.q+1], saved, tr.setupY(kn.sc.setup.serial), held)
}

// step takes step pos again, attempt by attempt, as the solve's driver
// did: after a rejected attempt the stepper chooses the next step unless
// its Newton iteration failed (its own factor) or the error was not
// finite (the driver's), as in run.loop.
func (rp *bdfReplayer) step(s *Solution, k int) {
	tr, st := s.bdf, rp.st
	from := int32(0)
	if k > 0 {
		from = tr.attEnd[k-1]
	}
	hs := tr.attempts[from:tr.attEnd[k]]
	t := s.t0[k]
	rp.in.stats.Steps++
	rp.in.stats.Rejected += len(hs) - 1
	for i, h := range hs {
		e := st.attempt(t, h)
		if i < len(hs)-1 {
			if _, reject := st.newton(); reject == 0 && finite(e) {
				st.nextStep(h, false)
			}
			continue
		}
		st.accept(t, h)
	}
	rp.pos = k + 1
	if tr.prob.Precond != nil { // the replay's own dense LU is set up afresh at each restore (begin)
		rp.held = st.setups.serial
	}
}
