#!/usr/bin/env python3
"""Integrates a `linattn run` of the separate model again with scipy's stiff
solvers and compares cost and results with ours.

    go run ./cmd/linattn run -D 16 -H 16 -spectrum power:1 -o /tmp/d16.npz
    /usr/bin/python3 flow/testdata/scipy_powerlaw.py /tmp/d16.npz [-cap 1800]

(Debian's python3-numpy and python3-scipy.) From FILE.npz and its sidecar
FILE.json it rebuilds the initial state in eigen coordinates, Λ, ν and τ as
flow/testdata/scipy_paper_example.py does, and writes the separate model's
flow f (docs/math.md, "Population loss and flow") and its Jacobian
J = −∇²L/(2τ) in numpy. It checks J against central differences of f, then
runs solve_ivp with LSODA, BDF and Radau (jac = J, rtol 1e-8, atol 1e-12:
Run's defaults for the stiff methods) from t = 0 to the final time of our
run, which stopped at L − L_min ≤ tol·(L(0) − L_min). Per method it prints
the wall time of solve_ivp, nfev, njev and nlu, the loss at the final time
and the drop times t_m, the first crossings of the half-way levels
(L(M_{m−1}) + L(M_m))/2 (solve_ivp events), each beside ours from the
sidecar as a relative difference. A method still running after -cap seconds
of wall time is stopped and reported as not finished.

To tell which side is closer to the exact flow, give -ref REF.npz: the same
problem run to our final time at tight tolerances, e.g.

    T=$(/usr/bin/python3 -c 'import json; print(repr(json.load(open("/tmp/d16.json"))["meta"]["solver"]["t_end"]))')
    go run ./cmd/linattn run -D 16 -H 16 -spectrum power:1 -method dop853 -rtol 1e-12 -atol 1e-16 -T $T -o /tmp/d16ref.npz

(DOP853 at rtol 1e-12 is the reference of flow's TestStiffMethodsMatchDOP853).
Then every result, ours included, is also given as its error against it.
"""
import argparse
import json
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

RTOL, ATOL = 1e-8, 1e-12  # flow.DefaultRTol, flow.DefaultATol
METHODS = ("LSODA", "BDF", "Radau")
# Central differences with h = 1e-6 on states of size 1e-3…1 agree with the
# exact Jacobian to about 1e-10 (round-off ε|f|/h); a wrong entry shows as O(1).
JAC_CHECK = 1e-6


