"""Sparse Hessians and Jacobians against dense ones and against CasADi, by problem size.

    .venv/bin/python bench/report_sparse.py                    # sizes 1e2 .. 1e5, ~2 min
    .venv/bin/python bench/report_sparse.py --quick            # sizes 1e2 .. 1e4, dense to
                                                               # 1e3, short repeats, ~1 min
    .venv/bin/python bench/report_sparse.py --out docs/benchmarks/data   # sparse_full.*

Problems (float64, data from a seeded numpy Generator):
* ``hessian``: the chained Rosenbrock function, sum 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2
  (tridiagonal Hessian);
* ``jacobian``: the residual of a 2-D Poisson problem with a cubic term on a k x k grid,
  r(u) = L u + u^3 - 1 (five-point stencil; n = k^2);
* ``bundle``: bundle-adjustment-style residuals, n / 20 cameras (translation, focal length)
  and the rest points (3-D), each point seen by 3 random cameras, a pinhole projection per
  observation (each residual reads 4 camera and 3 point variables).

Systems, one thread each (bench/_single_thread.py pins every library before import), all in
this process: ``bn.sparse_hessian`` / ``bn.sparse_jacobian``; burnumba's dense
``bn.hessian`` / ``bn.jacobian``; ``jax.jit(jax.hessian)`` / ``jax.jit(jax.jacfwd)`` (dense);
CasADi's SX ``hessian`` / ``jacobian`` as a ``casadi.Function`` (sparse). Each result is
checked against burnumba's sparse one (max |difference| / max |value| <= 1e-10) before it is
timed. A call's time is the median over repeats of a loop of calls (each repeat about 0.2 s),
with the range of the repeats; "setup" is the first call (burnumba: tape, pattern, colouring,
compressed tape; jax: jit compilation; CasADi: the symbolic graph, its derivative and the
Function), and burnumba's pattern and colouring are also timed alone on the tape. Dense
systems stop at the size where a call would exceed about 20 s or the matrix 2 GB.

Solves (each to its solver's default tolerances, from the same start): a constrained
problem on circles and a 2-D optimal control problem (a Poisson state equation with a cubic
term, k^2 states and k^2 controls, k^2 equality constraints), through burnumba.optimize
(scipy's trust-constr and SLSQP, and IPOPT through cyipopt where it is installed), through
the same scipy methods fed by jax (jit-compiled gradients, dense constraint Jacobians,
Hessian-vector products), and through CasADi's IPOPT. SLSQP and the jax-fed solves are dense,
and run at the small size only.
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


def bundle(n, seed=0):
    """(residual function, x, data): n // 20 cameras (tx, ty, tz, f), the rest points
    (px, py, pz), each point seen by 3 random cameras; r = f (p + t)[:2] / (p + t)[2] - obs."""
    rng = np.random.default_rng(seed)
    nc = max(2, n // 20)
    npt = (n - 4 * nc) // 3
    ci = rng.integers(0, nc, 3 * npt)
    pi = np.repeat(np.arange(npt), 3)
    cams = np.concatenate([rng.normal(0.0, 0.1, (nc, 3)), rng.uniform(0.9, 1.1, (nc, 1))], 1)
    pts = np.concatenate([rng.normal(0.0, 1.0, (npt, 2)), rng.uniform(4.0, 6.0, (npt, 1))], 1)
    obs = rng.normal(0.0, 0.3, (3 * npt, 2))
    x = np.concatenate([cams.ravel(), pts.ravel()])

    def residual(x, xp=np):
        c = x[:4 * nc].reshape(nc, 4)[ci]
        p = x[4 * nc:].reshape(npt, 3)[pi]
        q = p + c[:, :3]
        return (c[:, 3:4] * q[:, :2] / q[:, 2:3] - obs).reshape(-1)
    return residual, x, (nc, npt, ci, pi, obs)


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


def _function(kind, n):
    """(burnumba's function, x, the bundle's data) of a problem family at size n."""
    if kind == "bundle":
        return bundle(n)
    x = np.random.default_rng(0).uniform(-1.0, 1.0, n)
    return (rosen if kind == "hessian" else poisson), x, None


def burnumba_sparse(kind, fun, x):
    f = bn.sparse_hessian(fun) if kind == "hessian" else bn.sparse_jacobian(fun)
    t = time.perf_counter()
    ref = f(x)
    setup = time.perf_counter() - t
    return f, ref, setup


def setup_parts(kind, f):
    """The pattern pass and the colouring alone, on the tape f's first call made (s)."""
    from burnumba.derive.sparsity import hessian_pattern, jacobian_pattern
    from burnumba.transforms.colouring import column_colouring, hessian_colouring, \
        row_colouring
    tape = next(iter(f.tapes.values()))
    t = time.perf_counter()
    pattern = (hessian_pattern if kind == "hessian" else jacobian_pattern)(tape)
    t_pattern = time.perf_counter() - t
    t = time.perf_counter()
    if kind == "hessian":
        hessian_colouring(pattern)
    else:
        column_colouring(pattern)
        row_colouring(pattern)
    return t_pattern, time.perf_counter() - t


