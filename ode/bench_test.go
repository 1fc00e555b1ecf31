package ode

import (
	"context"
	"fmt"
	"math"
	"testing"
)

var sinkResult *Result

// BenchmarkArenstorf solves one period of the Arenstorf orbit (HNW I, p. 130)
// with atol = rtol·1e-3 and reports the evaluations per solve (nfev) and the
// achieved max-norm error at T against y(0) (err), the work–precision pair
// to compare with scipy's solve_ivp (testdata/scipy_arenstorf.py prints the
// same pairs for RK45 and DOP853).
func BenchmarkArenstorf(b *testing.B) {
	for _, m := range methods {
		for _, rtol := range []float64{1e-6, 1e-8, 1e-10} {
			b.Run(fmt.Sprintf("%s/rtol=%g", m.Name(), rtol), func(b *testing.B) {
				in := NewIntegrator(m, 4)
				p := Problem{Func: arenstorf, T0: 0, T1: arenstorfT, Y0: arenstorfY0}
				s := Settings{RTol: rtol, ATol: rtol * 1e-3}
				b.ReportAllocs()
				var res *Result
				for i := 0; i < b.N; i++ {
					var err error
					res, err = in.Solve(context.Background(), p, s)
					if err != nil {
						b.Fatal(err)
					}
				}
				sinkResult = res
				b.ReportMetric(float64(res.Stats.FuncEvals), "nfev")
				e := maxAbsDiff(res.Y, arenstorfY0)
				b.ReportMetric(e, "err")
				b.ReportMetric(math.Log10(e), "log10err") // err printed to more digits
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(res.Stats.Steps+res.Stats.Rejected)), "ns/step")
			})
		}
	}
}

// BenchmarkStepOverhead measures the cost of a step outside the right-hand
// side: a 4-dimensional linear problem whose f costs a few nanoseconds,
// integrated with a fixed number of steps. ns/step is the integrator's
// overhead (the f calls included, ≈ s·2 ns); allocs/op must stay constant.
func BenchmarkStepOverhead(b *testing.B) {
	f := func(_ float64, y, dy []float64) { dy[0], dy[1], dy[2], dy[3] = y[1], -y[0], y[3], -y[2] }
	for _, m := range methods {
		b.Run(m.Name(), func(b *testing.B) {
			in := NewIntegrator(m, 4)
			p := Problem{Func: f, T0: 0, T1: 1000, Y0: []float64{1, 0, 1, 0}}
			s := Settings{RTol: 1e-8, MaxStep: 0.1}
			b.ReportAllocs()
			var res *Result
			for i := 0; i < b.N; i++ {
				res, _ = in.Solve(context.Background(), p, s)
			}
			sinkResult = res
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(res.Stats.Steps+res.Stats.Rejected)), "ns/step")
		})
	}
}
