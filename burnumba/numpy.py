"""``import burnumba.numpy as bnp``: numpy's names for the ops burnumba can trace.

Each function accepts traced values, numpy arrays and Python numbers. With no traced value
among its arguments it simply calls numpy. Plain ``np.exp(x)``, ``np.sum(x)`` ... on a traced
``x`` arrive here through ``__array_ufunc__`` and ``__array_function__``.
"""
import builtins
import math

import numpy as np

from ._errors import InplaceError, ShapeError, UnsupportedOpError, at_user_site
from ._tracer import Var, broadcast_to as _expand, normalize_axis, power as _power, tiles
from .kernels import ROWS

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "negative", "positive", "power",
    "square", "exp", "log", "sqrt", "reciprocal", "tanh", "sin", "cos", "abs", "absolute",
    "maximum", "minimum", "greater", "greater_equal", "less", "less_equal", "equal",
    "not_equal", "where", "sum", "mean", "max", "amax", "min", "amin", "var", "std", "inner",
    "dot", "matmul", "stack", "concatenate", "split", "array", "asarray", "reshape", "ravel",
    "transpose", "swapaxes", "broadcast_to", "expand_dims", "squeeze", "take", "relu",
    "sigmoid", "rsqrt", "sumsq", "clip", "sign", "sinh", "cosh", "tan", "arcsin", "arccos",
    "arctan", "arctan2", "hypot", "exp2", "expm1", "log1p", "log2", "log10", "logaddexp",
    "logaddexp2", "fmax", "fmin", "floor", "ceil", "remainder", "mod",
]


def _builder(*xs):
    """The Builder of the first traced value among xs (searching lists), or None."""
    for x in xs:
        if isinstance(x, Var):
            return x._b
        if isinstance(x, (list, tuple)):
            b = _builder(*x)
            if b is not None:
                return b
    return None


def _elementwise(name, npfunc):
    def f(*xs):
        b = _builder(*xs)
        return npfunc(*xs) if b is None else b.map(name, *xs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}``, as numpy.{npfunc.__name__}, on traced values too."
    return f


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


# Every elementwise row with a numpy ufunc of the same name is a function here, and np.<name>
# on a traced value dispatches to it: adding such a row to kernels/ops.py is all it takes.
# power has its own function below (it picks among several rows).
_UFUNCS = {}
for _row in ROWS:
    _twin = getattr(np, _row.name, None) if _row.kind == "map" else None
    if isinstance(_twin, np.ufunc) and _row.name != "power":
        globals()[_row.name] = _UFUNCS[_twin] = _elementwise(_row.name, _twin)
del _row, _twin
divide = true_divide = globals()["divide"]
abs = absolute = globals()["absolute"]
mod = globals()["remainder"]                     # numpy's alias (np.mod is np.remainder)
# Not in numpy, but rows of their own: relu(x) = max(x, 0), sigmoid = scipy.special.expit,
# rsqrt(x) = 1 / sqrt(x).
relu = _elementwise("relu", lambda x: np.maximum(x, 0.0))
# erf (scipy.special.erf) and stop_gradient (jax.lax.stop_gradient: the value, as a constant
# for every transformation)
erf = _elementwise("erf", np.vectorize(math.erf, otypes=[float]))
stop_gradient = _elementwise("stop_gradient", lambda x: x)
sigmoid = _elementwise("sigmoid", _expit)
rsqrt = _elementwise("rsqrt", lambda x: 1.0 / np.sqrt(x))


def positive(x):
    return x if isinstance(x, Var) else np.positive(x)


def power(x, y):
    """x ** y. Constant exponents pick a fast row: 2 -> square, 3 -> cube, integers -> powi."""
    if _builder(x, y) is None:
        return np.power(x, y)
    return _power(x, y)


def clip(a, a_min, a_max):
    """numpy.clip as maximum(minimum(a, a_max), a_min)."""
    if _builder(a) is None:
        return np.clip(a, a_min, a_max)
    out = a
    if a_max is not None:
        out = minimum(out, a_max)
    if a_min is not None:
        out = maximum(out, a_min)
    return out


