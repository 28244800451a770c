"""Arrays made from lists and from shapes: array / asarray (a list of traced values stacked),
zeros_like, ones_like, empty_like, full_like, linspace, meshgrid.

Functions that only look at a traced value's shape (zeros_like ...) return traced constants
(no gradient flows into them; in-place writes can fill them), numpy arrays for integer and
boolean dtypes.
"""
import builtins
import math

import numpy as np

from .._errors import ShapeError, at_user_site
from ..tracing.dispatch import implements
from ..tracing.tracer import Var, broadcast_to as _expand, cast_check
from ._common import _builder, _float_only
from .elementwise import power
from .shapes import broadcast_to, concatenate, moveaxis, reshape, stack

# numpy's functions this module calls on every node, bound once: while any thread traces,
# numpy's module hands out its attributes that have stand-ins through a descriptor
# (transforms/module_views.py), a cost on every read of np.<name>
_array = np.array


@implements(np.array)
def array(obj, dtype=None, *, copy=True, **kwargs):
    """numpy.array for nested lists that contain traced values (one gather). A traced value
    itself is copied (a new array object: later in-place writes to either stay apart). Plain
    numpy reaches it as ``np.array(list, like=x)`` with x a traced value; without ``like=``
    numpy makes an object array of traced values, which the next traced op stacks."""
    b = _builder(obj)
    if b is None:
        return _array(obj, dtype=dtype, copy=copy, **kwargs)
    if dtype is not None:
        cast_check(f"array(..., dtype={np.dtype(dtype)})", dtype, b.dtype)
    if isinstance(obj, Var):
        return obj.copy() if copy else obj
    if isinstance(obj, (list, tuple)) and obj and builtins.all(
            type(x) is Var and x._b is b for x in obj):
        # traced scalars (BurTorch's packing of scalar nodes into a tensor): one gather of
        # their positions, nothing else computed
        pos = _array([x._b.off[x._node] if x._view is None else int(x._view[0])
                        for x in obj])
        return b.gather(list(obj), pos, pos.shape)
    return stack([asarray(x) for x in obj])


@implements(np.asarray)
def asarray(a, dtype=None, **kwargs):
    """numpy.asarray: a traced value itself (the same object, as numpy's asarray of an
    array); a (nested) list holding traced values stacked into one traced array."""
    if isinstance(a, Var):
        if dtype is not None:
            cast_check(f"asarray(..., dtype={np.dtype(dtype)})", dtype, a._b.dtype)
        return a
    if _builder(a) is None:
        return np.asarray(a, dtype=dtype, **kwargs)
    return array(a, dtype=dtype, **kwargs)


def _like(name, npfunc, fill):
    def f(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        if not isinstance(a, Var):
            return npfunc(a, dtype, order, subok, shape, **kwargs)
        shape = a.shape if shape is None else shape
        if dtype is not None and np.dtype(dtype).kind != "f":
            return np.full(shape, fill, dtype=dtype)
        # a traced constant (no gradient flows into it), so that in-place writes can fill it
        if dtype is not None:
            cast_check(f"{name}(..., dtype={np.dtype(dtype)})", dtype, a._b.dtype)
        return a._b.const(np.full(shape, fill, dtype=np.float64))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"numpy.{name}: of a traced value, a traced constant of its shape (no "
                 "gradient flows through it; in-place writes fill it); with an integer or "
                 "boolean dtype, a numpy array")
    return f


zeros_like = implements(np.zeros_like)(_like("zeros_like", np.zeros_like, 0.0))
ones_like = implements(np.ones_like)(_like("ones_like", np.ones_like, 1.0))
# zeros: a tape's values are defined
empty_like = implements(np.empty_like)(_like("empty_like", np.empty_like, 0.0))


@implements(np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """numpy.full_like: a constant when fill_value is; a traced fill_value is broadcast (its
    gradient is the sum over the copies)."""
    if _builder(a, fill_value) is None:
        return np.full_like(a, fill_value, dtype, order, subok, shape, **kwargs)
    if shape is None:
        shape = a.shape if isinstance(a, Var) else np.shape(a)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not isinstance(fill_value, Var):
        return np.full(shape, fill_value, dtype=a.dtype if dtype is None else dtype)
    if dtype is not None:
        _float_only("full_like", dtype, fill_value._b)
    return _expand(fill_value, shape)


@implements(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """numpy.meshgrid of traced vectors: reshapes and broadcast_to (gathers)."""
    b = _builder(xi)
    if b is None:
        return np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)
    if indexing not in ("xy", "ij"):
        raise ShapeError(at_user_site("meshgrid: valid values for `indexing` are 'xy' and 'ij'"))
    ndim = len(xi)
    s0 = (1,) * ndim
    out = [reshape(b.lift(x), s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        out[0] = reshape(out[0], (1, -1) + s0[2:])
        out[1] = reshape(out[1], (-1, 1) + s0[2:])
    if not sparse:
        shape = np.broadcast_shapes(*(x.shape for x in out))
        out = [broadcast_to(x, shape) for x in out]
    return tuple(out)


@implements(np.linspace)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kwargs):
    """numpy.linspace with traced endpoints: start + arange(num) * step (numpy's formula),
    the last sample exactly ``stop`` when endpoint."""
    b = _builder(start, stop)
    if b is None:
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis, **kwargs)
    if dtype is not None:
        _float_only("linspace", dtype, b)
    num = int(num)
    if num < 0:
        raise ShapeError(at_user_site(f"linspace: number of samples, {num}, must be "
                                      "non-negative"))
    start, stop = b.lift(start), b.lift(stop)
    div = (num - 1) if endpoint else num
    shape = np.broadcast_shapes(start.shape, stop.shape)
    start, stop = broadcast_to(start, shape), broadcast_to(stop, shape)
    delta = stop - start
    steps = np.arange(0, num, dtype=np.float64).reshape((-1,) + (1,) * len(shape))
    step = delta / div if div > 0 else b.const(math.nan)
    y = (steps * step if div > 0 else steps * delta) + start
    if endpoint and num > 1:
        y = concatenate([y[:-1], reshape(stop, (1,) + shape)], axis=0)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    return (y, step) if retstep else y



@implements(np.logspace)
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """numpy.logspace with traced endpoints (or base): base ** linspace(start, stop), numpy's
    formula (an array base gets the samples' axis)."""
    b = _builder(start, stop, base)
    if b is None:
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    if dtype is not None:
        _float_only("logspace", dtype, b)
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    if np.ndim(base):
        base = b.lift(base)
        base = reshape(base, base.shape[:axis % y.ndim] + (1,) + base.shape[axis % y.ndim:])
    return power(base, y)
