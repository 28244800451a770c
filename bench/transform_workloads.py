"""Functional transformations (hvp, Hessian, per-sample gradients, an njit handle), per system.

Four cases, float64, each on data drawn once with a seeded numpy Generator (``data_for``):

* ``hvp-rosenbrock``: the Hessian of the n-dimensional Rosenbrock function (n = 1000) times a
  vector, without forming the Hessian. burnumba ``bn.hvp(f, x, v)``; ``jax.jit`` of
  ``jvp(grad(f), (x,), (v,))`` (forward over reverse, the JAX autodiff cookbook's hvp);
  ``torch.func`` the same, eager and under ``torch.compile``; HIPS
  ``autograd.hessian_vector_product``.
* ``hessian-logreg``: the full (d, d) Hessian of an L2-regularised logistic-regression loss,
  ``mean(log(1 + exp(-y * (X @ w)))) + 0.5 * lam * sum(w * w)`` with d = 50, n = 1000,
  lam = 1e-2, labels y in {-1, +1}, X and y passed as arguments. burnumba
  ``bn.hessian(loss)``; ``jax.jit(jax.hessian(loss))``; ``torch.func.hessian`` (eager and
  under ``torch.compile``); ``autograd.hessian``.
* ``per-sample-mlp``: per-sample gradients of an MLP 2 -> 16 -> 16 -> 1 (tanh) with a squared
  error ``(mlp(x) - y) ** 2``, params a dict, batch B = 1024. burnumba
  ``bn.vmap(bn.grad(loss), in_axes=(None, 0, 0))`` on one thread and on two;
  ``jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))``;
  ``torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))`` (eager and under
  ``torch.compile``). HIPS autograd has no vmap, so no row.
* ``hessdiag-kmeans``: the gradient and the Hessian's diagonal of a k-means objective, the sum
  over N = 1000 points in 2-D of the squared distance to the nearest of K = 8 centres
  (``sum(min_k |x_i - c_k|^2)``, the centres a (8, 2) array), by forward over reverse (the
  diagonal of a Hessian is not cheaper to get than the Hessian in any of these systems:
  16 tangent sweeps of the gradient). burnumba ``bn.grad(f)`` and ``bn.hessian(f)`` (two
  calls, each traced once); ``jax.jit`` of ``(grad(f), diag(jacfwd(grad(f))))`` as one
  program; ``torch.func``'s the same, eager and compiled; ``autograd.grad`` and
  ``autograd.hessian``. (Issue #32 measured burnumba at 8-9x jax.jit's time here.)
* ``njit-tiny``: the BurTorch paper's tiny graph ``((a + b) - (a * b + b ** 3)) ** 2 / 2``
  at (a, b) = (-41, 2) (bench/workloads.py ``tiny``). One call is one value and gradient
  through ``h = bn.njit_value_and_grad(tiny, 1.0, 2.0, argnums=(0, 1))``,
  ``value = h(a, b, grad)``, made from inside a ``@numba.njit`` loop (no Python between
  calls); ``bn.value_and_grad`` called from a Python loop is the comparison row. The paper's
  C++ figure for BurTorch (42-155 ns) is cited, not measured: ``BURTORCH_PAPER_NS``.

jax runs twice: with ``jax_cpu_enable_async_dispatch`` off ("sync dispatch", the main row: the
computation runs on the calling thread) and with jax's default asynchronous dispatch, which
hands every call to a second thread. On this 2-core machine the default's time is bimodal when
another process holds a core (e.g. the hvp takes ~8 us or ~40 us from one run to the next),
and the two settings trade places from run to run; both rows are shown.

``make(case, system)`` returns ``(call, to_array, inner)``:

* ``call()`` takes no arguments and performs ONE evaluation of the transformation, until the
  result is available in the system's own types: numpy arrays for burnumba and autograd,
  device arrays (``block_until_ready()``-ed) for jax, tensors for torch. This is what is timed.
  For the njit handle, one ``call()`` is one call of a numba loop that calls the handle
  ``inner`` times; the per-call figure is then the loop's time / ``inner``.
* ``to_array(result)`` gives the numbers as one flat float64 numpy array (for the check; not
  timed), in the order ``reference(case)`` uses.

Every system's result is checked against ``reference(case)``, a closed-form float64 numpy
computation (scipy's ``rosen_hess_prod`` formula; the logistic Hessian
``X^T diag(s (1 - s)) X / n + lam I``; a hand-written per-sample backward pass; the paper's
golden values), with ``rel_err`` = max |r - ref| / max |ref|, to ``RTOL`` = 1e-10. So all
systems agree with each other to that tolerance too.

A peer that is not installed raises ImportError from ``make``.
"""
import functools
import itertools
import types

