"""Sparse Hessians and Jacobians against dense ones and against CasADi, by problem size.

    .venv/bin/python bench/report_sparse.py                    # sizes 1e2 .. 1e5, ~2 min
    .venv/bin/python bench/report_sparse.py --quick            # sizes 1e2 .. 1e4, dense to
                                                               # 1e3, short repeats, ~1 min
    .venv/bin/python bench/report_sparse.py --out docs/benchmarks/data   # sparse_full.*

Problems (float64, data from a seeded numpy Generator):
* ``hessian``: the chained Rosenbrock function, sum 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2
  (tridiagonal Hessian);
* ``jacobian``: the residual of a 2-D Poisson problem with a cubic term on a k x k grid,
  r(u) = L u + u^3 - 1 (five-point stencil; n = k^2).

Systems, one thread each (bench/_single_thread.py pins every library before import), all in
this process: ``bn.sparse_hessian`` / ``bn.sparse_jacobian``; burnumba's dense
``bn.hessian`` / ``bn.jacobian``; ``jax.jit(jax.hessian)`` / ``jax.jit(jax.jacfwd)`` (dense);
CasADi's SX ``hessian`` / ``jacobian`` as a ``casadi.Function`` (sparse). Each result is
checked against burnumba's sparse one (max |difference| / max |value| <= 1e-10) before it is
timed. A call's time is the median over repeats of a loop of calls (each repeat about 0.2 s),
with the range of the repeats; "setup" is the first call (burnumba: tape, pattern, colouring,
compressed tape; jax: jit compilation; CasADi: the symbolic graph, its derivative and the
Function). Dense systems stop at the size where a call would exceed about 20 s or the
matrix 2 GB.
"""
import _single_thread  # noqa: F401,I001  (first: pins every library to one thread)

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import burnumba as bn  # noqa: E402


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def poisson(u):
    k = math.isqrt(u.size)
    g = u.reshape(k, k)
    lap = 4.0 * g
    lap = lap - np.concatenate([np.zeros((1, k)), g[:-1]], axis=0)
    lap = lap - np.concatenate([g[1:], np.zeros((1, k))], axis=0)
    lap = lap - np.concatenate([np.zeros((k, 1)), g[:, :-1]], axis=1)
    lap = lap - np.concatenate([g[:, 1:], np.zeros((k, 1))], axis=1)
    return (lap + g ** 3 - 1.0).reshape(-1)


def timed(call, budget):
    """(median seconds per call, min, max) over repeats of a loop of calls."""
    t = time.perf_counter()
    call()
    one = max(time.perf_counter() - t, 1e-7)
    n = max(1, int(budget / one))
    reps = []
    for _ in range(5 if budget >= 0.1 else 3):
        t = time.perf_counter()
        for _ in range(n):
            call()
        reps.append((time.perf_counter() - t) / n)
    return float(np.median(reps)), min(reps), max(reps)


def _dense(m):
    return m.toarray() if hasattr(m, "toarray") else np.asarray(m)


def _close(a, b):
    """max |a - b| / max |b|, sparse kept sparse (a 10^5 x 10^5 matrix does not fit dense)."""
    import scipy.sparse as sp
    if sp.issparse(a) or sp.issparse(b):
        a, b = sp.csr_matrix(a), sp.csr_matrix(b)
        d = abs(a - b)
        return float((d.max() if d.nnz else 0.0) / max(abs(b).max(), 1e-300))
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def burnumba_sparse(kind, x):
    f = bn.sparse_hessian(rosen) if kind == "hessian" else bn.sparse_jacobian(poisson)
    t = time.perf_counter()
    ref = f(x)
    setup = time.perf_counter() - t
    return f, ref, setup


def burnumba_dense(kind, x):
    f = bn.hessian(rosen) if kind == "hessian" else bn.jacobian(poisson)
    return f


def jax_dense(kind, x):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def jrosen(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def jpoisson(u):
        k = math.isqrt(u.size)
        g = u.reshape(k, k)
        p = jnp.pad(g, 1)
        lap = 4.0 * g - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]
        return (lap + g ** 3 - 1.0).reshape(-1)
    f = jax.jit(jax.hessian(jrosen) if kind == "hessian" else jax.jacfwd(jpoisson))
    xj = jnp.asarray(x)
    return lambda: f(xj).block_until_ready()