class SeparateFlow:
    """The separate model's flow in eigen coordinates, where Λ and A are
    diagonal. The state is [v (H) | K (H·R×D) | Q (H·R×D)], rows i·R + r,
    the layout of flow.System."""

    def __init__(self, lam, nu, tau, heads, rank):
        self.lam, self.tau, self.H, self.R = lam, tau, heads, rank
        self.D = lam.size
        self.a = lam**2 * (1 + nu * (1 + lam.sum() / lam))  # eigenvalues of A
        self.n = heads + 2 * heads * rank * self.D

    def split(self, y):
        """v (H,), K and Q (H·R, D), and v_i repeated for each of its R rows."""
        h, hrd = self.H, self.H * self.R * self.D
        K = y[h:h + hrd].reshape(-1, self.D)
        Q = y[h + hrd:].reshape(-1, self.D)
        return y[:h], K, Q, np.repeat(y[:h], self.R)

    def residual(self, K, Q, vr):
        """M = Σ_j v_j k_j q_jᵀ and G = Λ² − A M Λ."""
        M = (vr[:, None] * K).T @ Q
        return M, np.diag(self.lam**2) - self.a[:, None] * M * self.lam[None, :]

    def rhs(self, t, y):
        """τ dk_j/dt = v G q_j, τ dq_j/dt = v Gᵀ k_j, τ dv_i/dt = Σ_r k_jᵀ G q_j."""
        _, K, Q, vr = self.split(y)
        _, G = self.residual(K, Q, vr)
        P, S = Q @ G.T, K @ G  # rows G q_j and Gᵀ k_j
        dv = np.einsum("jd,jd->j", K, P).reshape(self.H, self.R).sum(axis=1)
        return np.concatenate([dv, (vr[:, None] * P).ravel(), (vr[:, None] * S).ravel()]) / self.tau

    def loss(self, y):
        """L = Σ λ_d − 2 Σ λ_d² M_dd + Σ a_d M_de² λ_e."""
        _, K, Q, vr = self.split(y)
        M, _ = self.residual(K, Q, vr)
        lam, a = self.lam, self.a
        return lam.sum() - 2 * np.sum(lam**2 * np.diag(M)) + np.sum(a[:, None] * M**2 * lam[None, :])

    def jacobian(self, t, y):
        """J = −∇²L/(2τ). As L is quadratic in M with ∂L/∂M = −2G and
        ∂²L/∂M_pc² = 2 a_p λ_c, and M is linear in each of v, k, q,

            τJ = −J_Mᵀ diag(a_p λ_c) J_M + Σ_pc G_pc ∇²M_pc,

        with J_M = ∂vec M/∂(v, k, q): the first term is dense, the second
        couples v_i with its rows k_j, q_j and k_j with q_j only."""
        _, K, Q, vr = self.split(y)
        _, G = self.residual(K, Q, vr)
        H, D, hr = self.H, self.D, self.H * self.R
        lam, a = self.lam, self.a
        Kv, Qv = vr[:, None] * K, vr[:, None] * Q  # ∂M/∂k_j[p] = e_p (v q_j)ᵀ, ∂M/∂q_j[c] = (v k_j) e_cᵀ
        Mh = np.einsum("irp,irc->ipc", K.reshape(H, self.R, D), Q.reshape(H, self.R, D))  # ∂M/∂v_i
        # −J_Mᵀ diag(a ⊗ λ) J_M, block by block; WMh = A Mh_i Λ.
        WMh = a[None, :, None] * Mh * lam[None, None, :]
        vv = -np.einsum("ipc,kpc->ik", Mh, WMh)
        vk = -np.einsum("ipc,jc->ijp", WMh, Qv).reshape(H, hr * D)
        vq = -np.einsum("ipc,jp->ijc", WMh, Kv).reshape(H, hr * D)
        kk = -np.kron((Qv * lam) @ Qv.T, np.diag(a))
        qq = -np.kron((Kv * a) @ Kv.T, np.diag(lam))
        kq = -np.einsum("kp,jc->jpkc", Kv * a, Qv * lam).reshape(hr * D, hr * D)
        # Σ_pc G_pc ∇²M_pc: ∂²M/∂v_i∂k_j[p] = e_p q_jᵀ and ∂²M/∂v_i∂q_j[c] = k_j e_cᵀ
        # for the rows j of head i, ∂²M/∂k_j[p]∂q_j[c] = v e_p e_cᵀ.
        head = np.arange(hr) // self.R
        own = (head[None, :] == np.arange(H)[:, None])[:, :, None]  # (H, H·R, 1)
        vk += (own * (Q @ G.T)[None]).reshape(H, hr * D)
        vq += (own * (K @ G)[None]).reshape(H, hr * D)
        for j in range(hr):
            kq[j * D:(j + 1) * D, j * D:(j + 1) * D] += vr[j] * G
        J = np.block([[vv, vk, vq], [vk.T, kk, kq], [vq.T, kq.T, qq]])
        return J / self.tau


def eigen_state(d, k):
    """The state of sample k of a run in eigen coordinates: rows k'ᵀ = kᵀ V."""
    H, R, D = d["K"].shape[1:]
    V = d["eigvecs"]
    return np.concatenate([d["v"][k], (d["K"][k].reshape(H * R, D) @ V).ravel(),
                           (d["Q"][k].reshape(H * R, D) @ V).ravel()])