import numpy as np

RTOL = 1e-10

# -- sizes and data ----------------------------------------------------------------------------
ROSEN_N = 1000
LOGREG_D, LOGREG_N, LOGREG_LAM = 50, 1000, 1e-2
KMEANS_N, KMEANS_K = 1000, 8
MLP_SIZES = (2, 16, 16, 1)
MLP_KEYS = ("W1", "b1", "W2", "b2", "W3", "b3")
MLP_BATCH = 1024
TINY_POINT, TINY_EXPECTED = (-41.0, 2.0), (612.5, -35.0, 1050.0)
NJIT_INNER = 10_000          # handle calls per numba loop (one timed call)
BURTORCH_PAPER_NS = (42, 155)
SEED = 0

# case -> (description, systems in table order, the system the ratios divide by)
CASES = {
    "hvp-rosenbrock": (
        f"Hessian-vector product of the Rosenbrock function, n = {ROSEN_N}",
        ("burnumba", "jax", "jax-async", "torch", "torch-compile", "autograd", "casadi"),
        "burnumba"),
    "hessian-logreg": (
        (f"full Hessian of an L2-regularised logistic-regression loss, d = {LOGREG_D}, "
         f"n = {LOGREG_N}, lam = {LOGREG_LAM}"),
        ("burnumba", "jax", "jax-async", "torch", "torch-compile", "autograd"), "burnumba"),
    "per-sample-mlp": (
        f"per-sample gradients of an MLP 2-16-16-1 (tanh), squared error, B = {MLP_BATCH}",
        ("burnumba", "burnumba-2t", "jax", "jax-async", "torch", "torch-compile", "casadi"),
        "burnumba"),
    "hessdiag-kmeans": (
        (f"gradient and Hessian diagonal of a k-means objective, N = {KMEANS_N} points in "
         f"2-D, K = {KMEANS_K} centres (forward over reverse)"),
        ("burnumba", "jax", "jax-async", "torch", "torch-compile", "autograd"), "burnumba"),
    "njit-tiny": (
        "value and gradient of the paper's tiny graph at (a, b) = (-41, 2)",
        ("burnumba-njit", "burnumba-python"), "burnumba-njit"),
}

# row labels, and the module each system needs (for importorskip and versions)
LABELS = {
    "burnumba": "burnumba", "burnumba-2t": "burnumba (2 threads)",
    "jax": "jax.jit (sync dispatch)", "jax-async": "jax.jit (async dispatch: jax's default)",
    "torch": "torch.func (eager)", "torch-compile": "torch.compile(torch.func)",
    "autograd": "autograd", "casadi": "CasADi (SX virtual machine)",
    "burnumba-njit": "burnumba njit handle, from a @njit loop",
    "burnumba-python": "burnumba bn.value_and_grad, from a Python loop",
}
MODULES = {"burnumba": "burnumba", "burnumba-2t": "burnumba", "burnumba-njit": "burnumba",
           "burnumba-python": "burnumba", "jax": "jax", "jax-async": "jax", "torch": "torch",
           "torch-compile": "torch", "autograd": "autograd", "casadi": "casadi"}
THREADS = {"burnumba-2t": 2}         # every other system runs on one thread