def casadi_sparse(kind, n):
    import casadi as ca
    x = ca.SX.sym("x", n)
    if kind == "hessian":
        f = ca.sum1(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        H, _ = ca.hessian(f, x)
        fn = ca.Function("h", [x], [H])
    else:
        k = math.isqrt(n)
        g = ca.reshape(x, k, k)              # column-major: g[i, j] = x[i + k j]
        z = ca.SX.zeros(1, k)
        lap = 4.0 * g - ca.vertcat(z, g[:-1, :]) - ca.vertcat(g[1:, :], z)
        zc = ca.SX.zeros(k, 1)
        lap = lap - ca.horzcat(zc, g[:, :-1]) - ca.horzcat(g[:, 1:], zc)
        r = ca.reshape(lap + g ** 3 - 1.0, n, 1)
        fn = ca.Function("j", [x], [ca.jacobian(r, x)])
    return fn


def run(kind, n, budget, dense_max, jax_max):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.0, 1.0, n)
    rows = {}
    f, ref, setup = burnumba_sparse(kind, x)
    plan = next(iter(f.plans.values()))
    rows["burnumba sparse"] = dict(setup=setup, call=timed(lambda: f(x), budget),
                                   colours=int(plan.colours.max()) + 1, nnz=int(ref.nnz))
    if n <= dense_max:
        d = burnumba_dense(kind, x)
        t = time.perf_counter()
        val = d(x)
        rows["burnumba dense"] = dict(setup=time.perf_counter() - t, err=_close(val, ref),
                                      call=timed(lambda: d(x), budget))
    if n <= jax_max:
        try:
            call = jax_dense(kind, x)
            t = time.perf_counter()
            val = np.asarray(call())
            rows["jax.jit dense"] = dict(setup=time.perf_counter() - t, err=_close(val, ref),
                                         call=timed(call, budget))
        except Exception as e:                      # noqa: BLE001 (reported, not fatal)
            rows["jax.jit dense"] = dict(error=f"{type(e).__name__}: {e}"[:200])
    try:
        t = time.perf_counter()
        fn = casadi_sparse(kind, n)
        if kind == "hessian":
            xin = x
        else:
            k = math.isqrt(n)
            xin = x.reshape(k, k).T.reshape(-1)      # casadi's column-major grid
        val = fn(xin)
        setup = time.perf_counter() - t
        got = val.sparse() if hasattr(val, "sparse") else val
        if kind == "jacobian":            # back to burnumba's row-major order of the grid
            k = math.isqrt(n)
            perm = np.arange(n).reshape(k, k).T.reshape(-1)
            got = got[perm][:, perm]
        rows["casadi sparse"] = dict(setup=setup, err=_close(got, ref),
                                     call=timed(lambda: fn(xin), budget))
    except Exception as e:                          # noqa: BLE001
        rows["casadi sparse"] = dict(error=f"{type(e).__name__}: {e}"[:200])
    return rows


def bridge_overhead(budget):
    """What burnumba.optimize hands scipy as ``fun`` with ``jac=True`` is bn.value_and_grad's
    function: its time per call against the compiled sweep alone (the kernel call on a State
    whose inputs are already written), on Rosenbrock at n = 1000."""
    from burnumba.kernels import layout
    x = np.random.default_rng(1).uniform(-1.0, 1.0, 1000)
    vg = bn.value_and_grad(rosen)
    vg(x)
    tape = next(iter(vg.tapes.values()))
    state = tape.state()
    state.write([x])
    full = timed(lambda: vg(x), budget)
    sweep = timed(lambda: state.call(layout.MODE_VALUE_AND_GRAD), budget)
    return dict(call=full, sweep=sweep, overhead=full[0] - sweep[0])


def solve(n):
    """min sum (x - 0.3)^2 + sum (x[i+1] - x[i])^2 + 0.1 sum x^4  s.t.  x[2k]^2 + x[2k+1]^2 = 1:
    n variables, n / 2 equality constraints; burnumba.optimize.minimize (trust-constr, sparse
    constraint Jacobian and Hessians) against CasADi's IPOPT (sparse, its own derivatives)."""
    from burnumba.optimize import minimize

    def obj(x):
        return np.sum((x - 0.3) ** 2) + np.sum((x[1:] - x[:-1]) ** 2) + 0.1 * np.sum(x ** 4)

    def con(x):
        return x[0::2] ** 2 + x[1::2] ** 2 - 1.0
    x0 = np.full(n, 0.5)
    out = {}
    t = time.perf_counter()
    r = minimize(obj, x0, method="trust-constr", constraints=[{"type": "eq", "fun": con}],
                 options={"gtol": 1e-8, "xtol": 1e-10})
    out["burnumba + scipy trust-constr"] = dict(
        seconds=time.perf_counter() - t, iterations=int(r.nit), objective=float(r.fun),
        violation=float(np.abs(con(r.x)).max()), status=int(r.status))
    try:
        import casadi as ca
        x = ca.SX.sym("x", n)
        f = ca.sumsqr(x - 0.3) + ca.sumsqr(x[1:] - x[:-1]) + 0.1 * ca.sum1(x ** 4)
        g = x[0::2] ** 2 + x[1::2] ** 2 - 1.0
        t = time.perf_counter()
        S = ca.nlpsol("S", "ipopt", {"x": x, "f": f, "g": g},
                      {"ipopt.print_level": 0, "print_time": 0, "ipopt.sb": "yes"})
        sol = S(x0=x0, lbg=0, ubg=0)
        xs = np.asarray(sol["x"]).ravel()
        out["casadi + ipopt"] = dict(
            seconds=time.perf_counter() - t, iterations=int(S.stats()["iter_count"]),
            objective=float(sol["f"]), violation=float(np.abs(con(xs)).max()),
            max_dx_vs_burnumba=float(np.abs(xs - r.x).max()))
    except Exception as e:                          # noqa: BLE001
        out["casadi + ipopt"] = dict(error=f"{type(e).__name__}: {e}"[:200])
    return out


