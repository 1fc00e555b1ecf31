package spec

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/ode"
)

// escapeNote is the time scale, in units of τ, from which a run until
// converged gets a note that leaving the start will take long.
const escapeNote = 1e8

// checkEscape estimates when a run until converged leaves the saddle at
// the origin near which small weights start: the time scale
// t_esc = ‖θ₀‖/‖dθ/dt(θ₀)‖. From small weights the separate model's flow is
// cubic in them, τ v' ≈ λ²v² along the first eigenvector (paper eq.
// 1Ddynamics), and blows up after t = τ/(λ² v₀), which is t_esc (the paper's
// example drops at 0.45 t_esc from w_init = 0.01, at 0.94 t_esc from 10⁻⁸);
// the merged model's is quadratic and escapes exponentially fast. A start
// with t_esc beyond the horizon (flow.Horizon τ), or with dθ/dt exactly 0
// (weights whose products underflow), cannot converge: it is refused with
// the flag to change. One beyond escapeNote·τ gets a note.
func (job *Job) checkEscape() error {
	s, y := job.System, job.Y0
	dy := make([]float64, s.Len())
	s.DerivEigen(dy, s.ToEigen(nil, y))
	rate := floats.Norm(dy, 2)
	tEsc := floats.Norm(y, 2) / rate
	horizon := flow.Horizon * s.Model.Tau
	start := fmt.Sprintf("-winit = %g", job.Spec.WInit)
	raise := "raise -winit (the paper's is 0.01)"
	if job.Spec.Given("init") {
		start, raise = "-init "+job.Spec.Init, "start from larger weights"
	}
	switch {
	case rate == 0:
		return fmt.Errorf("%s: the flow does not move from this start (dθ/dt is exactly 0 in float64: the weights' products underflow), a fixed point: %s", start, raise)
	case tEsc > horizon:
		return fmt.Errorf("%s: the weights start so small that they leave the saddle at 0 only after t ≈ %.2g τ (‖θ‖/‖dθ/dt‖ at the start), beyond the %g τ a run until converged may take: %s, or give -T",
			start, tEsc/s.Model.Tau, flow.Horizon, raise)
	case tEsc > escapeNote*s.Model.Tau:
		job.Notes = append(job.Notes, fmt.Sprintf("%s: the weights start so small that they leave the saddle at 0 only after t ≈ %.2g τ (‖θ‖/‖dθ/dt‖ at the start): expect a long run", start, tEsc/s.Model.Tau))
	}
	return nil
}

// The dense methods' reference cost: run -spectrum power:1 -D 8 -method M
// (state size n = 136) until converged takes 4.3 s with radau5 and 2.1 s
// with rodas5p on the development machine (2 cores); at D = 12 (n = 300)
// radau5 takes 49.7 s, the (300/136)³ = 10.7 of its LU factorizations of
// n × n (and 2n × 2n) matrices times 1.23 as many steps.
const denseRefN = 136

// denseRefSeconds are the reference times by method name (ode.Method's
// Name, not its identity: the method values may be reassigned).
func denseRefSeconds() map[string]float64 {
	return map[string]float64{ode.Radau5.Name(): 4.3, ode.Rodas5P.Name(): 2.1}
}

// noteDenseCost notes, before a run with a dense method (Radau5, Rodas5P)
// on a state much larger than docs' D ≤ 8, the time its factorizations
// alone take, scaled as n³ from the reference run: above a minute.
func (job *Job) noteDenseCost() {
	if job.Method == nil { // the flow's choice: none of these
		return
	}
	ref, ok := denseRefSeconds()[job.Method.Name()]
	n := job.System.Len()
	if !ok {
		return
	}
	def := job.System.Settings(job.Y0, flow.RunSettings{}).Method
	scale := math.Pow(float64(n)/denseRefN, 3)
	if sec := ref * scale; sec > 60 {
		job.Notes = append(job.Notes, fmt.Sprintf("-method %s factors dense n × n matrices, n = %d here: (n/%d)³ = %.3g times the work of -spectrum power:1 -D 8 (%.2g s here), so expect ≈ %s or more; -method %s, the default here, does not",
			job.Spec.Method, n, denseRefN, scale, ref, roughDuration(sec), methodName(def)))
	}
}

// roughDuration writes sec in minutes or hours, to two digits.
func roughDuration(sec float64) string {
	if sec < 3600 {
		return fmt.Sprintf("%.2g min", sec/60)
	}
	return fmt.Sprintf("%.2g h", sec/3600)
}