@functools.cache
def data_for(case):
    """The case's float64 inputs, a dict of numpy arrays (the same for every system)."""
    rng = np.random.default_rng(SEED)
    if case == "hvp-rosenbrock":
        return {"x": rng.uniform(-1.5, 1.5, size=ROSEN_N), "v": rng.normal(size=ROSEN_N)}
    if case == "hessian-logreg":
        X = rng.normal(size=(LOGREG_N, LOGREG_D))
        w_true = rng.normal(size=LOGREG_D)
        y = np.where(X @ w_true + rng.normal(size=LOGREG_N) > 0, 1.0, -1.0)
        return {"w": 0.1 * rng.normal(size=LOGREG_D), "X": X, "y": y}
    if case == "per-sample-mlp":
        out = {}
        for i, (nin, nout) in enumerate(itertools.pairwise(MLP_SIZES), start=1):
            out[f"W{i}"] = rng.normal(size=(nin, nout)) / np.sqrt(nin)
            out[f"b{i}"] = 0.1 * rng.normal(size=nout)
        X = rng.normal(size=(MLP_BATCH, 2))
        out["X"] = X
        out["y"] = np.sin(X[:, 0]) * np.cos(X[:, 1])
        return out
    if case == "hessdiag-kmeans":
        centres = rng.normal(size=(KMEANS_K, 2)) * 2.0
        points = centres[rng.integers(0, KMEANS_K, KMEANS_N)] + rng.normal(size=(KMEANS_N, 2))
        return {"c": centres + 0.3 * rng.normal(size=(KMEANS_K, 2)), "x": points}
    if case == "njit-tiny":
        return {"a": np.float64(TINY_POINT[0]), "b": np.float64(TINY_POINT[1])}
    raise KeyError(case)


def mlp_params(d):
    return {k: d[k] for k in MLP_KEYS}


# -- the functions, written once over an array module (numpy, autograd.numpy, jax.numpy, torch)
def rosenbrock(x, xp=np):
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def logreg_loss(w, X, y, xp=np):
    return xp.mean(xp.log(1.0 + xp.exp(-y * (X @ w)))) + 0.5 * LOGREG_LAM * xp.sum(w * w)


def mlp_loss(p, x, y, xp=np):
    """One sample: x (2,), y a scalar."""
    h = xp.tanh(x @ p["W1"] + p["b1"])
    h = xp.tanh(h @ p["W2"] + p["b2"])
    out = (h @ p["W3"] + p["b3"])[0]
    return (out - y) ** 2


def kmeans(c, x, xp=np):
    """sum_i min_k |x_i - c_k|^2: c (K, 2), x (N, 2)."""
    d = xp.sum((x[:, None, :] - c[None, :, :]) ** 2, axis=2)      # (N, K)
    return xp.sum(xp.min(d, axis=1))


def tiny(a, b):
    return ((a + b) - (a * b + b ** 3)) ** 2 / 2


# -- closed-form float64 references ------------------------------------------------------------
def reference(case):
    """The case's exact result, one flat float64 array (see the module docstring)."""
    d = data_for(case)
    if case == "hvp-rosenbrock":          # scipy.optimize.rosen_hess_prod, written out
        x, v = d["x"], d["v"]
        Hv = np.zeros_like(x)
        Hv[:-1] += (1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0) * v[:-1] - 400.0 * x[:-1] * v[1:]
        Hv[1:] += 200.0 * v[1:] - 400.0 * x[:-1] * v[:-1]
        return Hv
    if case == "hessian-logreg":          # X^T diag(y^2 s (1 - s)) X / n + lam I, s = sigma(yXw)
        w, X, y = d["w"], d["X"], d["y"]
        s = 1.0 / (1.0 + np.exp(-y * (X @ w)))
        H = (X * (y * y * s * (1.0 - s))[:, None]).T @ X / len(y)
        return (H + LOGREG_LAM * np.eye(len(w))).ravel()
    if case == "per-sample-mlp":          # the backward pass by hand, every sample at once
        p, X, y = mlp_params(d), d["X"], d["y"]
        h1 = np.tanh(X @ p["W1"] + p["b1"])
        h2 = np.tanh(h1 @ p["W2"] + p["b2"])
        dout = 2.0 * ((h2 @ p["W3"] + p["b3"])[:, 0] - y)             # (B,)
        g = {"W3": h2[:, :, None] * dout[:, None, None], "b3": dout[:, None]}
        da2 = (dout[:, None] * p["W3"][:, 0]) * (1.0 - h2 * h2)       # tanh' = 1 - y^2
        g["W2"], g["b2"] = h1[:, :, None] * da2[:, None, :], da2
        da1 = (da2 @ p["W2"].T) * (1.0 - h1 * h1)
        g["W1"], g["b1"] = X[:, :, None] * da1[:, None, :], da1
        return _flat_dict(g)
    if case == "hessdiag-kmeans":         # each point pulls its nearest centre: 2 (c_k - x_i)
        c, x = d["c"], d["x"]
        near = np.argmin(np.sum((x[:, None, :] - c[None, :, :]) ** 2, axis=2), axis=1)
        g = np.zeros_like(c)
        np.add.at(g, near, 2.0 * (c[near] - x))
        count = np.bincount(near, minlength=len(c)).astype(np.float64)
        return np.concatenate([g.ravel(), np.repeat(2.0 * count, 2)])
    if case == "njit-tiny":
        return np.array(TINY_EXPECTED)
    raise KeyError(case)