def burnumba_dense(kind, fun, x):
    return bn.hessian(fun) if kind == "hessian" else bn.jacobian(fun)


def jax_dense(kind, x, data=None):
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
    if kind == "bundle":
        nc, npt, ci, pi, obs = data

        def jbundle(x):
            c = x[:4 * nc].reshape(nc, 4)[ci]
            p = x[4 * nc:].reshape(npt, 3)[pi]
            q = p + c[:, :3]
            return (c[:, 3:4] * q[:, :2] / q[:, 2:3] - obs).reshape(-1)
        f = jax.jit(jax.jacfwd(jbundle))
    else:
        f = jax.jit(jax.hessian(jrosen) if kind == "hessian" else jax.jacfwd(jpoisson))
    xj = jnp.asarray(x)
    return lambda: f(xj).block_until_ready()


def casadi_sparse(kind, n, data=None):
    import casadi as ca
    x = ca.SX.sym("x", n)
    if kind == "hessian":
        f = ca.sum1(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        H, _ = ca.hessian(f, x)
        fn = ca.Function("h", [x], [H])
    elif kind == "bundle":
        nc, npt, ci, pi, obs = data
        r = []
        for o in range(ci.size):
            c, p = 4 * int(ci[o]), 4 * nc + 3 * int(pi[o])
            q = [x[p + d] + x[c + d] for d in range(3)]
            r += [x[c + 3] * q[0] / q[2] - obs[o, 0], x[c + 3] * q[1] / q[2] - obs[o, 1]]
        r = ca.vertcat(*r)
        fn = ca.Function("j", [x], [ca.jacobian(r, x)])
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
    fun, x, data = _function(kind, n)
    n = x.size
    rows = {}
    f, ref, setup = burnumba_sparse(kind, fun, x)
    plan = next(iter(f.plans.values()))
    t_pattern, t_colouring = setup_parts(kind, f)
    rows["burnumba sparse"] = dict(setup=setup, call=timed(lambda: f(x), budget),
                                   pattern=t_pattern, colouring=t_colouring,
                                   colours=int(plan.colours.max()) + 1, nnz=int(ref.nnz))
    if n <= dense_max:
        d = burnumba_dense(kind, fun, x)
        t = time.perf_counter()
        val = d(x)
        rows["burnumba dense"] = dict(setup=time.perf_counter() - t, err=_close(val, ref),
                                      call=timed(lambda: d(x), budget))
    if n <= jax_max:
        try:
            call = jax_dense(kind, x, data)
            t = time.perf_counter()
            val = np.asarray(call())
            rows["jax.jit dense"] = dict(setup=time.perf_counter() - t, err=_close(val, ref),
                                         call=timed(call, budget))
        except Exception as e:                      # noqa: BLE001 (reported, not fatal)
            rows["jax.jit dense"] = dict(error=f"{type(e).__name__}: {e}"[:200])
    try:
        t = time.perf_counter()
        fn = casadi_sparse(kind, n, data)
        if kind != "jacobian":
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


def circles(n):
    """min sum (x - 0.3)^2 + sum (x[i+1] - x[i])^2 + 0.1 sum x^4  s.t.
    x[2k]^2 + x[2k+1]^2 = 1: n variables, n / 2 equalities. (objective, constraint, x0,
    the same built by jax.numpy, by CasADi)."""
    def obj(x, xp=np):
        return xp.sum((x - 0.3) ** 2) + xp.sum((x[1:] - x[:-1]) ** 2) + 0.1 * xp.sum(x ** 4)

    def con(x, xp=np):
        return x[0::2] ** 2 + x[1::2] ** 2 - 1.0

    def casadi(ca, x):
        return (ca.sumsqr(x - 0.3) + ca.sumsqr(x[1:] - x[:-1]) + 0.1 * ca.sum1(x ** 4),
                x[0::2] ** 2 + x[1::2] ** 2 - 1.0)
    return obj, con, np.full(n, 0.5), casadi


def control(k, alpha=1e-3):
    """2-D optimal control on a k x k grid (h = 1 / (k + 1), zero boundary): states u and
    controls q (n = 2 k^2), min 1/2 |u - u_d|^2 + alpha/2 |q|^2  s.t.
    (L u) / h^2 + u^3 - q = 0 (five-point L; k^2 equalities)."""
    h = 1.0 / (k + 1)
    s = np.arange(1, k + 1) * h
    ud = np.outer(np.sin(np.pi * s), np.sin(2 * np.pi * s)).reshape(-1)
    m = k * k

    def lap(u, xp):
        g = u.reshape(k, k)
        zr, zc = xp.zeros((1, k)), xp.zeros((k, 1))
        out = (4.0 * g - xp.concatenate([zr, g[:-1]], axis=0)
               - xp.concatenate([g[1:], zr], axis=0)
               - xp.concatenate([zc, g[:, :-1]], axis=1) - xp.concatenate([g[:, 1:], zc], axis=1))
        return out.reshape(-1)

    def obj(z, xp=np):
        return 0.5 * (xp.sum((z[:m] - ud) ** 2) + alpha * xp.sum(z[m:] ** 2))

    def con(z, xp=np):
        u = z[:m]
        return lap(u, xp) / (h * h) + u ** 3 - z[m:]

    def casadi(ca, z):
        u, q = z[:m], z[m:]
        g = ca.reshape(u, k, k)                  # column-major: transposed grid, same operator
        zr, zc = ca.SX.zeros(1, k), ca.SX.zeros(k, 1)
        lp = (4.0 * g - ca.vertcat(zr, g[:-1, :]) - ca.vertcat(g[1:, :], zr)
              - ca.horzcat(zc, g[:, :-1]) - ca.horzcat(g[:, 1:], zc))
        udt = ud.reshape(k, k).T.reshape(-1)     # casadi's u is the transposed grid
        return (0.5 * (ca.sumsqr(u - udt) + alpha * ca.sumsqr(q)),
                ca.reshape(lp, m, 1) / (h * h) + u ** 3 - q)
    return obj, con, np.zeros(2 * m), casadi


def _outcome(t, x, fun, con, iterations, status):
    return dict(seconds=time.perf_counter() - t, iterations=int(iterations),
                objective=float(fun(x)), violation=float(np.abs(con(x)).max()),
                status=str(status))


def _jax_fed(method, obj, con, x0):
    """scipy's method fed by jax: jit-compiled value and gradient, dense constraint Jacobian
    (jacfwd), and for trust-constr Hessian-vector products of the objective and of
    lambda . c as LinearOperators."""
    import jax
    import jax.numpy as jnp
    import scipy.optimize as so
    from scipy.sparse.linalg import LinearOperator
    jax.config.update("jax_enable_x64", True)
    jvg = jax.jit(jax.value_and_grad(lambda x: obj(x, jnp)))
    jc = jax.jit(lambda x: con(x, jnp))
    jj = jax.jit(jax.jacfwd(lambda x: con(x, jnp)))
    n = x0.size

    def vg(x):
        v, g = jvg(x)
        return float(v), np.asarray(g)
    if method == "SLSQP":
        return so.minimize(vg, x0, jac=True, method="SLSQP",
                           constraints=[{"type": "eq", "fun": lambda x: np.asarray(jc(x)),
                                         "jac": lambda x: np.asarray(jj(x))}],
                           options={"maxiter": 500})
    ohvp = jax.jit(lambda x, v: jax.jvp(jax.grad(lambda y: obj(y, jnp)), (x,), (v,))[1])
    chvp = jax.jit(lambda x, lam, v: jax.jvp(jax.grad(lambda y: jnp.sum(lam * con(y, jnp))),
                                             (x,), (v,))[1])
    def f64(v):
        return jnp.asarray(np.asarray(v, dtype=np.float64).reshape(-1))
    hess = lambda x: LinearOperator(                                                   # noqa
        (n, n), matvec=lambda v: np.asarray(ohvp(f64(x), f64(v))), dtype=np.float64)
    chess = lambda x, lam: LinearOperator(                                             # noqa
        (n, n), matvec=lambda v: np.asarray(chvp(f64(x), f64(lam), f64(v))),
        dtype=np.float64)
    nl = so.NonlinearConstraint(lambda x: np.asarray(jc(x)), 0.0, 0.0,
                                jac=lambda x: np.asarray(jj(x)), hess=chess)
    return so.minimize(vg, x0, jac=True, hess=hess, method="trust-constr", constraints=[nl])


def solve_one(problem, size, small):
    """Every solver on one problem: {solver: outcome}. ``small``: also the dense ones."""
    import scipy.optimize  # noqa: F401  (imported before the clocks start)
    from burnumba.optimize import ipopt, minimize
    obj, con, x0, casadi = problem(size)
    cons = [{"type": "eq", "fun": con}]
    out = {}
    runs = [("burnumba + scipy trust-constr",
             lambda: minimize(obj, x0, method="trust-constr", constraints=cons))]
    if small:
        runs.append(("burnumba + scipy SLSQP",
                     lambda: minimize(obj, x0, method="SLSQP", constraints=cons,
                                      options={"maxiter": 500})))
    runs.append(("burnumba + ipopt (cyipopt)", lambda: ipopt(obj, x0, constraints=cons)))
    if small:
        runs.append(("jax + scipy trust-constr", lambda: _jax_fed("trust-constr", obj, con, x0)))
        runs.append(("jax + scipy SLSQP", lambda: _jax_fed("SLSQP", obj, con, x0)))
    for name, go in runs:
        try:
            t = time.perf_counter()
            r = go()
            out[name] = _outcome(t, r.x, obj, con, getattr(r, "nit", -1), r.status)
        except Exception as e:                      # noqa: BLE001 (reported, not fatal)
            out[name] = dict(error=f"{type(e).__name__}: {e}"[:200])
    try:
        import casadi as ca
        z = ca.SX.sym("x", x0.size)
        f, g = casadi(ca, z)
        t = time.perf_counter()
        S = ca.nlpsol("S", "ipopt", {"x": z, "f": f, "g": g},
                      {"ipopt.print_level": 0, "print_time": 0, "ipopt.sb": "yes"})
        sol = S(x0=x0, lbg=0, ubg=0)
        xs = np.asarray(sol["x"]).ravel()
        if problem is control:                       # casadi's grid is the transposed one
            k = size
            m = k * k
            xs = np.concatenate([xs[:m].reshape(k, k).T.reshape(-1),
                                 xs[m:].reshape(k, k).T.reshape(-1)])
        out["casadi + ipopt"] = _outcome(t, xs, obj, con, S.stats()["iter_count"],
                                         S.stats()["return_status"])
    except Exception as e:                          # noqa: BLE001
        out["casadi + ipopt"] = dict(error=f"{type(e).__name__}: {e}"[:200])
    return out


def solve(quick):
    """{problem (size): {solver: outcome}}: each problem at a small size (every solver; 200
    points on circles with ``quick``, where SLSQP's dense QP at 400 took 1.6 s a solver) and,
    unless ``quick``, at about 10^4 variables (the sparse solvers)."""
    sizes = {"circles": (circles, [200] if quick else [400, 10000]),
             "control": (control, [14] + ([] if quick else [70]))}
    out = {}
    for name, (problem, ns) in sizes.items():
        for size in ns:
            n = size if problem is circles else 2 * size * size
            out[f"{name} (n = {n})"] = solve_one(problem, size, size == ns[0])
            print("solve", name, n, {k: (v.get("seconds"), v.get("objective"),
                                         v.get("error")) for k, v in
                                     out[f"{name} (n = {n})"].items()}, flush=True)
    return out


def _fmt(s):
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


def markdown(results, meta):
    lines = [f"Run {meta['date']} on {meta['machine']}; one thread per system; median per "
             "call (range of repeats); setup is the first call.", ""]
    for kind, by_n in results.items():
        lines += [f"**{kind}**", "",
                  "| n | system | per call | range | setup (pattern, colouring) | colours / nnz "
                  "| vs burnumba |",
                  "|---|---|---|---|---|---|---|"]
        for n, rows in by_n.items():
            base = rows["burnumba sparse"]["call"][0]
            for name, r in rows.items():
                if "error" in r:
                    lines.append(f"| {n} | {name} | failed: {r['error']} | | | | |")
                    continue
                med, lo, hi = r["call"]
                extra = f"{r['colours']} / {r['nnz']}" if "colours" in r else ""
                setup = f"{r['setup']:.3g} s"
                if "pattern" in r:
                    setup += f" ({_fmt(r['pattern'])}, {_fmt(r['colouring'])})"
                lines.append(f"| {n} | {name} | {_fmt(med)} | {_fmt(lo)} - {_fmt(hi)} | "
                             f"{setup} | {extra} | {med / base:.3g}x |")
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
    for kind in ("hessian", "jacobian", "bundle"):
        results[kind] = {}
        for n in sizes:
            nn = math.isqrt(n) ** 2 if kind == "jacobian" else n
            # the bundle's dense Jacobian at 10^4 variables would take 1.3 GB
            got = run(kind, nn, budget, dense_max=1000 if a.quick else 2000,
                      jax_max=1000 if a.quick else 2000 if kind == "bundle" else 10000)
            nn = bundle(nn)[1].size if kind == "bundle" else nn
            results[kind][nn] = got
            print(kind, nn, {k: (v.get("call", ("-",))[0], v.get("err"), v.get("error"))
                             for k, v in got.items()}, flush=True)
    bridge = bridge_overhead(budget)
    print("bridge", bridge, flush=True)
    solved = solve(a.quick)
    meta["load_end"] = os.getloadavg()[0]
    text = markdown(results, meta)
    text += ("\n**solver bridge** (Rosenbrock, n = 1000): bn.value_and_grad's call "
             f"{_fmt(bridge['call'][0])}, the compiled sweep alone {_fmt(bridge['sweep'][0])}: "
             f"{_fmt(bridge['overhead'])} of Python per fun + jac call.\n")
    for problem, by_solver in solved.items():
        text += (f"\n**solve: {problem}**\n\n| solver | seconds | iterations | objective | "
                 "max violation | status |\n|---|---|---|---|---|---|\n")
        for name, r in by_solver.items():
            text += (f"| {name} | failed: {r['error']} | | | | |\n" if "error" in r else
                     f"| {name} | {r['seconds']:.3g} | {r['iterations']} | "
                     f"{r['objective']:.10g} | {r['violation']:.2g} | {r['status']} |\n")
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