def sidecar(path):
    side = json.load(open(path[:-len(".npz")] + ".json"))
    if side["model"] != "separate":
        sys.exit(f"{path}: model {side['model']!r}; this script integrates the separate model")
    return side


def results(side):
    """A run's final time, final loss and drop times t_m from its sidecar."""
    meta = side["meta"]
    return {"t_end": meta["solver"]["t_end"], "final_loss": meta["result"]["final_loss"],
            "drops": {tr["m"]: tr["t"] for tr in meta["result"]["transitions"]}}


def load_run(path):
    """The flow, the initial state and a state after the first drop (eigen
    coordinates), and our results of the run in path."""
    d, side = np.load(path), sidecar(path)
    problem = side["meta"]["problem"]
    H, R, _ = d["K"].shape[1:]
    flow = SeparateFlow(d["eigvals"], problem["nu"], side["tau"], H, R)
    pl = np.asarray(problem["plateaus"])
    ours = results(side)
    ours.update(L_min=problem["L_min"], levels=0.5 * (pl[:-1] + pl[1:]),  # levels[m−1]: the drop to M_m
                solver=side["meta"]["solver"], wall=side["meta"]["wall_seconds"])
    # After the first drop J has the structure of the stiff plateaus.
    first = min(ours["drops"].values(), default=d["t"][-1])
    k = min(int(np.searchsorted(d["t"], first)) + 1, d["t"].size - 1)
    return flow, eigen_state(d, 0), eigen_state(d, k), ours


def jacobian_error(flow, y, h=1e-6):
    """max |J − J_fd| / max |J| with J_fd central differences of f."""
    J = flow.jacobian(0, y)
    fd = np.empty_like(J)
    for c in range(flow.n):
        e = np.zeros(flow.n)
        e[c] = h
        fd[:, c] = (flow.rhs(0, y + e) - flow.rhs(0, y - e)) / (2 * h)
    return np.abs(J - fd).max() / np.abs(J).max()


class TimeLimit(Exception):
    pass


def integrate(flow, y0, ours, method, cap):
    """solve_ivp from 0 to our final time with the drop events; stops after
    cap seconds of wall time."""
    deadline = time.perf_counter() + cap
    count = {"f": 0, "jac": 0, "t": 0.0}

    def f(t, y):
        count["f"] += 1
        count["t"] = max(count["t"], t)
        if time.perf_counter() > deadline:
            raise TimeLimit
        return flow.rhs(t, y)

    def jac(t, y):
        count["jac"] += 1
        if time.perf_counter() > deadline:
            raise TimeLimit
        return flow.jacobian(t, y)

    cache = {"t": None, "loss": 0.0}  # every event asks for the loss at the same (t, y)

    def crossing(level):
        def event(t, y):
            if t != cache["t"]:
                cache["t"], cache["loss"] = t, flow.loss(y)
            return cache["loss"] - level
        event.direction = -1
        return event

    events = [crossing(lv) for lv in ours["levels"]]
    start = time.perf_counter()
    try:
        sol = solve_ivp(f, (0.0, ours["t_end"]), y0, method=method, jac=jac, rtol=RTOL, atol=ATOL,
                        events=events, t_eval=[ours["t_end"]])
    except TimeLimit:
        return {"method": method, "wall": time.perf_counter() - start, "finished": False,
                "nfev": count["f"], "njev": count["jac"], "t_reached": count["t"]}
    out = {"method": method, "wall": time.perf_counter() - start, "finished": sol.success,
           "message": sol.message, "nfev": sol.nfev, "njev": sol.njev, "nlu": sol.nlu,
           "t_reached": sol.t[-1] if sol.t.size else count["t"]}
    if sol.success:
        out["final_loss"] = flow.loss(sol.y[:, -1])
        out["drops"] = {m + 1: te[0] for m, te in enumerate(sol.t_events) if te.size}
    return out


def rel(x, ref):
    return abs(x / ref - 1) if ref else float("nan")