def rel_err(got, ref):
    got = np.asarray(got, dtype=np.float64)
    if got.shape != ref.shape:
        return float("inf")
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-300))


def _flat_dict(g):
    return np.concatenate([np.asarray(g[k], dtype=np.float64).ravel() for k in MLP_KEYS])


def _flat(r):
    return np.asarray(r, dtype=np.float64).ravel()


def _grad_and_diag(r):
    return np.concatenate([_flat(r[0]), _flat(r[1])])


# -- burnumba ----------------------------------------------------------------------------------
def make_burnumba(case, threads=1):
    import burnumba as bn

    d = data_for(case)
    if case == "hvp-rosenbrock":
        x, v = d["x"], d["v"]
        # bn.hvp traces the gradient of ``rosenbrock`` once (cached per function) and runs
        # one tangent sweep of that tape per call
        return functools.partial(bn.hvp, rosenbrock, x, v), _flat, 1
    if case == "hessian-logreg":
        return functools.partial(bn.hessian(logreg_loss), d["w"], d["X"], d["y"]), _flat, 1
    if case == "per-sample-mlp":
        per_sample = bn.vmap(bn.grad(mlp_loss), in_axes=(None, 0, 0), threads=threads)
        return functools.partial(per_sample, mlp_params(d), d["X"], d["y"]), _flat_dict, 1
    if case == "hessdiag-kmeans":
        grad, hess = bn.grad(kmeans), bn.hessian(kmeans)
        c, x = d["c"], d["x"]

        def call():
            return grad(c, x), np.diag(hess(c, x).reshape(c.size, c.size))
        return call, _grad_and_diag, 1
    raise KeyError(case)


def make_burnumba_njit(case):
    if case != "njit-tiny":
        raise KeyError(case)
    import numba

    import burnumba as bn

    h = bn.njit_value_and_grad(tiny, 1.0, 2.0, argnums=(0, 1))

    @numba.njit
    def loop(h, n, a, b, grad):
        # n calls of the handle; the values and gradients are summed so that no call is
        # dead code, and the last call's are returned
        acc, value = 0.0, 0.0
        for _ in range(n):
            value = h(a, b, grad)
            acc += value + grad[0] + grad[1]
        return value, acc

    a, b = TINY_POINT
    grad = np.empty(h.grad_size, dtype=np.float64)

    def call():
        value, _ = loop(h, NJIT_INNER, a, b, grad)
        return value, grad.copy()

    return call, lambda r: np.array([r[0], r[1][0], r[1][1]]), NJIT_INNER


def make_burnumba_python(case):
    if case != "njit-tiny":
        raise KeyError(case)
    import burnumba as bn

    vg = bn.value_and_grad(tiny, argnums=(0, 1))
    # Python floats in, (value, (da, db)) Python floats out, as in bench/workloads.py
    return functools.partial(vg, *TINY_POINT), lambda r: np.array([r[0], *r[1]]), 1