def where(condition, x, y):
    """Elementwise ``x if condition else y``; the gradient flows into the chosen branch only."""
    b = _builder(condition, x, y)
    if b is None:
        return np.where(condition, x, y)
    c, x, y = (b.lift(v) for v in (condition, x, y))
    try:
        shape = np.broadcast_shapes(c.shape, x.shape, y.shape)
    except ValueError:
        raise ShapeError(at_user_site(
            f"where: operands could not be broadcast together with shapes {c.shape} "
            f"{x.shape} {y.shape}")) from None
    c, x, y = (v if tiles(v.shape, shape) else _expand(v, shape) for v in (c, x, y))
    need = b.need[x.node] or b.need[y.node]
    node = b.add("where", shape, x.node, y.node, params=[c.node], need=need)
    return Var(b, node, shape)


# -- reductions ------------------------------------------------------------------------------

def _items(a):
    """What to reduce over: one array (traced or numpy), or a list of traced / constant
    values, which becomes the operand list of one fused node."""
    if isinstance(a, (Var, np.ndarray)):
        return [a]
    return list(a)


def _axes(name, axis, ndim):
    """The axes to reduce, largest first (so that reducing one does not renumber the rest)."""
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = sorted({normalize_axis(int(a), ndim, name) for a in axes}, reverse=True)
    if len(out) != len(axes):
        raise ShapeError(at_user_site(f"{name}: repeated axis in {axis}"))
    return out


def _kept(x, a_shape, axes, keepdims):
    """Put the reduced axes back with length 1 when keepdims (a free reshape)."""
    if not keepdims:
        return x
    shape = list(a_shape)
    for ax in axes:
        shape[ax] = 1
    return reshape(x, tuple(shape))


def _reduce(name, row, a, axis, keepdims, scale=None, sign=1.0):
    """Reduce ``a`` over ``axis`` (None, an int or a tuple) with an axis row, one axis at a
    time. ``scale(m)`` gives the row's immediate for an axis of length m (1 / m for mean)."""
    b = a._b
    if axis is None:
        if a.size == 0:
            raise ShapeError(at_user_site(f"{name} of an empty array of shape {a.shape}"))
        axes = list(range(a.ndim))[::-1]
        x = reshape(a, (a.size,))
        x = b.axis(row, x, 0, (), imm=scale(a.size) if scale else sign)
        return _kept(x, a.shape, axes, keepdims)
    axes = _axes(name, axis, a.ndim)
    if len(axes) > 1 and row == "max_axis":
        # max / min over several axes at once: move them last and merge them, so that ties
        # anywhere in the group share the gradient evenly (one axis at a time would split
        # it 1/2, then 1/2 again)
        keep = [ax for ax in range(a.ndim) if ax not in axes]
        moved = transpose(a, keep + sorted(axes))
        merged = reshape(moved, tuple(a.shape[ax] for ax in keep) + (-1,))
        x = b.axis(row, merged, len(keep), merged.shape[:-1], imm=sign)
        return _kept(x, a.shape, axes, keepdims)
    x = a
    for ax in axes:
        if x.shape[ax] == 0:
            raise ShapeError(at_user_site(
                f"{name}: axis {ax} of shape {x.shape} is empty; there is nothing to reduce"))
        shape = x.shape[:ax] + x.shape[ax + 1:]
        x = b.axis(row, x, ax, shape, imm=scale(x.shape[ax]) if scale else sign)
    return _kept(x, a.shape, axes, keepdims)


def sum(a, axis=None, keepdims=False):
    """numpy.sum. Over everything, or a list of scalar nodes: one fused n-ary node."""
    b = _builder(a)
    if b is None:
        return np.sum(a, axis=axis, keepdims=keepdims)
    if axis is None and not keepdims:
        xs = [b.lift(x) for x in _items(a)]
        if _count(b, xs) == 0:
            raise ShapeError(at_user_site("sum of an empty array"))
        return b.reduce("sum", xs)
    return _reduce("sum", "sum_axis", b.lift(a), axis, keepdims, scale=lambda m: 1.0)


def _count(b, xs):
    return builtins.sum(b.lift(x).size for x in xs)