def report_drops(res, ours, ref):
    """One line per drop time: t_m, ours and the relative difference, and the
    errors of both against the reference; then the worst of each column."""
    worst = [0.0, 0.0, 0.0]
    for m, t in sorted(res["drops"].items()):
        t_ours = ours["drops"].get(m, float("nan"))
        diffs = [rel(t, t_ours)]
        line = f"         t_{m:<3d} {t:16.10g}  ours {t_ours:16.10g}  rel. diff {diffs[0]:.2g}"
        if ref:
            t_ref = ref["drops"].get(m, float("nan"))
            diffs += [rel(t, t_ref), rel(t_ours, t_ref)]
            line += f"   error {diffs[1]:.2g} (ours {diffs[2]:.2g})"
        worst = [max(w, x) for w, x in zip(worst, diffs)]
        print(line)
    missing = sorted(set(ours["drops"]) - set(res["drops"]))
    line = f"         {len(res['drops'])} drops (ours {len(ours['drops'])}), worst rel. diff {worst[0]:.2g}"
    if ref:
        line += f", worst error {worst[1]:.2g} (ours {worst[2]:.2g})"
    print(line + (f"; missing m = {missing}" if missing else ""))


def report(res, ours, ref):
    name = res["method"]
    if not res["finished"]:
        why = res.get("message") or f"did not finish in {res['wall']:.0f} s"
        print(f"{name:6s} {why}: reached t = {res['t_reached']:.6g} of {ours['t_end']:.6g}, "
              f"nfev={res['nfev']} njev={res['njev']}")
        return
    L, L_ours = res["final_loss"], ours["final_loss"]
    gap, gap_ours = L - ours["L_min"], L_ours - ours["L_min"]
    line = (f"{name:6s} {res['wall']:9.3f} s  nfev={res['nfev']:7d}  njev={res['njev']:5d}  nlu={res['nlu']:6d}  "
            f"final loss {L:.12g}, rel. diff {rel(L, L_ours):.2g} (L − L_min {gap:.6g}, rel. diff {rel(gap, gap_ours):.2g})")
    if ref and ref["t_end"] == ours["t_end"]:
        line += f"; error {rel(L, ref['final_loss']):.2g} (ours {rel(L_ours, ref['final_loss']):.2g})"
    print(line)
    report_drops(res, ours, ref)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="FILE.npz written by `linattn run` (separate model), sidecar FILE.json beside it")
    ap.add_argument("-cap", type=float, default=1800, help="wall-clock limit per method in seconds (1800)")
    ap.add_argument("-methods", default=",".join(METHODS), help="solve_ivp methods (LSODA,BDF,Radau)")
    ap.add_argument("-ref", help="REF.npz: the same run to our final time at tight tolerances")
    args = ap.parse_args()
    flow, y0, y1, ours = load_run(args.run)
    ref = results(sidecar(args.ref)) if args.ref else None
    print(f"{args.run}: D={flow.D} H={flow.H} R={flow.R} state size {flow.n}, t_end = {ours['t_end']!r}, "
          f"rtol {RTOL:g}, atol {ATOL:g}")
    if ref:
        print(f"reference {args.ref}: t_end = {ref['t_end']!r}"
              + ("" if ref["t_end"] == ours["t_end"] else " differs from ours: final losses not compared"))
    errs = [jacobian_error(flow, y0), jacobian_error(flow, y1)]
    print(f"Jacobian vs central differences: max rel. error {errs[0]:.2g} at t = 0, {errs[1]:.2g} after the first drop")
    if max(errs) > JAC_CHECK:
        sys.exit(f"the analytic Jacobian differs from central differences by more than {JAC_CHECK:g}")
    s = ours["solver"]
    print(f"ours   {ours['wall']:9.3f} s  {s['method']}: {s['steps']} steps, {s['func_evals']} evaluations, "
          f"{s['rejected']} rejected; final loss {ours['final_loss']:.12g}")
    for method in args.methods.split(","):
        report(integrate(flow, y0, ours, method, args.cap), ours, ref)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
