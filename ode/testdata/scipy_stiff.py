#!/usr/bin/env python3
"""Work–precision of scipy's stiff solvers for BenchmarkWorkPrecisionStiff:
solve_ivp with Radau, BDF and LSODA (analytic Jacobians) on Robertson's
problem to t = 1e11 and on Van der Pol with eps = 1e-6 to t = 2, at
rtol = 10^-3 … 10^-10 in half decades, atol_i = rtol * scale_i. For each run it prints

    problem method rtol nfev njev err

where err is max_i |y_i - ref_i| / (|ref_i| + floor_i) against the Test Set
for IVP Solvers' reference solution (the same as ode/odetest), and nfev
counts the right-hand-side evaluations (scipy's Jacobian evaluations are
njev). BenchmarkWorkPrecisionStiff runs the same problems and tolerances with
Rodas5P and Radau5.

Run with Debian's python3-scipy:  /usr/bin/python3 ode/testdata/scipy_stiff.py
"""
import numpy as np
from scipy.integrate import solve_ivp


def rober(t, y):
    a = -0.04 * y[0] + 1e4 * y[1] * y[2]
    c = 3e7 * y[1] ** 2
    return [a, -a - c, c]


def rober_jac(t, y):
    return [[-0.04, 1e4 * y[2], 1e4 * y[1]],
            [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
            [0.0, 6e7 * y[1], 0.0]]


EPS = 1e-6


def vdp(t, y):
    return [y[1], ((1 - y[0] ** 2) * y[1] - y[0]) / EPS]


def vdp_jac(t, y):
    return [[0.0, 1.0], [(-2 * y[0] * y[1] - 1) / EPS, (1 - y[0] ** 2) / EPS]]


PROBLEMS = {
    "Robertson": (rober, rober_jac, 1e11, [1.0, 0.0, 0.0],
                  [0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050e+00],
                  [1e-6, 1e-12, 1e-6]),
    "VanDerPol": (vdp, vdp_jac, 2.0, [2.0, 0.0],
                  [0.1706167732170483e+01, -0.8928097010248125e+00],
                  [1.0, 1.0]),
}
RTOLS = [10.0 ** (-k / 2) for k in range(6, 21)]  # 1e-3 … 1e-10 in half decades, as the Go benchmark

for name, (f, jac, t1, y0, ref, scale) in PROBLEMS.items():
    ref, scale = np.array(ref), np.array(scale)
    for method in ("Radau", "BDF", "LSODA"):
        for rtol in RTOLS:
            sol = solve_ivp(f, (0.0, t1), y0, method=method, jac=jac, rtol=rtol, atol=rtol * scale)
            if not sol.success:
                print(f"{name} {method} {rtol:g} failed")
                continue
            err = np.max(np.abs(sol.y[:, -1] - ref) / (np.abs(ref) + rtol * scale))
            print(f"{name} {method} {rtol:g} {sol.nfev} {sol.njev} {err:.6g}")