def mean(a, axis=None, keepdims=False):
    """numpy.mean (the sum rows with scale 1 / count)."""
    b = _builder(a)
    if b is None:
        return np.mean(a, axis=axis, keepdims=keepdims)
    if axis is None and not keepdims:
        xs = [b.lift(x) for x in _items(a)]
        n = _count(b, xs)
        if n == 0:
            raise ShapeError(at_user_site("mean of an empty array"))
        return b.reduce("sum", xs, scale=1.0 / n)
    return _reduce("mean", "sum_axis", b.lift(a), axis, keepdims, scale=lambda m: 1.0 / m)


def max(a, axis=None, keepdims=False):
    """numpy.max. At a tie the gradient is split evenly among the maxima."""
    if not isinstance(a, Var):
        return np.max(a, axis=axis, keepdims=keepdims)
    return _reduce("max", "max_axis", a, axis, keepdims, sign=1.0)


def min(a, axis=None, keepdims=False):
    """numpy.min, as -max(-a) in one row."""
    if not isinstance(a, Var):
        return np.min(a, axis=axis, keepdims=keepdims)
    return _reduce("min", "max_axis", a, axis, keepdims, sign=-1.0)


amax, amin = max, min


def var(a, axis=None, ddof=0, keepdims=False):
    """numpy.var: mean((a - mean(a))**2), with ``ddof`` as numpy."""
    if not isinstance(a, Var):
        return np.var(a, axis=axis, ddof=ddof, keepdims=keepdims)
    axes = range(a.ndim) if axis is None else _axes("var", axis, a.ndim)
    count = int(np.prod([a.shape[ax] for ax in axes]))
    if count - ddof <= 0:
        raise ShapeError(at_user_site(
            f"var: {count} elements along axis {axis} leave no degrees of freedom with "
            f"ddof={ddof}"))
    d = a - mean(a, axis=axis, keepdims=True)
    s = sum(square(d), axis=axis, keepdims=keepdims)
    return s * (1.0 / (count - ddof))


def std(a, axis=None, ddof=0, keepdims=False):
    if not isinstance(a, Var):
        return np.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
    return sqrt(var(a, axis=axis, ddof=ddof, keepdims=keepdims))


def sumsq(a):
    """Sum of squares of all elements, as one fused node: ``sum(a * a)``."""
    b = _builder(a)
    if b is None:
        return np.sum(np.square(a))
    return b.reduce("sumsq", _items(a))


def inner(a, b, bias=None):
    """Inner product of two 1-D arrays or two equally long lists of scalars, plus ``bias``.

    One fused node (BurTorch's neuron): ``sum_k a[k] * b[k] + bias``.

    >>> bnp.inner([w0, w1], [x0, x1], bias=b0)     # doctest: +SKIP
    """
    bld = _builder(a, b, bias)
    if bld is None:
        out = np.inner(a, b)
        return out if bias is None else out + bias
    xs = [bld.lift(x) for x in _items(a)]
    ws = [bld.lift(w) for w in _items(b)]
    if len(xs) != len(ws) or any(x.shape != w.shape or x.ndim > 1 for x, w in zip(xs, ws)):
        raise ShapeError(at_user_site(
            f"inner: shapes {[x.shape for x in xs]} and {[w.shape for w in ws]} do not match; "
            "inner takes two 1-D arrays of the same length or two lists of scalars"))
    bias_node = -1
    need = any(bld.need[v.node] for v in xs + ws)
    if bias is not None:
        bv = bld.lift(bias)
        if bv.size != 1:
            raise ShapeError(at_user_site(f"inner: bias must be a scalar, got shape {bv.shape}"))
        bias_node = bv.node
        need = need or bld.need[bias_node]
    node = bld.add("inner", (), a0=bias_node,
                   params=[len(xs)] + [x.node for x in xs] + [w.node for w in ws], need=need)
    return Var(bld, node, ())


def dot(a, b):
    """numpy.dot: the fused inner product for two 1-D arrays, else matmul (b up to 2-D)."""
    bld = _builder(a, b)
    if bld is None:
        return np.dot(a, b)
    x, w = bld.lift(a), bld.lift(b)
    if x.ndim == 0 or w.ndim == 0:
        return multiply(x, w)
    if w.ndim > 2:
        raise UnsupportedOpError(at_user_site(
            f"dot with shapes {x.shape} and {w.shape}: numpy.dot of an array of more than 2 "
            "dimensions is a tensor contraction burnumba does not trace; use matmul / @"))
    return matmul(x, w)


