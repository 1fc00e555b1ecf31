#!/usr/bin/env python3
"""Times scipy's solve_ivp on the same equations and initial state as the
default `go run ./cmd/linattn run` (the paper's D = 4 separate example), for
the comparison quoted with BenchmarkPaperExample.

    go run ./cmd/linattn run && /usr/bin/python3 flow/testdata/scipy_paper_example.py

It reads out/run.npz (weights at t = 0, Λ, ν and τ from the sidecar run.json),
integrates the separate-model flow in the eigenbasis of Λ written with numpy
(G = Λ² − A M Λ), and compares the final loss with ours.
"""
import json
import time

import numpy as np
from scipy.integrate import solve_ivp

d = np.load("out/run.npz")
side = json.load(open("out/run.json"))
lam, V = d["eigvals"], d["eigvecs"]
nu, tau = side["meta"]["problem"]["nu"], side["tau"]
D, H = lam.size, d["v"].shape[1]
a = lam**2 * (1 + nu * (1 + lam.sum() / lam))
K0 = d["K"][0].reshape(H, D) @ V  # rows k'ᵀ = kᵀ V
Q0 = d["Q"][0].reshape(H, D) @ V
y0 = np.concatenate([d["v"][0], K0.ravel(), Q0.ravel()])
t_end = float(d["t"][-1])


def f(t, y):
    v, K, Q = y[:H], y[H:H + H * D].reshape(H, D), y[H + H * D:].reshape(H, D)
    M = (v[:, None] * K).T @ Q
    G = np.diag(lam**2) - a[:, None] * M * lam[None, :]
    P, S = Q @ G.T, K @ G
    dv = np.einsum("ij,ij->i", K, P)
    return np.concatenate([dv, (v[:, None] * P).ravel(), (v[:, None] * S).ravel()]) / tau


def loss(y):
    v, K, Q = y[:H], y[H:H + H * D].reshape(H, D), y[H + H * D:].reshape(H, D)
    M = (v[:, None] * K).T @ Q
    return lam.sum() - 2 * np.sum(lam**2 * np.diag(M)) + np.sum(a[:, None] * M**2 * lam[None, :])


for method in ("DOP853", "RK45"):
    start = time.perf_counter()
    sol = solve_ivp(f, (0, t_end), y0, method=method, rtol=1e-10, atol=1e-14, t_eval=[t_end])
    el = time.perf_counter() - start
    print(f"{method:7s} {el*1e3:8.1f} ms  nfev={sol.nfev:6d}  final loss {loss(sol.y[:, -1]):.10f}"
          f"  (ours {d['loss'][-1]:.10f})")
