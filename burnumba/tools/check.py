"""bn.check_grads and bn.flatten: autograd's ``test_util.check_grads`` and
``misc.flatten`` (JAX's ``test_util.check_grads`` and ``flatten_util.ravel_pytree``).

check_grads compares each derivative burnumba computes with central differences of the
function along random directions, to the order asked: forward mode (jvp) against
``(f(x + h v) - f(x - h v)) / 2h``, reverse mode (vjp) by the dot-product test
``<u, J v> = <J^T u, v>``, and for order 2 the same checks of the jvp and vjp themselves
(as functions of the point and the direction), and so on.
"""
import functools
import math

import numpy as np

from .. import numpy as bnp
from .._errors import GradientCheckError, InputError, at_user_site
from ..tracing.pytree import flatten as _leaves, unflatten as _rebuild
from ..tracing.tracer import Var
from ..transforms.forward import jvp, vjp


def flatten(tree):
    """``(vector, unflatten)``: every leaf of a pytree (tuples, lists, dicts of arrays and
    numbers) raveled and concatenated into one 1-D float array, and the function that cuts
    such a vector back into the pytree (leaves of their shapes; scalars as 0-d arrays), as
    ``autograd.misc.flatten`` and ``jax.flatten_util.ravel_pytree``. Traced leaves give a
    traced vector, and ``unflatten`` takes traced vectors, so it works inside ``bn.grad``.

    >>> import burnumba as bn, numpy as np
    >>> vec, unflatten = bn.flatten({"w": np.ones((2, 2)), "b": np.zeros(2)})
    >>> vec.shape
    (6,)
    >>> unflatten(np.arange(6.0))["w"]
    array([[2., 3.],
           [4., 5.]])
    """
    leaves, treedef = _leaves(tree)
    shapes = [tuple(np.shape(x)) for x in leaves]
    sizes = [math.prod(s) for s in shapes]
    if leaves:
        vector = bnp.concatenate([bnp.reshape(x if isinstance(x, Var) else
                                              np.asarray(x, dtype=np.float64), (-1,))
                                  for x in leaves])
    else:
        vector = np.zeros(0)

    def unflatten(vec):
        got = tuple(vec.shape if isinstance(vec, Var) else np.shape(vec))
        if got != (sum(sizes),):
            raise InputError(at_user_site(
                f"unflatten: a vector of shape ({sum(sizes)},) is needed, got {got}"))
        out, pos = [], 0
        for shape, size in zip(shapes, sizes):
            out.append(bnp.reshape(vec[pos:pos + size], shape))
            pos += size
        return _rebuild(treedef, out)

    return vector, unflatten



def flatten_func(func, example):
    """``(flat_func, unflatten, flat_example)`` as ``autograd.misc.flatten.flatten_func``:
    ``flat_func(vector, *args)`` is ``func(unflatten(vector), *args)`` with its result
    flattened too, for optimisers that take 1-D vectors (scipy.optimize.minimize).

    >>> import burnumba as bn, numpy as np
    >>> f, unflatten, x0 = bn.flatten_func(lambda p: np.sum(p["w"] ** 2) + p["b"],
    ...                                    {"w": np.ones(2), "b": 1.0})
    >>> f(x0), bn.grad(f)(x0)
    (array([3.]), array([1., 2., 2.]))
    """
    flat_example, unflatten = flatten(example)
    return (lambda vector, *args: flatten(func(unflatten(vector), *args))[0]), unflatten, \
        flat_example

def _flat_function(f, args, argnums):
    """f as a function of one vector (the argnums' leaves) to one vector (the output's
    leaves), and the point that vector is at."""
    x0, unflatten = flatten(tuple(args[k] for k in argnums))

    def g(vec):
        new = list(args)
        for k, a in zip(argnums, unflatten(vec)):
            new[k] = a
        return flatten(f(*new))[0]
    return g, np.asarray(x0, dtype=np.float64)


def _numeric(g, x, v, eps):
    return (np.asarray(g(x + eps * v)) - np.asarray(g(x - eps * v))) / (2 * eps)