def matmul(a, b):
    """numpy.matmul / ``@``, with batching and broadcasting of the leading dimensions.

    One row for the whole product: a batch of BLAS calls (numba's np.dot). A 2-D right
    operand folds the left operand's batch into its rows, so (B, T, C) @ (C, D) is one call.
    """
    bld = _builder(a, b)
    if bld is None:
        return np.matmul(a, b)
    x, w = bld.lift(a), bld.lift(b)
    if x.ndim == 0 or w.ndim == 0:
        raise ShapeError(at_user_site(
            f"matmul: shapes {x.shape} and {w.shape}: operands must have at least 1 "
            "dimension (use * for scalars)"))
    if x.ndim == 1 and w.ndim == 1:
        if x.shape != w.shape:
            raise ShapeError(at_user_site(f"matmul: shapes {x.shape} and {w.shape} do not match"))
        return inner(x, w)
    xs = x.shape if x.ndim > 1 else (1,) + x.shape
    ws = w.shape if w.ndim > 1 else w.shape + (1,)
    M, K = xs[-2:]
    K2, N = ws[-2:]
    if K != K2:
        raise ShapeError(at_user_site(
            f"matmul: shapes {x.shape} and {w.shape} do not align: {K} (dim {x.ndim - 1} of "
            f"the first) != {K2} (dim {builtins.max(0, w.ndim - 2)} of the second)"))
    bx, bw = xs[:-2], ws[:-2]
    xv, wv = reshape(x, xs), reshape(w, ws)
    if not bw:                         # (..., M, K) @ (K, N): fold the batch into the rows
        nb, rows, sa, sb = 1, int(np.prod(bx, dtype=np.int64)) * M, 1, 0
        batch = bx
    elif not bx:                       # (M, K) @ (..., K, N): reuse the left operand
        nb, rows, sa, sb = int(np.prod(bw, dtype=np.int64)), M, 0, 1
        batch = bw
    else:
        try:
            batch = np.broadcast_shapes(bx, bw)
        except ValueError:
            raise ShapeError(at_user_site(
                f"matmul: the batch dimensions of {x.shape} and {w.shape} do not "
                "broadcast")) from None
        xv = _expand(xv, batch + (M, K))
        wv = _expand(wv, batch + (K, N))
        nb, rows, sa, sb = int(np.prod(batch, dtype=np.int64)), M, 1, 1
    out_shape = tuple(batch) + (M, N)
    bld.largest_product = builtins.max(bld.largest_product, rows * K * N)
    need = bld.need[xv.node] or bld.need[wv.node]
    node = bld.add("matmul", out_shape, xv.node, wv.node,
                   params=[nb, rows, K, N, sa, sb], need=need)
    y = Var(bld, node, out_shape)
    if x.ndim == 1:
        y = reshape(y, out_shape[:-2] + (N,))
    if w.ndim == 1:
        y = reshape(y, y.shape[:-1])
    return y


# -- building and reshaping arrays ----------------------------------------------------------

def _positions(x):
    """Absolute arena positions of x's elements, shaped like x."""
    return x.positions()


def _join(name, arrays, axis, npfunc):
    b = _builder(arrays)
    if b is None:
        return npfunc(arrays, axis=axis)
    xs = [b.lift(x) for x in arrays]
    if not xs:
        raise ShapeError(at_user_site(f"{name}: need at least one array"))
    try:
        pos = npfunc([_positions(x) for x in xs], axis=axis)
    except (ValueError, np.exceptions.AxisError) as e:
        raise ShapeError(at_user_site(
            f"{name}: shapes {[x.shape for x in xs]} along axis {axis}: {e}")) from None
    return b.gather(xs, pos.reshape(-1), pos.shape)


def stack(arrays, axis=0):
    """numpy.stack; also packs a list of traced scalars into a traced 1-D array."""
    return _join("stack", list(arrays), axis, np.stack)


def concatenate(arrays, axis=0):
    return _join("concatenate", list(arrays), axis, np.concatenate)


def array(obj, dtype=None):
    """numpy.array for nested lists that contain traced values."""
    if isinstance(obj, Var):
        return obj
    if isinstance(obj, (list, tuple)) and _builder(obj) is not None:
        return stack([array(x) for x in obj])
    return np.array(obj, dtype=dtype)


