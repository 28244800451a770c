"""Loop workloads: the gradient of a function that loops, written as a Python loop (traced
unrolled) and with burnumba's structured loop ops, against jax.jit (a Python loop, unrolled
by its trace, and lax.fori_loop).

* ``ode``: 10 explicit Euler steps of ``y' = -k y + sin(y) * x`` on a state of 1000, the
  gradient of ``sum(y_10 ** 2)`` with respect to the initial state (issue #32's workload).
* ``long``: the same step on a state of 100 for 10 .. 10^4 steps (``long_case(steps,
  system)``), for the trace time, tape size, time per call and memory against steps.

Each ``make_*`` returns a zero-argument call (its inputs bound) after one warm call, and
the gradient it computes, for the reports to compare before timing.
"""
import numpy as np

import burnumba as bn

DT, K = 0.05, 0.8
ODE_N, ODE_STEPS = 1000, 10
LONG_N = 100


def _state(n):
    rng = np.random.default_rng(0)
    return rng.normal(size=n), rng.normal(size=n)


def _step(y, x, np_=np):
    return y + DT * (-K * y + np_.sin(y) * x)


# -- burnumba -------------------------------------------------------------------------------------
def bn_python(steps):
    """The loop as written in Python: unrolled into the tape by the trace."""
    def loss(y0, x):
        y = y0
        for _ in range(steps):
            y = _step(y, x)
        return np.sum(y * y)
    return loss


def bn_fori(steps, checkpoint=None):
    """bn.fori_loop: the body traced once, run step by step."""
    def loss(y0, x):
        y = bn.fori_loop(0, steps, lambda i, y: _step(y, x), y0, checkpoint=checkpoint)
        return np.sum(y * y)
    return loss


def make_bn(loss, n):
    y0, x = _state(n)
    g = bn.grad(loss)
    g(y0, x)
    return (lambda: g(y0, x)), g(y0, x), g


# -- jax ------------------------------------------------------------------------------------------
def make_jax(steps, n, how):
    """jax.jit(jax.grad(loss)): ``how`` "python" (the loop unrolled by jax's trace) or
    "fori" (lax.fori_loop)."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def loss(y0, x):
        if how == "fori":
            y = jax.lax.fori_loop(0, steps, lambda i, y: _step(y, x, jnp), y0)
        else:
            y = y0
            for _ in range(steps):
                y = _step(y, x, jnp)
        return jnp.sum(y * y)
    y0, x = _state(n)
    yj, xj = jnp.asarray(y0), jnp.asarray(x)
    g = jax.jit(jax.grad(loss))
    g(yj, xj).block_until_ready()
    return (lambda: g(yj, xj).block_until_ready()), np.asarray(g(yj, xj)), g, (yj, xj)


# -- the pytest-benchmark cases ------------------------------------------------------------------
def _ode_cases():
    return {
        "burnumba python loop": lambda: make_bn(bn_python(ODE_STEPS), ODE_N)[0],
        "burnumba fori_loop": lambda: make_bn(bn_fori(ODE_STEPS), ODE_N)[0],
        "burnumba fori_loop checkpoint": lambda: make_bn(bn_fori(ODE_STEPS, True), ODE_N)[0],
        "jax.jit python loop": lambda: make_jax(ODE_STEPS, ODE_N, "python")[0],
        "jax.jit fori_loop": lambda: make_jax(ODE_STEPS, ODE_N, "fori")[0],
    }


def _long_cases(steps):
    return {
        f"burnumba fori_loop {steps}": lambda: make_bn(bn_fori(steps), LONG_N)[0],
        f"burnumba fori_loop checkpoint {steps}":
            lambda: make_bn(bn_fori(steps, True), LONG_N)[0],
        f"jax.jit fori_loop {steps}": lambda: make_jax(steps, LONG_N, "fori")[0],
    }


CASES, GROUPS = {}, {}
for _name, _make in _ode_cases().items():
    CASES[_name], GROUPS[_name] = _make, "loops-ode"
for _steps in (10, 1000):
    for _name, _make in _long_cases(_steps).items():
        CASES[_name], GROUPS[_name] = _make, f"loops-long-{_steps}"
