package ode

import (
	"fmt"
	"io"
	"math"
)

// snapshotFormat is the version of the binary encoding of a Snapshot; a
// change of what it holds changes it, and ReadSnapshot refuses others.
const snapshotFormat = 1

const snapshotMagic = "linattn/ode snapshot"

// Checkpoint is handed to Settings.Checkpoint after every accepted step,
// once the next step size is chosen: the whole state of the solve there,
// which Save writes. It is valid only during the call.
type Checkpoint struct {
	T float64 // the time reached
	r *run
}

// CanCheckpoint reports whether a solve by method m can be saved
// (Checkpoint.Save) and resumed: the explicit Runge–Kutta pairs, ROCK4,
// BDF and Auto built of them.
func CanCheckpoint(m Method) bool {
	switch m := m.(type) {
	case *RK:
		return true
	case rock4Method, bdfMethod:
		return true
	case *auto:
		return CanCheckpoint(m.nonstiff) && CanCheckpoint(m.stiff)
	}
	return false
}

// Save writes the state of the solve at the accepted step: the time, the
// state and f there, the next step size, the step-size controllers, the
// method's own state (Auto's counters and method, ROCK4's spectral-radius
// bound and power-iteration vector, BDF's Nordsieck array, saved
// correction, scalars and the state of its last fresh preconditioner
// setup), the counts of work, the events located, the output times
// reached and the dense Solution kept so far. A solve resumed from it
// (Settings.Resume) takes the same steps as the solve that wrote it, bit
// for bit, and returns the same Result.
func (c *Checkpoint) Save(w io.Writer) error {
	r, in := c.r, c.r.in
	if !CanCheckpoint(in.m) {
		return fmt.Errorf("ode: %s cannot save a checkpoint", in.m.Name())
	}
	e := newEncoder(w)
	e.str(snapshotMagic)
	e.int(snapshotFormat)
	e.str(in.m.Name())
	e.int(in.n)
	e.f64(r.p.T0)
	e.f64(r.p.T1)
	e.f64(in.rtol)
	e.int(len(r.s.Events))
	e.int(len(r.s.TEval))
	e.bool(r.res.Solution != nil)

	e.f64(r.t)
	e.f64(r.h)
	e.int(r.iEval)
	e.int(r.lastActive)
	e.bool(r.nonFinite)
	e.f64s(in.y)
	e.f64s(in.f0)
	e.f64s(in.gPrev[:len(r.s.Events)])
	saveStats(e, &in.stats)
	e.int(len(r.ctls))
	for _, c := range r.ctls {
		e.f64(c.errPrev)
		e.f64(c.hPrev)
		e.int(c.accepted)
	}
	e.f64s(r.res.TEval)
	e.f64s(r.res.YEval)
	e.int(len(r.res.Events))
	for _, ev := range r.res.Events {
		e.int(ev.Index)
		e.f64(ev.T)
		e.f64s(ev.Y)
		e.int(int(ev.Direction))
	}
	saveStepper(e, in.st)
	if sol := r.res.Solution; sol != nil {
		sol.save(e)
	}
	return e.flush()
}

// Snapshot is the state of a solve read back (ReadSnapshot), to continue
// from (Settings.Resume).
type Snapshot struct {
	// T is the time the solve had reached.
	T float64

	method          string
	n               int
	t0, t1, rtol    float64
	nEvents, nTEval int
	dense           bool

	h                 float64
	iEval, lastActive int
	nonFinite         bool
	y, f0, gPrev      []float64
	stats             Stats
	ctls              []controller
	teval, yeval      []float64
	events            []EventRecord
	step              stepState
	sol               *Solution
}

// Method returns the name of the method of the solve (Method.Name).
func (sn *Snapshot) Method() string { return sn.method }