def _close(name, got, want, rtol, atol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    err = np.abs(got - want)
    bound = atol + rtol * np.abs(want)
    if not np.all(err <= bound) or not np.all(np.isfinite(got) == np.isfinite(want)):
        k = int(np.argmax(np.where(np.isfinite(err), err - bound, np.inf)))
        raise GradientCheckError(at_user_site(
            f"check_grads: {name} differs from central differences: worst element {k}: "
            f"{float(got.reshape(-1)[k])!r} against {float(want.reshape(-1)[k])!r} "
            f"(|difference| {err.reshape(-1)[k]:.3g}, allowed {bound.reshape(-1)[k]:.3g})"))


def _check(g, x, modes, order, eps, rtol, atol, rng, name):
    y0 = np.asarray(g(x))
    if "fwd" in modes:
        v = rng.normal(size=x.shape)
        _close(f"the jvp of {name}", jvp(g, (x,), (v,))[1], _numeric(g, x, v, eps),
               rtol, atol)
        if order > 1:
            n = x.size

            def g_jvp(xv):
                return jvp(g, (xv[:n],), (xv[n:],))[1]
            _check(g_jvp, np.concatenate([x, v]), modes, order - 1, eps, rtol, atol, rng,
                   f"the jvp of {name}")
    if "rev" in modes:
        v = rng.normal(size=x.shape)
        u = rng.normal(size=y0.shape)
        pulled = vjp(g, x)[1](u)[0]
        _close(f"the vjp of {name} (dot-product test <u, J v> = <J^T u, v>)",
               np.vdot(pulled, v), np.vdot(u, _numeric(g, x, v, eps)), rtol, atol)
        if order > 1:
            n = x.size

            def g_vjp(xu):
                return vjp(g, xu[:n])[1](xu[n:])[0]
            _check(g_vjp, np.concatenate([x, u]), modes, order - 1, eps, rtol, atol, rng,
                   f"the vjp of {name}")


def check_grads(f, args=None, order=2, modes=("fwd", "rev"), argnums=0, eps=1e-6,
                rtol=1e-5, atol=1e-7, seed=0):
    """Check burnumba's derivatives of ``f`` against central differences, as
    ``autograd.test_util.check_grads`` and ``jax.test_util.check_grads``: forward mode
    (``"fwd"``: jvp along a random direction) and reverse mode (``"rev"``: vjp, by the
    dot-product test), up to ``order`` (2: the jvp and vjp are checked the same way, as
    functions of the point and the direction). Raises ``GradientCheckError`` naming the
    derivative and its worst element; returns None when all agree.

    Called as ``check_grads(f, modes=..., order=...)`` (autograd's form) it returns the
    checker, ``(*args) -> None``; given ``args`` (a tuple, JAX's form), it checks at once.
    ``argnums`` names the arguments differentiated; the output may be any pytree.

    >>> import burnumba as bn, numpy as np
    >>> bn.check_grads(lambda x: np.sum(np.tanh(x) ** 2), modes=("fwd", "rev"),
    ...                order=2)(np.array([0.3, -1.2]))
    """
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    if not modes or any(m not in ("fwd", "rev") for m in modes):
        raise InputError(at_user_site(
            f"check_grads: modes must be 'fwd' and / or 'rev', got {modes!r}"))
    if not (isinstance(order, int) and order >= 1):
        raise InputError(at_user_site(f"check_grads: order must be an int >= 1, got {order!r}"))
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def checker(*call_args):
        positions = tuple(k % len(call_args) for k in nums)
        g, x = _flat_function(f, call_args, positions)
        _check(g, x, modes, order, eps, rtol, atol, np.random.default_rng(seed),
               getattr(f, "__name__", "f"))

    if args is None:
        return functools.wraps(f)(checker)
    if not isinstance(args, (tuple, list)):
        raise InputError(at_user_site(
            "check_grads: args must be a tuple of the function's arguments, as in "
            "jax.test_util.check_grads(f, (x,), order=2)"))
    return checker(*args)