def _fmt(s):
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


def markdown(results, meta):
    lines = [f"Run {meta['date']} on {meta['machine']}; one thread per system; median per "
             "call (range of repeats); setup is the first call.", ""]
    for kind, by_n in results.items():
        lines += [f"**{kind}**", "",
                  "| n | system | per call | range | setup | colours / nnz | vs burnumba |",
                  "|---|---|---|---|---|---|---|"]
        for n, rows in by_n.items():
            base = rows["burnumba sparse"]["call"][0]
            for name, r in rows.items():
                if "error" in r:
                    lines.append(f"| {n} | {name} | failed: {r['error']} | | | | |")
                    continue
                med, lo, hi = r["call"]
                extra = f"{r['colours']} / {r['nnz']}" if "colours" in r else ""
                lines.append(f"| {n} | {name} | {_fmt(med)} | {_fmt(lo)} - {_fmt(hi)} | "
                             f"{r['setup']:.3g} s | {extra} | {med / base:.3g}x |")
        lines.append("")
    return "\n".join(lines)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.6))
    for ax, (kind, by_n) in zip(np.atleast_1d(axes), results.items()):
        systems = sorted({s for rows in by_n.values() for s in rows})
        for s in systems:
            pts = [(int(n), rows[s]["call"][0]) for n, rows in by_n.items()
                   if s in rows and "call" in rows[s]]
            if pts:
                ax.loglog(*zip(*pts), marker="o", label=s)
        ax.set_xlabel("n (variables)")
        ax.set_ylabel("seconds per call")
        ax.set_title(f"sparse {kind}: time against n")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None, help="folder for sparse.json / .md / .svg")
    ap.add_argument("--json", default=None, help="the JSON file (bench/report.py's stage): "
                    "the .md and .svg go beside it")
    a = ap.parse_args()
    if a.json:
        a.out = os.path.dirname(os.path.abspath(a.json))
    sizes = [100, 1000, 10000] if a.quick else [100, 1000, 10000, 100000]
    budget = 0.05 if a.quick else 0.2
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                machine=f"{platform.machine()} {os.cpu_count()} cores, python "
                        f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    results = {}
    for kind in ("hessian", "jacobian"):
        results[kind] = {}
        for n in sizes:
            nn = n if kind == "hessian" else math.isqrt(n) ** 2
            results[kind][nn] = run(kind, nn, budget, dense_max=1000 if a.quick else 2000,
                                    jax_max=1000 if a.quick else 10000)
            print(kind, nn, {k: (v.get("call", ("-",))[0], v.get("err"), v.get("error"))
                             for k, v in results[kind][nn].items()}, flush=True)
    bridge = bridge_overhead(budget)
    print("bridge", bridge, flush=True)
    solved = solve(10000 if not a.quick else 2000)
    print("solve", solved, flush=True)
    meta["load_end"] = os.getloadavg()[0]
    text = markdown(results, meta)
    text += ("\n**solver bridge** (Rosenbrock, n = 1000): bn.value_and_grad's call "
             f"{_fmt(bridge['call'][0])}, the compiled sweep alone {_fmt(bridge['sweep'][0])}: "
             f"{_fmt(bridge['overhead'])} of Python per fun + jac call.\n\n**a constrained "
             f"solve** (n = {10000 if not a.quick else 2000}):\n\n| solver | seconds | "
             "iterations | objective | max violation |\n|---|---|---|---|---|\n")
    for name, r in solved.items():
        text += (f"| {name} | failed: {r['error']} | | | |\n" if "error" in r else
                 f"| {name} | {r['seconds']:.3g} | {r['iterations']} | {r['objective']:.10g} | "
                 f"{r['violation']:.2g} |\n")
    print(text)
    if a.out:
        # the main command's short run is sparse.*; a full run (the sizes to 10^5 and the
        # 10^4-variable solve the guide page shows) is sparse_full.*
        name = "sparse" if a.quick else "sparse_full"
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, f"{name}.json"), "w") as fh:
            json.dump(dict(meta=meta, results={k: {str(n): r for n, r in v.items()}
                                               for k, v in results.items()},
                           bridge=bridge, solve=solved), fh, indent=1)
        with open(os.path.join(a.out, f"{name}.md"), "w") as fh:
            fh.write(text + "\n")
        plot(results, os.path.join(a.out, f"{name}.svg"))


if __name__ == "__main__":
    main()