// ReadSnapshot reads a Snapshot that Checkpoint.Save wrote.
func ReadSnapshot(r io.Reader) (*Snapshot, error) {
	d := newDecoder(r)
	if m := d.str(); d.err == nil && m != snapshotMagic {
		return nil, fmt.Errorf("%w: not an ode snapshot", errSnapshot)
	}
	if v := d.int(); d.err == nil && v != snapshotFormat {
		return nil, fmt.Errorf("%w: format %d, this program reads %d", errSnapshot, v, snapshotFormat)
	}
	sn := &Snapshot{method: d.str(), n: d.len(), t0: d.f64(), t1: d.f64(), rtol: d.f64(),
		nEvents: d.len(), nTEval: d.len(), dense: d.bool()}
	sn.T, sn.h, sn.iEval, sn.lastActive, sn.nonFinite = d.f64(), d.f64(), d.int(), d.int(), d.bool()
	sn.y, sn.f0, sn.gPrev = d.f64s(), d.f64s(), d.f64s()
	sn.stats = loadStats(d)
	sn.ctls = make([]controller, min(d.len(), 2))
	for i := range sn.ctls {
		sn.ctls[i].errPrev, sn.ctls[i].hPrev, sn.ctls[i].accepted = d.f64(), d.f64(), d.int()
	}
	sn.teval, sn.yeval = d.f64s(), d.f64s()
	nev := d.len()
	for i := 0; i < nev && d.err == nil; i++ {
		sn.events = append(sn.events, EventRecord{Index: d.int(), T: d.f64(), Y: d.f64s(), Direction: Direction(d.int())})
	}
	loadStepper(d, &sn.step)
	if sn.dense {
		sn.sol = loadSolution(d, sn.n, sn.t0, sn.t1)
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(sn.y) != sn.n || len(sn.f0) != sn.n || len(sn.gPrev) != sn.nEvents {
		return nil, fmt.Errorf("%w: vectors of the wrong length", errSnapshot)
	}
	return sn, nil
}

func saveStats(e *encoder, st *Stats) {
	for _, v := range []int{st.FuncEvals, st.Steps, st.Rejected, st.JacEvals, st.Decompositions, st.LinearSolves, st.KrylovIters, st.Switches} {
		e.int(v)
	}
	e.int(len(st.PerMethod))
	for _, m := range st.PerMethod {
		e.str(m.Name)
		e.int(m.Steps)
		e.int(m.Rejected)
		e.int(m.FuncEvals)
	}
}

func loadStats(d *decoder) Stats {
	var st Stats
	for _, p := range []*int{&st.FuncEvals, &st.Steps, &st.Rejected, &st.JacEvals, &st.Decompositions, &st.LinearSolves, &st.KrylovIters, &st.Switches} {
		*p = d.int()
	}
	k := d.len()
	for i := 0; i < k && i < 4 && d.err == nil; i++ {
		st.PerMethod = append(st.PerMethod, MethodStats{Name: d.str(), Steps: d.int(), Rejected: d.int(), FuncEvals: d.int()})
	}
	return st
}

// stepState is a method's own state between steps: Auto's (method,
// counters, pending switch), ROCK4's (ρ, the steps it may still serve,
// the power iteration's vector) and BDF's (bdfKnot's values).
type stepState struct {
	cur, stiffCount, calmCount, pending int

	rho     float64
	rhoLeft int
	eig     []float64

	sc     bdfScalars
	z      [][]float64
	saved  []float64
	setupY []float64
}

// Tags of the method states that saveStepper writes.
const (
	stateNone = iota // an explicit Runge–Kutta pair: no state of its own
	stateAuto
	stateROCK4
	stateBDF
)

func saveStepper(e *encoder, st stepper) {
	switch st := st.(type) {
	case *autoStepper:
		e.int(stateAuto)
		e.int(st.cur)
		e.int(st.stiffCount)
		e.int(st.calmCount)
		e.int(st.pending)
		saveStepper(e, st.steppers[1])
	case *rock4Stepper:
		e.int(stateROCK4)
		e.f64(st.rho)
		e.int(st.rhoLeft)
		e.f64s(st.eig)
	case *bdfStepper:
		e.int(stateBDF)
		sc := st.scalars()
		saveScalars(e, &sc)
		e.int(sc.q + 1)
		for _, z := range st.hs.z[:sc.q+1] {
			e.f64s(z)
		}
		e.f64s(st.saved)
		e.f64s(st.setupY)
	default:
		e.int(stateNone)
	}
}

// loadStepper reads what saveStepper wrote into ss.
func loadStepper(d *decoder, ss *stepState) {
	switch tag := d.int(); tag {
	case stateNone:
	case stateAuto:
		ss.cur, ss.stiffCount, ss.calmCount, ss.pending = d.int(), d.int(), d.int(), d.int()
		loadStepper(d, ss)
	case stateROCK4:
		ss.rho, ss.rhoLeft, ss.eig = d.f64(), d.int(), d.f64s()
	case stateBDF:
		ss.sc = loadScalars(d)
		k := d.len()
		for j := 0; j < k && j <= bdfMaxOrder && d.err == nil; j++ {
			ss.z = append(ss.z, d.f64s())
		}
		ss.saved, ss.setupY = d.f64s(), d.f64s()
	default:
		d.fail("method state %d", tag)
	}
}

func saveScalars(e *encoder, sc *bdfScalars) {
	for _, v := range []int{sc.q, sc.qNext, sc.qWait, sc.nst, sc.lastFail, sc.errFails, sc.nstSetup, sc.nstJac, sc.setup.serial} {
		e.int(v)
	}
	for _, v := range sc.tau {
		e.f64(v)
	}
	for _, v := range sc.tq {
		e.f64(v)
	}
	for _, v := range []float64{sc.hScale, sc.etaMax, sc.hNext, sc.dsm, sc.acnrm, sc.savedTq5, sc.crate, sc.gammaSet,
		sc.setup.freshT, sc.setup.freshGam, sc.setup.lastT, sc.setup.lastGamma} {
		e.f64(v)
	}
	e.bool(sc.started)
	e.bool(sc.setup.lastFresh)
}

func loadScalars(d *decoder) bdfScalars {
	var sc bdfScalars
	for _, p := range []*int{&sc.q, &sc.qNext, &sc.qWait, &sc.nst, &sc.lastFail, &sc.errFails, &sc.nstSetup, &sc.nstJac, &sc.setup.serial} {
		*p = d.int()
	}
	for i := range sc.tau {
		sc.tau[i] = d.f64()
	}
	for i := range sc.tq {
		sc.tq[i] = d.f64()
	}
	for _, p := range []*float64{&sc.hScale, &sc.etaMax, &sc.hNext, &sc.dsm, &sc.acnrm, &sc.savedTq5, &sc.crate, &sc.gammaSet,
		&sc.setup.freshT, &sc.setup.freshGam, &sc.setup.lastT, &sc.setup.lastGamma} {
		*p = d.f64()
	}
	sc.started, sc.setup.lastFresh = d.bool(), d.bool()
	if d.err == nil && (sc.q < 0 || sc.q > bdfMaxOrder) {
		d.fail("BDF order %d", sc.q)
	}
	return sc
}

// restoreStepper sets the method's state from ss; a BDF stepper sets its
// preconditioner up as the solve had it (bdfStepper.restore).
func restoreStepper(st stepper, ss *stepState) error {
	switch st := st.(type) {
	case *autoStepper:
		st.cur, st.stiffCount, st.calmCount, st.pending = ss.cur, ss.stiffCount, ss.calmCount, ss.pending
		if st.cur < 0 || st.cur > 1 || st.pending < -1 || st.pending > 1 {
			return fmt.Errorf("%w: Auto's method %d", errSnapshot, st.cur)
		}
		return restoreStepper(st.steppers[1], ss)
	case *rock4Stepper:
		if len(ss.eig) != len(st.eig) {
			return fmt.Errorf("%w: ROCK4's vector has %d values, want %d", errSnapshot, len(ss.eig), len(st.eig))
		}
		st.rho, st.rhoLeft = ss.rho, ss.rhoLeft
		copy(st.eig, ss.eig)
	case *bdfStepper:
		n := st.in.n
		if len(ss.z) != ss.sc.q+1 || len(ss.saved) != n || (len(ss.setupY) != n && len(ss.setupY) != 0) || !ss.sc.started {
			return fmt.Errorf("%w: BDF's state", errSnapshot)
		}
		for _, z := range ss.z {
			if len(z) != n {
				return fmt.Errorf("%w: BDF's history", errSnapshot)
			}
		}
		if len(ss.setupY) > 0 {
			st.setupY = append(st.setupY[:0], ss.setupY...)
		}
		st.setups = ss.sc.setup
		return st.restore(&ss.sc, ss.z, ss.saved, ss.setupY, false)
	}
	return nil
}

// save writes the Solution kept so far (Checkpoint.Save).
func (s *Solution) save(e *encoder) {
	for _, v := range [][]float64{s.t0, s.t1, s.h, s.hTry, s.rho, s.tail} {
		e.f64s(v)
	}
	e.int(len(s.loc))
	for _, l := range s.loc {
		e.i32s([]int32{l.block, l.off, l.vecs})
	}
	e.int(len(s.blocks))
	for _, b := range s.blocks {
		e.f64s(b)
	}
	e.int(s.size)
	e.bool(s.cutEnd)
	e.int(s.spacing)
	e.int(s.runStart)
	tr := s.bdf
	e.bool(tr != nil)
	if tr == nil {
		return
	}
	e.f64s(tr.attempts)
	e.ints(tr.attEnd)
	e.int(tr.spacing)
	e.int(len(tr.knots))
	for _, kn := range tr.knots {
		e.int(kn.step)
		e.i32s([]int32{kn.block, kn.off})
		saveScalars(e, &kn.sc)
	}
	e.int(len(tr.setups))
	for _, su := range tr.setups {
		e.int(su.serial)
		e.f64s(su.y)
	}
	e.int(tr.tailQ)
	for _, z := range tr.tailZ[:tr.tailQ+1] {
		e.f64s(z)
	}
}

// loadSolution reads what save wrote, for a solve of n values from t0 to
// t1; resume completes it.
func loadSolution(d *decoder, n int, t0, t1 float64) *Solution {
	dir := 1.0
	if t1 < t0 {
		dir = -1
	}
	s := newSolution(n, dir, nil)
	for _, p := range []*[]float64{&s.t0, &s.t1, &s.h, &s.hTry, &s.rho, &s.tail} {
		*p = d.f64s()
	}
	s.loc = make([]stepLoc, 0, min(d.len(), len(s.t0)))
	for i := 0; i < cap(s.loc) && d.err == nil; i++ {
		s.loc = append(s.loc, stepLoc{block: int32(d.int()), off: int32(d.int()), vecs: int32(d.int())})
	}
	nb := d.len()
	for i := 0; i < nb && d.err == nil; i++ {
		s.blocks = append(s.blocks, d.f64s())
	}
	s.size, s.cutEnd, s.spacing, s.runStart = d.int(), d.bool(), d.int(), d.int()
	if d.bool() {
		tr := &bdfTrack{vecStep: -1}
		tr.attempts, tr.attEnd, tr.spacing = d.f64s(), d.ints(), d.int()
		nk := d.len()
		for i := 0; i < nk && d.err == nil; i++ {
			tr.knots = append(tr.knots, bdfKnot{step: d.int(), block: int32(d.int()), off: int32(d.int()), sc: loadScalars(d)})
		}
		ns := d.len()
		for i := 0; i < ns && d.err == nil; i++ {
			tr.setups = append(tr.setups, bdfSetupRec{serial: d.int(), y: d.f64s()})
		}
		tr.tailQ = d.int()
		for j := 0; j <= tr.tailQ && j <= bdfMaxOrder && d.err == nil; j++ {
			tr.tailZ[j] = d.f64s()
		}
		s.bdf = tr
	}
	if d.err == nil && !s.consistent() {
		d.fail("the dense solution's records disagree")
	}
	return s
}

// consistent checks what loadSolution read, as a solve leaves it: every
// step's record, its values inside their block and after the values of
// the step before (compact moves them forward in place), the spacings
// within reach of doubling, the BDF record's attempts, knots (at
// increasing steps, their values in order too, each with the setup it
// names) and setups (of increasing serials), and the tail's lengths.
func (s *Solution) consistent() bool {
	k := len(s.t0)
	if len(s.t1) != k || len(s.h) != k || len(s.loc) != k || len(s.tail) != s.n || !spacingOK(s.spacing) ||
		s.runStart < 0 || s.runStart > k || s.size < 0 {
		return false
	}
	if s.bdf == nil && (len(s.hTry) != k || len(s.rho) != k) {
		return false
	}
	var pos storedOrder
	for _, l := range s.loc {
		switch {
		case l.vecs == bdfStepLoc:
			if s.bdf == nil {
				return false
			}
		case l.vecs == hermiteBare:
			if l.block != -1 || s.bdf != nil {
				return false
			}
		case s.bdf != nil:
			return false // a BDF solve's steps are all BDF's
		case l.vecs == hermiteY:
			if !pos.next(s, l.block, l.off, s.n) {
				return false
			}
		case l.vecs < 0 || l.vecs > maxStepVecs:
			return false
		default:
			if !pos.next(s, l.block, l.off, s.n*(2+int(l.vecs))) {
				return false
			}
		}
	}
	tr := s.bdf
	if tr == nil {
		return true
	}
	if len(tr.attEnd) != k || !spacingOK(tr.spacing) || len(tr.knots) == 0 || tr.tailQ < 0 || tr.tailQ > bdfMaxOrder {
		return false
	}
	for i, e := range tr.attEnd {
		if e < 0 || int(e) > len(tr.attempts) || (i > 0 && e < tr.attEnd[i-1]) {
			return false
		}
	}
	pos = storedOrder{}
	for i, kn := range tr.knots {
		if kn.sc.q < 0 || kn.sc.q > bdfMaxOrder || kn.step < 0 || kn.step > k || (i > 0 && kn.step <= tr.knots[i-1].step) ||
			!pos.next(s, kn.block, kn.off, s.knotLen(&kn)) {
			return false
		}
	}
	for i, su := range tr.setups {
		if len(su.y) != s.n || (i > 0 && su.serial <= tr.setups[i-1].serial) {
			return false
		}
	}
	for _, kn := range tr.knots { // storeKnot keeps the setup of each knot, and compaction with it
		if kn.sc.setup.serial != 0 && tr.setupY(kn.sc.setup.serial) == nil {
			return false
		}
	}
	for j := 0; j <= tr.tailQ; j++ {
		if len(tr.tailZ[j]) != s.n {
			return false
		}
	}
	return true
}

// maxStepVecs bounds the Hairer-form vectors of a step (DOP853's dense
// output has 7).
const maxStepVecs = 16

// spacingOK reports whether a thinning spacing is a power of two that
// can still double.
func spacingOK(sp int) bool { return sp >= 1 && sp <= 1<<40 && sp&(sp-1) == 0 }

// storedOrder follows the values of a Solution's steps (or knots) in the
// order they were stored: each inside its block, at or after where the
// values before it end.
type storedOrder struct {
	block, end int
}

func (o *storedOrder) next(s *Solution, block, off int32, length int) bool {
	b, f := int(block), int(off)
	if b < 0 || b >= len(s.blocks) || f < 0 || f+length > len(s.blocks[b]) || b < o.block || (b == o.block && f < o.end) {
		return false
	}
	o.block, o.end = b, f+length
	return true
}

// resumeBDF completes the record of a BDF solve read by loadSolution for
// the solve of p by in and st that goes on from it (beginBDF).
func (s *Solution) resumeBDF(p *Problem, in *Integrator, st *bdfStepper) {
	tr, n := s.bdf, s.n
	tr.prob, tr.rtol, tr.atol, tr.fixed, tr.start = *p, in.rtol, append([]float64(nil), in.atol...), in.fixedStep, st.startHistory
	tr.prob.Y0 = nil
	tr.vecY0 = make([]float64, n)
	for j := range tr.tailZ {
		if tr.tailZ[j] == nil {
			tr.tailZ[j] = make([]float64, n)
		}
		tr.vecs = append(tr.vecs, make([]float64, n))
	}
}

// eventsOK reports whether the events located are of the snapshot's
// events, with states of its length.
func (sn *Snapshot) eventsOK() bool {
	for _, ev := range sn.events {
		if ev.Index < 0 || ev.Index >= sn.nEvents || len(ev.Y) != sn.n || ev.Direction < -1 || ev.Direction > 1 {
			return false
		}
	}
	return true
}

// stepOK reports whether the snapshot's time lies in its interval, its
// next step goes on towards t1 (a step the other way, or from beyond t1,
// would never end) and its counts of work are not negative (the attempts
// left are counted from them).
func (sn *Snapshot) stepOK() bool {
	dir := 1.0
	if sn.t1 < sn.t0 {
		dir = -1
	}
	st := &sn.stats
	counts := []int{st.FuncEvals, st.Steps, st.Rejected, st.JacEvals, st.Decompositions, st.LinearSolves, st.KrylovIters, st.Switches}
	for _, m := range st.PerMethod {
		counts = append(counts, m.Steps, m.Rejected, m.FuncEvals)
	}
	for _, c := range counts {
		if c < 0 {
			return false
		}
	}
	return dir*(sn.T-sn.t0) >= 0 && dir*(sn.t1-sn.T) >= 0 && dir*sn.h > 0 && !math.IsInf(sn.h, 0)
}

// resume continues the solve from the snapshot sn (Settings.Resume) after
// checking that it is a solve of this problem with these settings.
func (r *run) resume(sn *Snapshot) (*Result, error) {
	in, p, s := r.in, r.p, r.s
	switch {
	case sn.method != in.m.Name() || sn.n != in.n:
		return nil, fmt.Errorf("ode: Settings.Resume: a snapshot of %s with %d values, not of %s with %d", sn.method, sn.n, in.m.Name(), in.n)
	case sn.t0 != p.T0 || sn.t1 != p.T1 || sn.rtol != in.rtol:
		return nil, fmt.Errorf("ode: Settings.Resume: a snapshot of a solve over [%g, %g] at rtol %g, not [%g, %g] at %g", sn.t0, sn.t1, sn.rtol, p.T0, p.T1, in.rtol)
	case sn.nEvents != len(s.Events) || sn.nTEval != len(s.TEval) || (sn.dense && !s.Dense):
		return nil, fmt.Errorf("ode: Settings.Resume: a snapshot of a solve with other events, output times or dense output")
	case len(sn.ctls) != len(in.st.names()) || sn.iEval < 0 || sn.iEval > len(s.TEval) || len(sn.teval) != sn.iEval ||
		len(sn.yeval) != len(sn.teval)*in.n || !sn.eventsOK() || !sn.stepOK():
		return nil, fmt.Errorf("%w: its records disagree", errSnapshot)
	}
	r.res = &Result{Y: make([]float64, in.n), Events: sn.events}
	if len(s.TEval) > 0 {
		r.res.TEval = append(make([]float64, 0, len(s.TEval)), sn.teval...)
		r.res.YEval = append(make([]float64, 0, len(s.TEval)*in.n), sn.yeval...)
	}
	if err := r.controllers(); err != nil {
		return nil, err
	}
	for i := range r.ctls {
		r.ctls[i].errPrev, r.ctls[i].hPrev, r.ctls[i].accepted = sn.ctls[i].errPrev, sn.ctls[i].hPrev, sn.ctls[i].accepted
	}
	r.t, r.h, r.iEval, r.lastActive, r.nonFinite = sn.T, sn.h, sn.iEval, sn.lastActive, sn.nonFinite
	copy(in.y, sn.y)
	copy(in.f0, sn.f0)
	in.stats = sn.stats.clone()
	if len(in.stats.PerMethod) != len(in.st.names()) {
		return nil, fmt.Errorf("%w: its counts disagree", errSnapshot)
	}
	if sn.dense { // else the solve dropped its Solution (Settings.DenseLimit)
		sol := sn.sol
		sol.f, sol.solving = p.Func, true
		defer sol.endSolve()
		r.res.Solution = sol
	}
	if st, ok := in.st.(*bdfStepper); ok {
		st.keepSetups = s.Dense || s.Checkpoint != nil
		if sn.dense {
			if r.res.Solution.bdf == nil {
				return nil, fmt.Errorf("%w: a BDF solve without its record", errSnapshot)
			}
			r.bdf = st
			r.res.Solution.resumeBDF(p, in, st)
		}
	}
	if err := restoreStepper(in.st, &sn.step); err != nil {
		return nil, err
	}
	in.stats = sn.stats.clone() // the restore's setup is not the solve's work
	r.evalsSeen = in.stats.FuncEvals
	r.startEvents()
	copy(in.gPrev, sn.gPrev)
	return r.loop()
}
