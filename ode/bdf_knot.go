package ode

import "math"

// bdfScalars is the scalar state of a BDF solve between two accepted
// steps (a knot). With the Nordsieck array z₀…z_q, the saved correction
// and the preconditioner it determines every later step: the error
// weights are 1/(rtol|z₀| + atol), the prediction is formed from z, and
// the coefficients of an attempt from the step history, so a solve
// restored from a knot takes the following steps again bit for bit
// (bdfReplayer).
type bdfScalars struct {
	q, qNext, qWait int
	hScale          float64
	tau             [bdfMaxOrder + 2]float64
	tq              [5]float64 // tq1…tq5: tq1 and tq3 are formed only before an order test
	started         bool
	nst             int
	etaMax, hNext   float64
	dsm, acnrm      float64
	savedTq5, crate float64
	lastFail        int
	errFails        int
	gammaSet        float64
	nstSetup        int
	nstJac          int
	setup           bdfSetups
}

// bdfSetups records the preconditioner setups of a solve that keeps a
// dense Solution: the preconditioner's state after them is that of its
// last setup with fresh Jacobian data (at time freshT, state y held
// by the stepper's setupY, γ freshGamma), refactored for lastGamma when
// the last setup reused those data (see Preconditioner).
type bdfSetups struct {
	serial           int // setups with fresh data so far; 0: none yet
	freshT, freshGam float64
	lastT, lastGamma float64
	lastFresh        bool
}

// noteSetup records a preconditioner setup at (t, y, γ) that evaluated
// fresh Jacobian data or not.
func (st *bdfStepper) noteSetup(t float64, y []float64, gamma float64, fresh bool) {
	su := &st.setups
	if fresh {
		su.serial++
		su.freshT, su.freshGam = t, gamma
		if st.setupY == nil {
			st.setupY = make([]float64, st.in.n)
		}
		copy(st.setupY, y)
	}
	su.lastT, su.lastGamma, su.lastFresh = t, gamma, fresh
}

// scalars returns the scalar state after an accepted step.
func (st *bdfStepper) scalars() bdfScalars {
	hs := &st.hs
	return bdfScalars{
		q: hs.q, qNext: st.qNext, qWait: st.qWait, hScale: hs.hScale, tau: hs.tau,
		tq:      [5]float64{hs.tq1, hs.tq2, hs.tq3, hs.tq4, hs.tq5},
		started: st.started, nst: st.nst, etaMax: st.etaMax, hNext: st.hNext,
		dsm: st.dsm, acnrm: st.acnrm, savedTq5: st.savedTq5, crate: st.crate,
		lastFail: st.lastFail, errFails: st.errFails, gammaSet: st.gammaSet,
		nstSetup: st.nstSetup, nstJac: st.nstJac, setup: st.setups,
	}
}

// restore sets the state of a knot: its scalars, z₀…z_q (z[:q+1]) and the
// saved correction, and sets the preconditioner up as the solve had it,
// from the data of its last fresh setup (state setupY); with held, the
// preconditioner holds those data already and is only set up again for
// the knot's γ, which gives the same P (the Preconditioner's contract).
// A knot before the first step (not started) needs z₀ = y₀ alone, in
// in.y, and f(t₀, y₀) in in.f0.
func (st *bdfStepper) restore(sc *bdfScalars, z [][]float64, saved, setupY []float64, held bool) error {
	hs := &st.hs
	st.started, st.ewtFresh = sc.started, sc.started
	st.denseReady, hs.predicted = false, false
	if !sc.started {
		return nil
	}
	for j := range hs.z {
		if j < len(z) {
			copy(hs.z[j], z[j])
		} else {
			clear(hs.z[j])
		}
	}
	copy(st.saved, saved)
	in := st.in
	for i, y := range hs.z[0] { // as correct forms them
		st.ewt[i] = 1 / (in.rtol*math.Abs(y) + in.atol[i])
	}
	hs.q, st.qNext, st.qWait, hs.hScale, hs.tau = sc.q, sc.qNext, sc.qWait, sc.hScale, sc.tau
	hs.tq1, hs.tq2, hs.tq3, hs.tq4, hs.tq5 = sc.tq[0], sc.tq[1], sc.tq[2], sc.tq[3], sc.tq[4]
	st.nst, st.etaMax, st.hNext, st.dsm, st.acnrm = sc.nst, sc.etaMax, sc.hNext, sc.dsm, sc.acnrm
	st.savedTq5, st.crate, st.lastFail, st.errFails = sc.savedTq5, sc.crate, sc.lastFail, sc.errFails
	st.gammaSet, st.nstSetup, st.nstJac = sc.gammaSet, sc.nstSetup, sc.nstJac
	su := &sc.setup
	if st.prec == nil || su.serial == 0 {
		return nil
	}
	jacBefore := in.stats.JacEvals
	in.stats.Decompositions++
	if _, err := st.prec.Setup(su.freshT, setupY, su.freshGam, held); err != nil {
		return err
	}
	if !held && in.stats.JacEvals == jacBefore { // as setupPrecond counts
		in.stats.JacEvals++
	}
	if !su.lastFresh {
		in.stats.Decompositions++
		_, err := st.prec.Setup(su.lastT, setupY, su.lastGamma, true)
		return err
	}
	return nil
}
