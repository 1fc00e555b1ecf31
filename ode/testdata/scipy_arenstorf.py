#!/usr/bin/env python3
"""Work–precision reference for BenchmarkArenstorf: scipy's solve_ivp on the
Arenstorf orbit (HNW I, p. 130) with atol = rtol*1e-3, printing the number of
function evaluations and the max-norm error of y(T) against y(0).

Run with Debian's python3-scipy:  /usr/bin/python3 ode/testdata/scipy_arenstorf.py
"""
import numpy as np
from scipy.integrate import solve_ivp

MU = 0.012277471
T = 17.0652165601579625588917206249
Y0 = np.array([0.994, 0.0, 0.0, -2.00158510637908252240537862224])


def f(t, y):
    mup = 1 - MU
    d1 = ((y[0] + MU) ** 2 + y[1] ** 2) ** 1.5
    d2 = ((y[0] - mup) ** 2 + y[1] ** 2) ** 1.5
    return [y[2], y[3],
            y[0] + 2 * y[3] - mup * (y[0] + MU) / d1 - MU * (y[0] - mup) / d2,
            y[1] - 2 * y[2] - mup * y[1] / d1 - MU * y[1] / d2]


for method in ("RK45", "DOP853"):
    for rtol in (1e-6, 1e-8, 1e-10):
        sol = solve_ivp(f, (0, T), Y0, method=method, rtol=rtol, atol=rtol * 1e-3)
        err = np.max(np.abs(sol.y[:, -1] - Y0))
        print(f"{method:7s} rtol={rtol:g}  nfev={sol.nfev:6d}  err={err:.3g}")
