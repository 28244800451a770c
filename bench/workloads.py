"""The two scalar workloads of the BurTorch paper (Burlachenko & Richtarik 2025), per system.

``make(system, workload)`` returns ``(call, to_floats)``:

* ``call()`` takes no arguments and performs ONE value-and-gradient evaluation at the
  workload's fixed point. This is what the benchmarks time. It returns the system's native
  result, ready to use: Python floats for burnumba and micrograd, numpy scalars for autograd,
  device arrays (already ``block_until_ready()``-ed) for jax, tensors for torch, casadi.DM
  matrices (1 x 1) for CasADi.
* ``to_floats(result)`` turns that result into ``(value, dg/da, dg/db)`` Python floats for
  printing and checking. It is NOT timed: the rule for every system is "time until the result
  is computed and available in the system's own types". burnumba already returns Python
  floats, so it pays for that conversion inside its timed call; jax and torch do not (for
  them ``float()`` / ``.item()`` adds a device-to-host read per number).

A peer that is not installed raises ImportError from ``make``.

Every system evaluates the same expression, written once below with plain operators. The
small graph is micrograd's README example; its ``c += c + 1`` lines are written out of place
(``c = c + c + 1``), as micrograd's own torch test does: for burnumba, micrograd, autograd and
jax values the two spellings are the same operation, while on torch tensors ``+=`` would be
an in-place op.
"""
import functools


def tiny(a, b, relu=None):
    return ((a + b) - (a * b + b ** 3)) ** 2 / 2


def small(a, b, relu):
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + relu(b + a)
    d = d + 3 * d + relu(b - a)
    e = c - d
    f = e ** 2
    g = f / 2.0
    g = g + 10.0 / f
    return g


# name -> (function, point (a, b), expected (g, dg/da, dg/db))
WORKLOADS = {
    "tiny-graph": (tiny, (-41.0, 2.0), (612.5, -35.0, 1050.0)),
    "small-graph": (small, (-4.0, 2.0), (24.70408163265306, 138.83381924198252,
                                         645.5772594752186)),
}

SYSTEMS = ("burnumba", "micrograd", "autograd", "jax", "torch", "casadi")

# The module each peer needs; used by the pytest benchmarks' importorskip.
MODULES = {"burnumba": "burnumba", "micrograd": "micrograd", "autograd": "autograd",
           "jax": "jax", "torch": "torch", "casadi": "casadi"}


def _flat(result):
    value, (da, db) = result
    return float(value), float(da), float(db)


def make_burnumba(fn, a, b):
    import burnumba as bn

    vg = bn.value_and_grad(lambda x, y: fn(x, y, bn.relu), argnums=(0, 1))
    # Python floats in, (value, (da, db)) Python floats out; traced once, on the first call.
    return functools.partial(vg, a, b), _flat


def make_micrograd(fn, a, b):
    from micrograd.engine import Value

    relu = Value.relu

    def call():
        # micrograd has no separate "compile": the graph is rebuilt on every evaluation.
        x, y = Value(a), Value(b)
        g = fn(x, y, relu)
        g.backward()
        return g.data, x.grad, y.grad

    return call, lambda r: tuple(float(v) for v in r)


def make_autograd(fn, a, b):
    import autograd
    import autograd.numpy as anp

    def relu(x):
        return anp.maximum(x, 0.0)

    vg = autograd.value_and_grad(lambda x, y: fn(x, y, relu), argnum=(0, 1))
    # autograd re-traces on every call (it has no cache): that is how it is used.
    return functools.partial(vg, a, b), _flat


def make_jax(fn, a, b):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    vg = jax.jit(jax.value_and_grad(lambda x, y: fn(x, y, jax.nn.relu), argnums=(0, 1)))
    # Inputs are float64 device arrays made once, outside the timed call (passing Python
    # floats instead would add a host-to-device conversion per call). The timed call is the
    # jitted dispatch plus block_until_ready(), so the numbers are computed; reading them
    # back as Python floats is left out (see the module docstring).
    x, y = jnp.asarray(a, dtype=jnp.float64), jnp.asarray(b, dtype=jnp.float64)

    def call():
        return jax.block_until_ready(vg(x, y))

    return call, _flat


def make_torch(fn, a, b):
    import torch

    def call():
        # Eager float64, CPU. Fresh leaves every call (so gradients do not accumulate), one
        # forward, one backward, and the .grad of both leaves read.
        x = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        y = torch.tensor(b, dtype=torch.float64, requires_grad=True)
        g = fn(x, y, torch.relu)
        g.backward()
        return g.detach(), x.grad, y.grad

    return call, lambda r: tuple(t.item() for t in r)


def make_casadi(fn, a, b):
    import casadi

    # The graph on SX symbols, its gradient by CasADi's reverse mode, both in one Function
    # run by CasADi's SX virtual machine; Python floats in, Python floats out.
    x, y = casadi.SX.sym("a"), casadi.SX.sym("b")
    g = fn(x, y, lambda v: casadi.fmax(v, 0.0))
    vg = casadi.Function("vg", [x, y], [g, casadi.gradient(g, x), casadi.gradient(g, y)])
    return functools.partial(vg, a, b), lambda r: tuple(float(v) for v in r)


MAKERS = {"burnumba": make_burnumba, "micrograd": make_micrograd, "autograd": make_autograd,
          "jax": make_jax, "torch": make_torch, "casadi": make_casadi}


def make(system, workload):
    """(call, to_floats) for this system and workload; ImportError if the peer is missing."""
    fn, (a, b), _ = WORKLOADS[workload]
    return MAKERS[system](fn, a, b)


def warm_up(call, n=20):
    """A few untimed calls: numba / jax compile on the first, caches fill on the next."""
    for _ in range(n):
        result = call()
    return result


def burnumba_tape(workload):
    """burnumba's tape for this workload (for its node count and bytes)."""
    import burnumba as bn

    fn, (a, b), _ = WORKLOADS[workload]
    return bn.trace(lambda x, y: fn(x, y, bn.relu), a, b, argnums=(0, 1))
