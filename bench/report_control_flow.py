"""Programs as written, with Python control flow, changing ints and fresh random draws:
burnumba against autograd and jax, per call.

    .venv/bin/python bench/report_control_flow.py [--quick] [--out docs/benchmarks/data]

Cases (float64; each a gradient call, the inputs taking different branches across calls):
* ``piecewise``: ``x ** 2 if x < 1 else 2 x - 1`` at x alternating 0.5 and 1.5;
* ``newton``: sqrt(a) by a ``while`` Newton loop to 1e-12, differentiated through its
  iterations, at a alternating 2.0 and 30.0 (different trip counts);
* ``adam``: 100 Adam steps of a least-squares loss whose learning rate depends on the
  iteration number ``i`` passed to the loss (the time of the whole loop);
* ``vi``: one step of a reparameterised Gaussian VI estimator (S = 16 fresh standard normal
  draws from a captured RandomState every call, D = 10);
* ``onehot``: one SGD gradient of a softmax cross-entropy whose label, a Python int argument,
  writes a one-hot numpy array (``y = np.zeros(10); y[label] = 1``), the next of 200
  samples each call (labels 0-9 in turn). jax cannot write into its arrays: both jax forms
  build the one-hot vector as ``jnp.arange(10) == label``.

Systems: burnumba as written; autograd as written; jax as written without jit (jax.grad
follows Python control flow on concrete values); jax.jit, rewritten where jit requires it
(``jnp.where`` for the branch, ``lax.fori_loop`` with the trip count fixed at the largest for
Newton, since ``lax.while_loop`` cannot be reverse-differentiated, explicit PRNG keys for the
draws). One thread each (bench/_single_thread.py), all in this process. Per call: the median
of 5 repeats (3 with --quick) of a loop of N calls, N set so that a repeat takes about 0.2 s
(0.05 s with --quick); the range of the repeats is printed.
"""
import _single_thread  # noqa: F401,I001  (first: pins every library to one thread)

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import burnumba as bn  # noqa: E402


def timed(call, budget, repeats):
    call()
    t = time.perf_counter()
    call()
    one = max(time.perf_counter() - t, 1e-7)
    n = max(1, int(budget / one))
    reps = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            call()
        reps.append((time.perf_counter() - t) / n)
    return float(np.median(reps)), min(reps), max(reps)


# -- the programs, written once for any numpy-like module ------------------------------------
def piecewise(x):
    if x < 1.0:
        return x ** 2
    return 2.0 * x - 1.0


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def adam_loss(np_, w, i, X, y):
    lr_scale = 1.0 / (1.0 + 0.01 * i)          # a schedule in the iteration number
    return lr_scale * np_.mean((np_.dot(X, w) - y) ** 2) + 1e-3 * np_.sum(w ** 2)


def adam_loop(value_and_grad, w, X, y, steps=100, lr=0.05):
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for i in range(steps):
        _, g = value_and_grad(w, i, X, y)
        g = np.asarray(g)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w = w - lr * (m / (1 - 0.9 ** (i + 1))) / (np.sqrt(v / (1 - 0.999 ** (i + 1))) + 1e-8)
    return w


def vi_objective(np_, draw, params, D=10, S=16):
    mean, log_std = params[:D], params[D:]
    z = draw(S, D) * np_.exp(log_std) + mean
    logp = -0.5 * np_.sum(z ** 2, axis=1) - 0.1 * np_.sum(z ** 4, axis=1)
    return -(np_.mean(logp) + np_.sum(log_std))


def onehot_loss(np_, W, x, label):
    y = np_.zeros(10)
    y[label] = 1.0                             # plain numpy: a write at an int argument
    z = np_.dot(x, W)
    z = z - np_.max(z)
    return -np_.sum(y * (z - np_.log(np_.sum(np_.exp(z)))))


def _samples():
    rng = np.random.default_rng(3)
    return rng.normal(size=(5, 10)) * 0.1, rng.normal(size=(200, 5)), \
        [k % 10 for k in range(200)]


def _cycling(g, W, X, labels):
    at = [0]

    def call():
        k = at[0] = (at[0] + 1) % len(labels)
        return g(W, X[k], labels[k])
    return call


# -- systems ----------------------------------------------------------------------------------
def _alternating():
    """f(a), f(b), f(a), ...: each call takes the other branch (or trip count)."""
    flip = [0]

    def call(f, a, b):
        flip[0] ^= 1
        return f(a if flip[0] else b)
    return call


def _numpy_cases(grad, value_and_grad, np_):
    """The four cases for a system that runs the programs as written on numpy-like
    ``np_`` (burnumba on numpy itself, autograd on autograd.numpy)."""
    rs = np.random.RandomState(0)
    X = np.random.default_rng(1).normal(size=(64, 8))
    yv = np.random.default_rng(2).normal(size=64)
    g_pw, g_nt = grad(piecewise), grad(newton_sqrt)
    vg_adam = value_and_grad(functools.partial(adam_loss, np_))
    g_vi = grad(lambda p: vi_objective(np_, rs.randn, p))
    p0 = np.zeros(20)
    alternate = _alternating()
    return {"piecewise": lambda: alternate(g_pw, 0.5, 1.5),
            "newton": lambda: alternate(g_nt, 2.0, 30.0),
            "adam": lambda: adam_loop(vg_adam, np.zeros(8), X, yv),
            "vi": lambda: g_vi(p0),
            "onehot": _cycling(grad(functools.partial(onehot_loss, np_)), *_samples())}


