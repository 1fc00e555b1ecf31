package ode

import "math"

// stepChooser is a stepper that chooses its own step sizes: the driver asks
// it instead of the controller after every accepted step and every rejection
// by the error test (BDF, whose step and order are chosen together).
type stepChooser interface {
	nextStep(h float64, accepted bool) float64
}

// nextStep returns the step after the attempt h: the one prepareNext chose
// after an accepted step; after an error test failure (CVODE's
// cvDoErrorTest) h·η with η = 1/((6·dsm)^{1/(q+1)} + 10⁻⁶) ≥ 0.1, at most
// 0.2 from the second failure on, and after the third the order lowered
// with η = 0.1 (at order 1 the history restarts from f).
func (st *bdfStepper) nextStep(h float64, accepted bool) float64 {
	if accepted {
		return st.hNext
	}
	hs := &st.hs
	st.errFails++
	st.etaMax = 1
	if st.errFails <= bdfErrFailOrder {
		eta := 1 / (math.Pow(bdfBias2*st.dsm, 1/float64(hs.q+1)) + bdfAddon)
		eta = math.Max(bdfEtaMinErr, eta)
		if st.errFails >= 2 {
			eta = math.Min(eta, bdfEtaMaxErr)
		}
		return h * eta
	}
	hNew := h * bdfEtaMinErr
	if hs.q > 1 {
		hs.lowerOrder()
		st.qNext, st.qWait = hs.q, hs.q+1
		return hNew
	}
	// Order 1 still failing: z₁ = h_new f(t, y) afresh.
	in := st.in
	in.f(st.tStart, hs.z[0], st.fy)
	in.stats.FuncEvals++
	for i, f := range st.fy {
		hs.z[1][i] = hNew * f
	}
	for j := 2; j <= bdfMaxOrder; j++ {
		clear(hs.z[j])
	}
	hs.hScale, st.qWait, hs.predicted = hNew, bdfLongWait, false
	return hNew
}

// prepareNext chooses the step and order after the accepted step h
// (cvPrepareNextStep): after a failure in this step (etaMax = 1) neither
// changes; otherwise the step ratio at order q is
// η_q = 1/((6·dsm)^{1/(q+1)} + 10⁻⁶) and, once q+1 steps have been taken
// at order q, those at q−1 and q+1 are estimated from the history
// (safety factors 6 and 10); the largest wins, but a ratio below 1.5 keeps
// the step and order, and ratios are capped at etaMax.
func (st *bdfStepper) prepareNext(h float64) {
	hs := &st.hs
	st.qNext, st.hNext = hs.q, h
	if st.etaMax == 1 || st.fixedStep > 0 {
		st.qWait = max(st.qWait, 2)
		return
	}
	eta := 1 / (math.Pow(bdfBias2*st.dsm, 1/float64(hs.q+1)) + bdfAddon)
	q := hs.q
	if st.qWait == 0 {
		st.qWait = 2
		down, up := st.etaLower(), st.etaHigher(h)
		switch {
		case math.Max(eta, math.Max(down, up)) < bdfEtaKeep:
		case eta >= down && eta >= up:
		case down >= up:
			eta, q = down, hs.q-1
		default:
			eta, q = up, hs.q+1
			copy(st.saved, st.acor) // Δ for raiseOrder
		}
	}
	if eta < bdfEtaKeep {
		return
	}
	st.qNext, st.hNext = q, h*math.Min(eta, st.etaMax)
}

// etaLower is the step ratio at order q−1, from its error estimate
// tq1·‖z_q‖ (0 at order 1).
func (st *bdfStepper) etaLower() float64 {
	hs := &st.hs
	if hs.q == 1 {
		return 0
	}
	d := st.wrms(hs.z[hs.q]) * hs.tq1
	return 1 / (math.Pow(bdfBias1*d, 1/float64(hs.q)) + bdfAddon)
}

// etaHigher is the step ratio at order q+1, from its error estimate
// tq3·‖Δ − c·Δ_saved‖, c = (tq5/tq5_saved)(h/h_{n−1})^{q+1}: the
// difference of two corrections estimates the (q+2)-th derivative (0 at
// the highest order or without a saved Δ).
func (st *bdfStepper) etaHigher(h float64) float64 {
	hs := &st.hs
	if hs.q == st.maxOrder || st.savedTq5 == 0 {
		return 0
	}
	c := hs.tq5 / st.savedTq5 * math.Pow(h/hs.tau[2], float64(hs.q+1))
	w := st.ewt
	var s float64
	for i, d := range st.acor {
		x := (d - c*st.saved[i]) * w[i]
		s += x * x
	}
	d := math.Sqrt(s/float64(len(w))) * hs.tq3
	return 1 / (math.Pow(bdfBias3*d, 1/float64(hs.q+2)) + bdfAddon)
}