asarray = array


def _resolve_shape(x, shape):
    try:
        return np.empty(x.shape, dtype=np.bool_).reshape(shape).shape
    except ValueError:
        raise ShapeError(at_user_site(
            f"reshape: cannot reshape an array of shape {x.shape} (size {x.size}) into shape "
            f"{shape}")) from None


def reshape(a, newshape):
    """Row-major reshape. Free: the node's slice is reused with a new shape."""
    if not isinstance(a, Var):
        return np.reshape(a, newshape)
    if isinstance(newshape, int):
        newshape = (newshape,)
    return a.reshaped(_resolve_shape(a, tuple(newshape)))


def ravel(a):
    return a.ravel() if isinstance(a, Var) else np.ravel(a)


def expand_dims(a, axis):
    if not isinstance(a, Var):
        return np.expand_dims(a, axis)
    return reshape(a, np.expand_dims(np.empty(a.shape, dtype=np.bool_), axis).shape)


def squeeze(a, axis=None):
    if not isinstance(a, Var):
        return np.squeeze(a, axis)
    try:
        shape = np.squeeze(np.empty(a.shape, dtype=np.bool_), axis).shape
    except ValueError as e:
        raise ShapeError(at_user_site(f"squeeze: shape {a.shape}, axis {axis}: {e}")) from None
    return reshape(a, shape)


def transpose(a, axes=None):
    if not isinstance(a, Var):
        return np.transpose(a, axes)
    try:
        pos = np.transpose(_positions(a), axes)
    except ValueError as e:
        raise ShapeError(at_user_site(f"transpose: shape {a.shape}, axes {axes}: {e}")) from None
    if np.array_equal(pos.reshape(-1), _positions(a).reshape(-1)):
        return reshape(a, pos.shape)           # the same elements in the same order
    return a._b.gather([a], pos.reshape(-1), pos.shape)


def swapaxes(a, axis1, axis2):
    if not isinstance(a, Var):
        return np.swapaxes(a, axis1, axis2)
    axes = list(range(a.ndim))
    i, j = (normalize_axis(ax, a.ndim, "swapaxes") for ax in (axis1, axis2))
    axes[i], axes[j] = axes[j], axes[i]
    return transpose(a, tuple(axes))


def split(ary, indices_or_sections, axis=0):
    """numpy.split: a list of slices (gather nodes)."""
    if not isinstance(ary, Var):
        return np.split(ary, indices_or_sections, axis=axis)
    axis = normalize_axis(axis, ary.ndim, "split")
    try:
        parts = np.split(np.arange(ary.shape[axis]), indices_or_sections)
    except ValueError as e:
        raise ShapeError(at_user_site(f"split: shape {ary.shape} along axis {axis}: {e}")) \
            from None
    lead = (slice(None),) * axis
    return [ary[lead + (slice(int(p[0]), int(p[-1]) + 1),)] if len(p) else
            ary[lead + (slice(0, 0),)] for p in parts]


def take(a, indices, axis=None):
    """numpy.take; traced integer indices along axis 0 give the ``take`` row."""
    if not isinstance(a, Var) and not isinstance(indices, Var):
        return np.take(a, indices, axis=axis)
    b = _builder(a, indices)
    a = b.lift(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    if normalize_axis(axis, a.ndim, "take") != 0:
        lead = (slice(None),) * normalize_axis(axis, a.ndim, "take")
        if isinstance(indices, Var):
            raise UnsupportedOpError(at_user_site(
                "take: traced indices work along axis 0 only; move the axis first "
                "(bnp.swapaxes)"))
        return a[lead + (np.asarray(indices),)]
    return a[indices]


def broadcast_to(array, shape):
    if not isinstance(array, Var):
        return np.broadcast_to(array, shape)
    return _expand(array, (shape,) if isinstance(shape, int) else tuple(shape))


def _index(x, key):
    """x[key] for constant keys: basic slicing, integers, integer and boolean arrays."""
    if isinstance(key, Var):
        return _take_rows(x, key)
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Var) for k in parts):
        raise UnsupportedOpError(at_user_site(
            "indexing with a traced value inside a tuple: traced integer indices work as "
            "x[idx] (rows of x, an embedding lookup) only. To select by a traced condition "
            "use bnp.where"))
    try:
        pos = _positions(x)[key]
    except IndexError as e:
        raise ShapeError(at_user_site(f"index {key!r} into shape {x.shape}: {e}")) from None
    if pos.shape == x.shape and np.array_equal(pos, _positions(x)):
        return x
    return x._b.gather([x], np.asarray(pos).reshape(-1), np.shape(pos))