# -- jax ---------------------------------------------------------------------------------------
def make_jax(case, sync=True):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    try:
        # before the first array: the CPU client reads it once, when it starts, so one
        # process has one setting (report_transforms.py runs each row in its own process)
        jax.config.update("jax_cpu_enable_async_dispatch", not sync)
    except AttributeError:              # jax < 0.4.32 has only asynchronous dispatch
        if sync:
            raise ImportError("this jax has no jax_cpu_enable_async_dispatch") from None
    d = {k: jnp.asarray(v, dtype=jnp.float64) for k, v in data_for(case).items()}
    if case == "hvp-rosenbrock":
        f = functools.partial(rosenbrock, xp=jnp)
        fn = jax.jit(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1])
        args = (d["x"], d["v"])
        to_array = _flat
    elif case == "hessian-logreg":
        fn = jax.jit(jax.hessian(functools.partial(logreg_loss, xp=jnp)))
        args = (d["w"], d["X"], d["y"])
        to_array = _flat
    elif case == "per-sample-mlp":
        fn = jax.jit(jax.vmap(jax.grad(functools.partial(mlp_loss, xp=jnp)),
                              in_axes=(None, 0, 0)))
        args = (mlp_params(d), d["X"], d["y"])
        to_array = _flat_dict
    elif case == "hessdiag-kmeans":
        g = jax.grad(functools.partial(kmeans, xp=jnp))
        fn = jax.jit(lambda c, x: (g(c, x), jnp.diag(jax.jacfwd(g)(c, x).reshape(
            c.size, c.size))))
        args = (d["c"], d["x"])
        to_array = _grad_and_diag
    else:
        raise KeyError(case)

    def call():
        # device arrays made once; the timed call is the jitted dispatch plus
        # block_until_ready(), so the numbers are computed (not copied back to numpy)
        return jax.block_until_ready(fn(*args))

    return call, to_array, 1


# -- torch -------------------------------------------------------------------------------------
def make_torch(case, compiled=False):
    import torch

    torch.set_num_threads(1)
    tf = torch.func
    d = {k: torch.from_numpy(np.asarray(v, dtype=np.float64)) for k, v in data_for(case).items()}
    if case == "hvp-rosenbrock":
        f = functools.partial(rosenbrock, xp=torch)

        def fn(x, v):
            return tf.jvp(tf.grad(f), (x,), (v,))[1]
        args = (d["x"], d["v"])
        to_array = _flat
    elif case == "hessian-logreg":
        fn = tf.hessian(functools.partial(logreg_loss, xp=torch))
        args = (d["w"], d["X"], d["y"])
        to_array = _flat
    elif case == "per-sample-mlp":
        fn = tf.vmap(tf.grad(functools.partial(mlp_loss, xp=torch)), in_dims=(None, 0, 0))
        args = (mlp_params(d), d["X"], d["y"])
        to_array = _flat_dict
    elif case == "hessdiag-kmeans":
        tnp = types.SimpleNamespace(sum=torch.sum, min=lambda a, axis: torch.amin(a, dim=axis))
        g = tf.grad(functools.partial(kmeans, xp=tnp))

        def fn(c, x):
            return g(c, x), torch.diagonal(tf.jacfwd(g)(c, x).reshape(c.numel(), c.numel()))
        args = (d["c"], d["x"])
        to_array = _grad_and_diag
    else:
        raise KeyError(case)
    if compiled:
        # inductor's defaults (C++ codegen on CPU); compiled on the first call
        fn = torch.compile(fn)

    def call():
        # CPU, one thread: the result tensors are computed when the call returns
        return fn(*args)

    def numpy_of(r):
        if isinstance(r, dict):
            return {k: t.detach().numpy() for k, t in r.items()}
        if isinstance(r, tuple):
            return tuple(t.detach().numpy() for t in r)
        return r.detach().numpy()

    return call, lambda r: to_array(numpy_of(r)), 1