def burnumba_cases():
    return _numpy_cases(bn.grad, bn.value_and_grad, np)


def autograd_cases():
    import autograd
    import autograd.numpy as anp
    return _numpy_cases(autograd.grad, autograd.value_and_grad, anp)


def jax_cases(jit):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    X = jnp.asarray(np.random.default_rng(1).normal(size=(64, 8)))
    yv = jnp.asarray(np.random.default_rng(2).normal(size=64))
    key = [jax.random.PRNGKey(0)]
    if jit:
        g_pw = jax.jit(jax.grad(lambda x: jnp.where(x < 1.0, x ** 2, 2.0 * x - 1.0)))

        def fixed_newton(a):          # lax.while_loop has no reverse derivative: a fixed count
            return jax.lax.fori_loop(0, 8, lambda _, y: 0.5 * (y + a / y), a)
        g_nt = jax.jit(jax.grad(fixed_newton))
        vg_adam = jax.jit(jax.value_and_grad(functools.partial(adam_loss, jnp)))
        g_vi = jax.jit(jax.grad(lambda p, k: vi_objective(
            jnp, lambda *s: jax.random.normal(k, s), p)))
    else:
        g_pw, g_nt = jax.grad(piecewise), jax.grad(newton_sqrt)
        vg_adam = jax.value_and_grad(functools.partial(adam_loss, jnp))
        g_vi = jax.grad(lambda p, k: vi_objective(jnp, lambda *s: jax.random.normal(k, s), p))
    p0 = jnp.zeros(20)
    flipped = _alternating()

    def alternate(f, a, b):
        return flipped(f, a, b).block_until_ready()

    def vi():
        key[0], sub = jax.random.split(key[0])
        return g_vi(p0, sub).block_until_ready()

    def onehot_jax(W, x, label):                  # jax arrays are immutable: rewritten
        z = jnp.dot(x, W)
        z = z - jnp.max(z)
        return -jnp.sum((jnp.arange(10) == label) * (z - jnp.log(jnp.sum(jnp.exp(z)))))
    g_oh = jax.grad(onehot_jax)
    g_oh = jax.jit(g_oh) if jit else g_oh
    onehot = _cycling(lambda *a: g_oh(*a).block_until_ready(), *_samples())
    return {"piecewise": lambda: alternate(g_pw, 0.5, 1.5),
            "newton": lambda: alternate(g_nt, 2.0, 30.0),
            "adam": lambda: adam_loop(vg_adam, np.zeros(8), X, yv),
            "vi": vi, "onehot": onehot}


SYSTEMS = {"burnumba": burnumba_cases, "autograd": autograd_cases,
           "jax (no jit, as written)": functools.partial(jax_cases, False),
           "jax.jit (rewritten)": functools.partial(jax_cases, True)}


def _fmt(s):
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None, help="folder for control_flow.json / .md")
    ap.add_argument("--json", default=None, help="bench/report.py's stage: the JSON file")
    a = ap.parse_args()
    if a.json:
        a.out = os.path.dirname(os.path.abspath(a.json))
    budget, repeats = (0.05, 3) if a.quick else (0.2, 5)
    results = {}
    for name, make in SYSTEMS.items():
        try:
            cases = make()
        except ImportError as e:
            results[name] = {"error": f"not installed: {e}"}
            continue
        results[name] = {case: timed(call, budget, repeats) for case, call in cases.items()}
        print(name, {k: _fmt(v[0]) for k, v in results[name].items()}, flush=True)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                machine=f"{platform.machine()} {os.cpu_count()} cores, python "
                        f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    cases = ["piecewise", "newton", "adam", "vi", "onehot"]
    lines = [f"Run {meta['date']} on {meta['machine']}; one thread per system; median per "
             f"call, the range of {repeats} repeats in parentheses; the ratio is the system's "
             "time over burnumba's.", "",
             "| system | " + " | ".join(cases) + " |", "|---|" + "---|" * len(cases)]
    base = results["burnumba"]
    for name, r in results.items():
        if "error" in r:
            lines.append(f"| {name} | {r['error']} |" + " |" * (len(cases) - 1))
            continue
        cells = [f"{_fmt(r[c][0])} ({_fmt(r[c][1])} - {_fmt(r[c][2])})"
                 + ("" if name == "burnumba" else f", {r[c][0] / base[c][0]:.2g}x")
                 for c in cases]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    print(text)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "control_flow.json"), "w") as fh:
            json.dump(dict(meta=meta, results=results), fh, indent=1)
        with open(os.path.join(a.out, "control_flow.md"), "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