def _take_rows(x, idx):
    """x[idx] for traced integer indices (data passed as an argument): the take row."""
    b = x._b
    if b.need[idx.node]:
        raise UnsupportedOpError(at_user_site(
            "indexing with a differentiable traced value: indices must be integer data "
            "(an argument outside argnums), not something gradients flow through"))
    kind = b.input_kinds.get(idx.node)
    if kind == "b":
        raise UnsupportedOpError(at_user_site(
            "indexing with a boolean mask argument: the result's shape would depend on the "
            "mask's values, which a tape cannot follow. Use bnp.where(mask, x, 0.0) or "
            "bn.masked_fill, or capture the mask as a constant array"))
    if kind not in ("i", "u"):
        raise UnsupportedOpError(at_user_site(
            "traced indices must be an integer array argument (numpy refuses float indices "
            "with IndexError, and arithmetic on indices is not traced as integers): pass the "
            "indices as an int array, e.g. idx.astype(np.int64)"))
    if x.ndim == 0:
        raise ShapeError(at_user_site("take: cannot index a 0-d array"))
    width = int(np.prod(x.shape[1:], dtype=np.int64))
    shape = idx.shape + x.shape[1:]
    node = b.add("take", shape, x.node, idx.node, params=[x.shape[0], width],
                 need=b.need[x.node])
    return Var(b, node, shape)


# -- numpy protocol dispatch -----------------------------------------------------------------

_UFUNCS.update({np.positive: positive, np.power: power, np.matmul: matmul})

_FUNCTIONS = {
    np.sum: sum, np.mean: mean, np.max: max, np.amax: max, np.min: min, np.amin: min,
    np.var: var, np.std: std, np.swapaxes: swapaxes, np.split: split, np.take: take,
    np.matmul: matmul, np.inner: inner, np.dot: dot, np.where: where,
    np.stack: stack, np.concatenate: concatenate, np.reshape: reshape, np.ravel: ravel,
    np.transpose: transpose, np.broadcast_to: broadcast_to, np.expand_dims: expand_dims,
    np.squeeze: squeeze, np.clip: clip, np.array: array, np.asarray: asarray,
    np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim, np.size: lambda a: a.size,
}


def _supported(table):
    return ", ".join(sorted(f.__name__ for f in table))


def _apply_ufunc(ufunc, method, inputs, kwargs):
    if "out" in kwargs:
        raise InplaceError(at_user_site(
            f"numpy.{ufunc.__name__}(..., out=...) writes in place, which is not traceable: "
            "use the returned value instead"))
    if method != "__call__":
        hint = " (use bnp.sum)" if ufunc is np.add and method == "reduce" else ""
        raise UnsupportedOpError(at_user_site(
            f"numpy.{ufunc.__name__}.{method} is not supported on traced values{hint}"))
    fn = _UFUNCS.get(ufunc)
    if fn is None:
        raise UnsupportedOpError(at_user_site(
            f"numpy.{ufunc.__name__} is not supported on traced values. Supported ufuncs: "
            f"{_supported(_UFUNCS)}; compose it from those or add a row to kernels/ops.py"))
    if kwargs:
        raise UnsupportedOpError(at_user_site(
            f"numpy.{ufunc.__name__}: keyword arguments {sorted(kwargs)} are not supported "
            "on traced values"))
    return fn(*inputs)


def _apply_function(func, args, kwargs):
    fn = _FUNCTIONS.get(func)
    if fn is None:
        name = getattr(func, "__module__", "numpy") + "." + func.__name__
        raise UnsupportedOpError(at_user_site(
            f"{name} is not supported on traced values. Supported numpy functions: "
            f"{_supported(_FUNCTIONS)}; write it with those (or with burnumba.numpy)"))
    return fn(*args, **kwargs)