# -- autograd ----------------------------------------------------------------------------------
def make_autograd(case):
    import autograd
    import autograd.numpy as anp

    d = data_for(case)
    if case == "hvp-rosenbrock":
        hvp = autograd.hessian_vector_product(functools.partial(rosenbrock, xp=anp))
        # autograd records a fresh graph (two, here: reverse over reverse) on every call
        return functools.partial(hvp, d["x"], d["v"]), _flat, 1
    if case == "hessian-logreg":
        H = autograd.hessian(functools.partial(logreg_loss, xp=anp))
        return functools.partial(H, d["w"], d["X"], d["y"]), _flat, 1
    if case == "hessdiag-kmeans":
        f = functools.partial(kmeans, xp=anp)
        grad, hess = autograd.grad(f), autograd.hessian(f)
        c, x = d["c"], d["x"]

        def call():
            return grad(c, x), np.diag(hess(c, x).reshape(c.size, c.size))
        return call, _grad_and_diag, 1
    raise KeyError(case)


# -- CasADi -------------------------------------------------------------------------------------
def make_casadi(case):
    import casadi

    d = data_for(case)
    if case == "hvp-rosenbrock":
        # the Hessian-vector product as one SX expression (reverse over the gradient, by
        # casadi.jtimes), run by CasADi's SX virtual machine
        x, v = casadi.SX.sym("x", ROSEN_N), casadi.SX.sym("v", ROSEN_N)
        g = casadi.gradient(rosenbrock(x, xp=types.SimpleNamespace(sum=casadi.sum1)), x)
        fn = casadi.Function("hvp", [x, v], [casadi.jtimes(g, x, v)])
        return (lambda: fn(d["x"], d["v"]).full()), _flat, 1
    if case == "per-sample-mlp":
        # one sample's gradient as an SX Function of (parameters, x, y), mapped over the
        # batch by Function.map (serial, the parameters not mapped: one column shared)
        sym = {k: casadi.SX.sym(k, *d[k].shape) if d[k].ndim == 2 else
               casadi.SX.sym(k, d[k].shape[0]) for k in MLP_KEYS}
        x, y = casadi.SX.sym("x", 2), casadi.SX.sym("y")
        h = casadi.tanh(sym["W1"].T @ x + sym["b1"])
        h = casadi.tanh(sym["W2"].T @ h + sym["b2"])
        loss = (sym["W3"].T @ h + sym["b3"] - y) ** 2
        flat = casadi.vertcat(*[casadi.vec(sym[k]) for k in MLP_KEYS])
        one = casadi.Function("g", [flat, x, y], [casadi.gradient(loss, flat)])
        batch = one.map("per_sample", "serial", MLP_BATCH, [0], [])
        p = np.concatenate([d[k].ravel(order="F") for k in MLP_KEYS])
        X, Y = d["X"].T.copy(), d["y"][None, :].copy()
        sizes = [d[k].size for k in MLP_KEYS]

        def to_array(G):
            # G is (parameters x batch), each parameter column-major as casadi.vec stores it
            G, out, at = np.asarray(G.full()), [], 0
            for k, n in zip(MLP_KEYS, sizes):
                shape = d[k].shape
                block = G[at:at + n].T.reshape((MLP_BATCH,) + shape[::-1])
                out.append(np.swapaxes(block, 1, 2) if len(shape) == 2 else block)
                at += n
            return np.concatenate([o.ravel() for o in out])
        return (lambda: batch(p, X, Y)), to_array, 1
    raise KeyError(case)


MAKERS = {
    "casadi": make_casadi,
    "burnumba": make_burnumba,
    "burnumba-2t": functools.partial(make_burnumba, threads=2),
    "burnumba-njit": make_burnumba_njit,
    "burnumba-python": make_burnumba_python,
    "jax": make_jax,
    "jax-async": functools.partial(make_jax, sync=False),
    "torch": make_torch,
    "torch-compile": functools.partial(make_torch, compiled=True),
    "autograd": make_autograd,
}


def make(case, system):
    """(call, to_array, inner) for this case and system; ImportError if the peer is missing."""
    if system not in CASES[case][1]:
        raise KeyError(f"{system} has no {case} row")
    return MAKERS[system](case)


def warm_up(call, n=20, budget_s=2.0):
    """Untimed calls: traces and compiles on the first, caches fill on the next ones. At
    least 3 calls, at most n, and no new call once budget_s has passed after the first."""
    import time

    result = call()
    t0 = time.perf_counter()
    for i in itertools.count(1):
        if i >= n or (i >= 3 and time.perf_counter() - t0 > budget_s):
            break
        result = call()
    return result
