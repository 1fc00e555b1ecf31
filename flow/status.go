package flow

import (
	"errors"
	"fmt"

	"github.com/linattn/linattn/ode"
)

// Status says how a run ended: flow's own account, not the integrator's
// (ode.Status).
type Status int

const (
	NotRun      Status = iota // the zero value
	Converged                 // T = 0: L − L_min ≤ Tol·(L(0) − L_min)
	ReachedT                  // integrated to T
	Stopped                   // L − L_min ≤ StopTol before T
	Interrupted               // the context was canceled or the Observer returned an error
	Failed                    // the integrator failed, or no convergence by Horizon·τ
	// LossSettled: T = 0 with a least loss that is not known (MinLoss
	// NaN): after its first drop the loss moved by less than
	// Tol·(L(0) − L_lb) over a whole decade of time (settleDetector). The
	// loss settled, not necessarily the weights: along a valley of nearly
	// constant loss they may still grow (docs/math.md, "Least loss").
	LossSettled
)

func (s Status) String() string {
	switch s {
	case NotRun:
		return "not run"
	case Converged:
		return "converged"
	case ReachedT:
		return "reached T"
	case Stopped:
		return "stopped"
	case Interrupted:
		return "interrupted"
	case Failed:
		return "failed"
	case LossSettled:
		return "loss settled"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// passStatus sets the status of the pass tr ended by the solve res with
// err, and returns the pass's error.
func (s *System) passStatus(tr *Trajectory, res *ode.Result, err error, untilConverged bool, rs RunSettings) error {
	switch {
	case errors.Is(err, errSettled):
		tr.Status = LossSettled
	case err != nil:
		tr.Status = Failed
		var oe *ode.Error
		if errors.As(err, &oe) && oe.Status.Interrupted() {
			tr.Status = Interrupted
		}
		return fmt.Errorf("flow: run ended at t = %g of %g: %w", res.T, rs.T, err)
	case untilConverged && !res.Status.AtEvent():
		tr.Status = Failed
		return fmt.Errorf("flow: not converged by t = %g τ: the loss stays at %.17g, above L_min + tol·(L(0) − L_min) = %.17g; the initial state may be a fixed point, or so close to one that the flow leaves it only later: start from larger weights, or give T",
			Horizon, tr.FinalLoss, s.lossFloor()+rs.StopTol)
	case untilConverged:
		tr.Status = Converged
	case res.Status.AtEvent():
		tr.Status = Stopped
	default:
		tr.Status = ReachedT
	}
	return nil
}
