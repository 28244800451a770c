"""``import burnumba.numpy as bnp``: numpy's names for the ops burnumba can trace.

Each function accepts traced values, numpy arrays and Python numbers. With no traced value
among its arguments it simply calls numpy. Plain ``np.exp(x)``, ``np.sum(x)`` ... on a traced
``x`` arrive here through ``__array_ufunc__`` and ``__array_function__``.
"""
import builtins
import math

import numpy as np

from .._errors import (InplaceError, ShapeError, TracerBoolError, UnsupportedOpError,
                      at_user_site)
from ..trace.dispatch import implements, implements_method, implements_ufunc
from ..trace.tracer import (Var, broadcast_to as _expand, cast_check, is_mask, normalize_axis,
                      power as _power, tiles)
from ..kernels import ROWS

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
    "flip", "roll", "repeat", "tile", "moveaxis", "rollaxis", "atleast_1d", "atleast_2d",
    "atleast_3d", "vstack", "hstack", "column_stack", "tril", "triu", "diag", "diagonal",
    "trace", "diff", "outer", "kron", "cross", "pad", "take_along_axis",
    "prod", "cumsum", "cumprod", "sort", "argsort", "argmax", "argmin", "einsum", "tensordot",
    "select",
    "arcsinh", "arccosh", "arctanh", "cbrt", "copysign", "fmod", "heaviside", "rint", "trunc",
    "floor_divide", "isnan", "isinf", "isfinite", "signbit", "logical_not", "logical_and",
    "logical_or", "logical_xor", "acos", "asin", "atan", "atan2", "acosh", "asinh", "atanh",
    "pow", "float_power", "fabs", "conj", "conjugate", "deg2rad", "radians", "rad2deg",
    "degrees", "ldexp", "frexp", "modf", "divmod", "round", "around", "fix", "real", "imag",
    "zeros_like", "ones_like", "empty_like", "full_like", "average", "ptp", "nansum",
    "nanmean", "nanmax", "nanmin", "nanprod", "isclose", "allclose", "count_nonzero",
    "median", "quantile", "percentile", "cov", "corrcoef", "correlate", "convolve",
    "meshgrid", "linspace",
    "vecdot", "matvec", "vecmat", "nanvar", "nanstd", "nanmedian", "nanquantile",
    "nanpercentile",
]

_NOVALUE = object()        # an argument not given (numpy's own default then applies)


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


def _lift(x):
    """x as a Var: a traced value itself, or a (nested) list holding traced values stacked."""
    return x if isinstance(x, Var) else _builder(x).lift(x)


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
for _row in ROWS:
    _twin = getattr(np, _row.name, None) if _row.kind == "map" else None
    if isinstance(_twin, np.ufunc) and _row.name != "power":
        globals()[_row.name] = implements_ufunc(_twin)(_elementwise(_row.name, _twin))
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


@implements_ufunc(np.positive)
def positive(x):
    return x if isinstance(x, Var) else np.positive(x)


@implements_ufunc(np.power, np.float_power)
def power(x, y):
    """x ** y. Constant exponents pick a fast row: 2 -> square, 3 -> cube, integers -> powi."""
    if _builder(x, y) is None:
        return np.power(x, y)
    return _power(x, y)


@implements(np.clip)
def clip(a, a_min=_NOVALUE, a_max=_NOVALUE, out=None, *, min=_NOVALUE, max=_NOVALUE):
    """numpy.clip as maximum(minimum(a, a_max), a_min) (``min`` / ``max`` are numpy 2's names
    of the bounds)."""
    lo = a_min if min is _NOVALUE else min
    hi = a_max if max is _NOVALUE else max
    lo = None if lo is _NOVALUE else lo
    hi = None if hi is _NOVALUE else hi
    if _builder(a, lo, hi) is None:
        return np.clip(a, lo, hi, out=out)
    _no_out("clip", out)
    out = _lift(a)                       # no bounds: the value itself, as numpy 2's copy
    if hi is not None:
        out = minimum(out, hi)
    if lo is not None:
        out = maximum(out, lo)
    return out


@implements(np.where)
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


def _given(**kwargs):
    """The keyword arguments that were passed, for handing on to numpy unchanged."""
    return {k: v for k, v in kwargs.items() if v is not _NOVALUE}


def _no_out(name, out):
    if out is not None:
        raise InplaceError(at_user_site(
            f"numpy.{name}(..., out=...) writes in place, which is not traceable: use the "
            "returned value instead"))


def _options(name, b, dtype, out):
    """Check numpy's ``out`` and ``dtype`` arguments of a reduction."""
    _no_out(name, out)
    if dtype is not None:
        cast_check(f"{name}(..., dtype={np.dtype(dtype)})", dtype, b.dtype)


def _reduction(name, a, dtype, out):
    """The traced operand of a reduction (a list of traced values is stacked), after checking
    numpy's ``out`` and ``dtype`` arguments."""
    b = _builder(a)
    _options(name, b, dtype, out)
    return b.lift(a)


def _mask(name, a, where):
    """numpy's ``where=`` of a reduction, broadcast to a's shape (True: no mask)."""
    if where is True:
        return None
    if isinstance(where, Var):
        raise UnsupportedOpError(at_user_site(
            f"{name}(..., where=mask) with a traced mask: use bnp.where(mask, a, 0.0) "
            "before the reduction, or pass the mask as a constant (numpy) array"))
    try:
        return np.broadcast_to(np.asarray(where, dtype=bool), a.shape)
    except ValueError:
        raise ShapeError(at_user_site(
            f"{name}: where= of shape {np.shape(where)} does not broadcast to the operand's "
            f"shape {a.shape}")) from None


@implements(np.sum)
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """numpy.sum. Over everything, or a list of scalar nodes: one fused n-ary node."""
    b = _builder(a)
    if b is None:
        return np.sum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                      **_given(initial=initial), where=where)
    if where is not True or initial is not _NOVALUE:
        x = _reduction("sum", a, dtype, out)
        mask = _mask("sum", x, where)
        if mask is not None:
            x = globals()["where"](mask, x, 0.0)
        y = sum(x, axis=axis, keepdims=keepdims)
        return y if initial is _NOVALUE else y + initial
    _options("sum", b, dtype, out)
    if axis is None and not keepdims:
        xs = [b.lift(x) for x in _items(a)]
        if _count(b, xs) == 0:
            raise ShapeError(at_user_site("sum of an empty array"))
        return b.reduce("sum", xs)
    return _reduce("sum", "sum_axis", b.lift(a), axis, keepdims, scale=lambda m: 1.0)


def _count(b, xs):
    return builtins.sum(b.lift(x).size for x in xs)


@implements(np.mean)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """numpy.mean (the sum rows with scale 1 / count); ``where=`` takes a constant mask."""
    b = _builder(a)
    if b is None:
        return np.mean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    if where is not True:
        x = _reduction("mean", a, dtype, out)
        mask = _mask("mean", x, where)
        count = np.sum(mask, axis=axis, keepdims=keepdims)
        total = sum(globals()["where"](mask, x, 0.0), axis=axis, keepdims=keepdims)
        # numpy gives NaN (0 / 0) for a lane with no element selected
        return total * np.where(count > 0, 1.0 / np.maximum(count, 1), np.nan)
    _options("mean", b, dtype, out)
    if axis is None and not keepdims:
        xs = [b.lift(x) for x in _items(a)]
        n = _count(b, xs)
        if n == 0:
            raise ShapeError(at_user_site("mean of an empty array"))
        return b.reduce("sum", xs, scale=1.0 / n)
    return _reduce("mean", "sum_axis", b.lift(a), axis, keepdims, scale=lambda m: 1.0 / m)


def _extreme(name, sign, a, axis, out, keepdims, initial, where):
    x = _reduction(name, a, None, out)
    mask = _mask(name, x, where)
    if mask is not None:
        if initial is _NOVALUE:
            raise ShapeError(at_user_site(
                f"{name}(..., where=mask) needs initial= (numpy: a reduction with no identity "
                "needs an initial value for the lanes the mask leaves empty)"))
        x = globals()["where"](mask, x, float(initial))
    y = _reduce(name, "max_axis", x, axis, keepdims, sign=sign)
    if initial is not _NOVALUE:
        y = (maximum if sign > 0 else minimum)(y, initial)
    return y


@implements(np.max, np.amax)
def max(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """numpy.max. At a tie the gradient is split evenly among the maxima."""
    if _builder(a) is None:
        return np.max(a, axis=axis, out=out, keepdims=keepdims,
                      **_given(initial=initial), where=where)
    return _extreme("max", 1.0, a, axis, out, keepdims, initial, where)


@implements(np.min, np.amin)
def min(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """numpy.min, as -max(-a) in one row."""
    if _builder(a) is None:
        return np.min(a, axis=axis, out=out, keepdims=keepdims,
                      **_given(initial=initial), where=where)
    return _extreme("min", -1.0, a, axis, out, keepdims, initial, where)


amax, amin = max, min


def _ddof(name, ddof, correction):
    if correction is _NOVALUE:
        return ddof
    if ddof != 0:
        raise ShapeError(at_user_site(f"{name}: ddof and correction can't be provided "
                                      "together"))
    return correction


@implements(np.var)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=_NOVALUE, correction=_NOVALUE):
    """numpy.var: mean((a - mean(a))**2), with ``ddof`` (or ``correction``) as numpy."""
    if _builder(a, None if mean is _NOVALUE else mean) is None:
        return np.var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                      where=where, **_given(mean=mean, correction=correction))
    a = _reduction("var", a, dtype, out)
    if _mask("var", a, where) is not None:
        raise UnsupportedOpError(at_user_site(
            "var(..., where=mask) is not traced: select with bnp.where and divide by the "
            "count yourself"))
    ddof = _ddof("var", ddof, correction)
    axes = range(a.ndim) if axis is None else _axes("var", axis, a.ndim)
    count = int(np.prod([a.shape[ax] for ax in axes]))
    if count - ddof <= 0:
        raise ShapeError(at_user_site(
            f"var: {count} elements along axis {axis} leave no degrees of freedom with "
            f"ddof={ddof}"))
    center = globals()["mean"](a, axis=axis, keepdims=True) if mean is _NOVALUE else mean
    d = a - center
    s = sum(square(d), axis=axis, keepdims=keepdims)
    return s * (1.0 / (count - ddof))


@implements(np.std)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=_NOVALUE, correction=_NOVALUE):
    """numpy.std: sqrt(var)."""
    if _builder(a, None if mean is _NOVALUE else mean) is None:
        return np.std(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                      where=where, **_given(mean=mean, correction=correction))
    return sqrt(var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                    where=where, mean=mean, correction=correction))


def sumsq(a):
    """Sum of squares of all elements, as one fused node: ``sum(a * a)``."""
    b = _builder(a)
    if b is None:
        return np.sum(np.square(a))
    return b.reduce("sumsq", _items(a))


@implements(np.inner)
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


@implements(np.dot)
def dot(a, b, out=None):
    """numpy.dot: the fused inner product for two 1-D arrays, else matmul (b up to 2-D)."""
    bld = _builder(a, b)
    if bld is None:
        return np.dot(a, b, out)
    _no_out("dot", out)
    x, w = bld.lift(a), bld.lift(b)
    if x.ndim == 0 or w.ndim == 0:
        return multiply(x, w)
    if w.ndim > 2:
        raise UnsupportedOpError(at_user_site(
            f"dot with shapes {x.shape} and {w.shape}: numpy.dot of an array of more than 2 "
            "dimensions is a tensor contraction burnumba does not trace; use matmul / @"))
    return matmul(x, w)


@implements_ufunc(np.matmul)
@implements(np.matmul)
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


def _join(name, arrays, npfunc, **kwargs):
    """npfunc (stack, concatenate, vstack ...) applied to the arrays' positions: one gather."""
    b = _builder(arrays)
    if b is None:
        return npfunc(arrays, **kwargs)
    xs = [b.lift(x) for x in arrays]
    if not xs:
        raise ShapeError(at_user_site(f"{name}: need at least one array"))
    try:
        pos = npfunc([_positions(x) for x in xs], **kwargs)
    except (ValueError, np.exceptions.AxisError) as e:
        where = f" along axis {kwargs['axis']}" if "axis" in kwargs else ""
        raise ShapeError(at_user_site(
            f"{name}: shapes {[x.shape for x in xs]}{where}: {e}")) from None
    return b.gather(xs, pos.reshape(-1), pos.shape)


@implements(np.stack)
def stack(arrays, axis=0):
    """numpy.stack; also packs a list of traced scalars into a traced 1-D array."""
    return _join("stack", list(arrays), np.stack, axis=axis)


@implements(np.concatenate)
def concatenate(arrays, axis=0):
    return _join("concatenate", list(arrays), np.concatenate, axis=axis)


def _stack_dtype(name, tup, npfunc, dtype, casting):
    if _builder(tup) is None:
        return npfunc(tup, dtype=dtype, casting=casting)
    if dtype is not None:
        raise UnsupportedOpError(at_user_site(
            f"{name}(..., dtype={dtype!r}) on traced values: a tape computes in one float "
            f"dtype; drop dtype= (the traced inputs' dtype is used)"))
    return _join(name, list(tup), npfunc)


@implements(np.vstack)
def vstack(tup, *, dtype=None, casting="same_kind"):
    """numpy.vstack: 1-D arrays become rows, then concatenate along axis 0 (one gather)."""
    return _stack_dtype("vstack", tup, np.vstack, dtype, casting)


@implements(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    return _stack_dtype("hstack", tup, np.hstack, dtype, casting)


@implements(np.column_stack)
def column_stack(tup):
    """numpy.column_stack: 1-D arrays become columns of a 2-D array."""
    return _join("column_stack", list(tup), np.column_stack)


@implements(np.array, np.asarray)
def array(obj, dtype=None, **kwargs):
    """numpy.array for nested lists that contain traced values (one gather). Plain numpy
    reaches it only as ``np.array(list, like=x)`` with x a traced value: without ``like=``
    numpy converts the list itself (see Var.__array__)."""
    b = _builder(obj)
    if b is None:
        return np.array(obj, dtype=dtype, **kwargs)
    if dtype is not None:
        cast_check(f"array(..., dtype={np.dtype(dtype)})", dtype, b.dtype)
    if isinstance(obj, Var):
        return obj
    if isinstance(obj, (list, tuple)) and obj and builtins.all(
            type(x) is Var and x._b is b for x in obj):
        # traced scalars (BurTorch's packing of scalar nodes into a tensor): one gather of
        # their positions, nothing else computed
        pos = np.array([x._b.off[x._node] if x._view is None else int(x._view[0])
                        for x in obj])
        return b.gather(list(obj), pos, pos.shape)
    return stack([array(x) for x in obj])


asarray = array


def _resolve_shape(x, shape):
    try:
        return np.empty(x.shape, dtype=np.bool_).reshape(shape).shape
    except ValueError:
        raise ShapeError(at_user_site(
            f"reshape: cannot reshape an array of shape {x.shape} (size {x.size}) into shape "
            f"{shape}")) from None


def _order(name, order):
    if order not in ("C", "F"):
        raise UnsupportedOpError(at_user_site(
            f"{name}(..., order={order!r}): a traced array has no memory layout of its own; "
            "use order='C' (row-major, the default) or order='F' (column-major)"))
    return order


@implements(np.reshape)
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Row-major reshape. Free: the node's slice is reused with a new shape. ``order='F'``
    reads and writes column-major (a transpose on each side)."""
    if shape is None:
        shape = newshape
    if _builder(a) is None:
        return np.reshape(a, shape, order=order)
    a = _lift(a)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(shape)
    if _order("reshape", order) == "F":
        out = a if a.ndim < 2 else transpose(a)
        out = out.reshaped(_resolve_shape(a, shape[::-1]))
        return out if out.ndim < 2 else transpose(out)
    return a.reshaped(_resolve_shape(a, shape))


@implements(np.ravel)
def ravel(a, order="C"):
    """numpy.ravel (free in row-major order; ``order='F'`` is a transpose first)."""
    if _builder(a) is None:
        return np.ravel(a, order)
    a = _lift(a)
    if _order("ravel", order) == "F" and a.ndim > 1:
        a = transpose(a)
    return a.reshaped((a.size,))


@implements(np.expand_dims)
def expand_dims(a, axis):
    if _builder(a) is None:
        return np.expand_dims(a, axis)
    a = _lift(a)
    return reshape(a, np.expand_dims(np.empty(a.shape, dtype=np.bool_), axis).shape)


@implements(np.squeeze)
def squeeze(a, axis=None):
    if _builder(a) is None:
        return np.squeeze(a, axis)
    a = _lift(a)
    try:
        shape = np.squeeze(np.empty(a.shape, dtype=np.bool_), axis).shape
    except ValueError as e:
        raise ShapeError(at_user_site(f"squeeze: shape {a.shape}, axis {axis}: {e}")) from None
    return reshape(a, shape)


@implements(np.transpose)
def transpose(a, axes=None):
    if _builder(a) is None:
        return np.transpose(a, axes)
    a = _lift(a)
    try:
        pos = np.transpose(_positions(a), axes)
    except ValueError as e:
        raise ShapeError(at_user_site(f"transpose: shape {a.shape}, axes {axes}: {e}")) from None
    if np.array_equal(pos.reshape(-1), _positions(a).reshape(-1)):
        return reshape(a, pos.shape)           # the same elements in the same order
    return a._b.gather([a], pos.reshape(-1), pos.shape)


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    if _builder(a) is None:
        return np.swapaxes(a, axis1, axis2)
    a = _lift(a)
    axes = list(range(a.ndim))
    i, j = (normalize_axis(ax, a.ndim, "swapaxes") for ax in (axis1, axis2))
    axes[i], axes[j] = axes[j], axes[i]
    return transpose(a, tuple(axes))


@implements(np.split)
def split(ary, indices_or_sections, axis=0):
    """numpy.split: a list of slices (gather nodes)."""
    if _builder(ary) is None:
        return np.split(ary, indices_or_sections, axis=axis)
    ary = _lift(ary)
    axis = normalize_axis(axis, ary.ndim, "split")
    try:
        parts = np.split(np.arange(ary.shape[axis]), indices_or_sections)
    except ValueError as e:
        raise ShapeError(at_user_site(f"split: shape {ary.shape} along axis {axis}: {e}")) \
            from None
    lead = (slice(None),) * axis
    return [ary[lead + (slice(int(p[0]), int(p[-1]) + 1),)] if len(p) else
            ary[lead + (slice(0, 0),)] for p in parts]


@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    """numpy.take. Traced integer indices (an int array argument) are read when the tape
    runs, along any axis: ``a[(slice(None),) * axis + (indices,)]``."""
    if _builder(a, indices) is None:
        return np.take(a, indices, axis=axis, out=out, mode=mode)
    if out is not None:
        raise InplaceError(at_user_site(
            "numpy.take(..., out=...) writes in place, which is not traceable: use the "
            "returned value instead"))
    b = _builder(a, indices)
    a = b.lift(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = normalize_axis(axis, a.ndim, "take")
    if mode != "raise":
        if isinstance(indices, Var):
            raise UnsupportedOpError(at_user_site(
                f"take(..., mode={mode!r}) with traced indices: only mode='raise' (numpy's "
                "default: negative indices count from the end, others raise) is traced"))
        indices = np.take(np.arange(a.shape[axis]), indices, mode=mode)
    return a[(slice(None),) * axis + (indices if isinstance(indices, Var) else
                                       np.asarray(indices),)]


# -- data movement: numpy's function applied to the positions -------------------------------
#
# A function that only moves, repeats or drops elements (flip, roll, tile, diagonal ...) is
# numpy's own function applied to the positions array at trace time: one gather row, whose
# adjoint scatter-adds (repeated elements collect every copy's gradient). Functions that also
# write zeros or constants (tril, diag of a vector, pad) point those elements at scalar
# constant nodes.

def _moved(name, a, f):
    """The gather of ``f(positions of a)``; ``a`` itself when f leaves it in place."""
    a = _lift(a)
    here = _positions(a)
    try:
        pos = np.asarray(f(here))
    except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
        raise ShapeError(at_user_site(f"{name}: shape {a.shape}: {e}")) from None
    if pos.size == a.size and np.array_equal(pos.reshape(-1), here.reshape(-1)):
        return a if pos.shape == a.shape else reshape(a, pos.shape)
    return a._b.gather([a], pos.reshape(-1), pos.shape)


def _filled(name, a, f, fill=0.0):
    """The gather of ``f(positions of a + 1)``, whose 0s read the constant ``fill``: positions
    are >= 0, so a 0 left by numpy's zero fill (tril, diag) marks an element to write."""
    a = _lift(a)
    b = a._b
    z = b.const(fill)
    try:
        pos = np.asarray(f(_positions(a) + 1))
    except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
        raise ShapeError(at_user_site(f"{name}: shape {a.shape}: {e}")) from None
    pos = np.where(pos == 0, int(z.positions()), pos - 1)
    return b.gather([a, z], pos.reshape(-1), pos.shape)


def _no_traced(name, **args):
    for arg, v in args.items():
        if _builder(v) is not None:
            raise UnsupportedOpError(at_user_site(
                f"{name}: a traced `{arg}` is not supported (it would decide the result's "
                f"shape or layout at run time); pass `{arg}` as a constant (a Python number "
                "or numpy array, e.g. through static_argnums)"))


@implements(np.flip)
def flip(m, axis=None):
    """numpy.flip: one gather of the reversed positions."""
    if _builder(m) is None:
        return np.flip(m, axis)
    m = _lift(m)
    return _moved("flip", m, lambda p: np.flip(p, axis))


@implements(np.roll)
def roll(a, shift, axis=None):
    if _builder(a) is None:
        return np.roll(a, shift, axis)
    a = _lift(a)
    _no_traced("roll", shift=shift)
    return _moved("roll", a, lambda p: np.roll(p, shift, axis))


@implements(np.repeat)
def repeat(a, repeats, axis=None):
    """numpy.repeat; the gradient of each element sums over its copies."""
    if _builder(a, repeats) is None:
        return np.repeat(a, repeats, axis)
    _no_traced("repeat", repeats=repeats)
    return _moved("repeat", a, lambda p: np.repeat(p, repeats, axis))


@implements(np.tile)
def tile(A, reps):
    if _builder(A, reps) is None:
        return np.tile(A, reps)
    _no_traced("tile", reps=reps)
    return _moved("tile", A, lambda p: np.tile(p, reps))


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    if _builder(a) is None:
        return np.moveaxis(a, source, destination)
    a = _lift(a)
    return _moved("moveaxis", a, lambda p: np.moveaxis(p, source, destination))


@implements(np.rollaxis)
def rollaxis(a, axis, start=0):
    if _builder(a) is None:
        return np.rollaxis(a, axis, start)
    a = _lift(a)
    return _moved("rollaxis", a, lambda p: np.rollaxis(p, axis, start))


def _atleast(name, npfunc, arys):
    out = [npfunc(x) if _builder(x) is None else _moved(name, x, npfunc) for x in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.atleast_1d)
def atleast_1d(*arys):
    return _atleast("atleast_1d", np.atleast_1d, arys)


@implements(np.atleast_2d)
def atleast_2d(*arys):
    return _atleast("atleast_2d", np.atleast_2d, arys)


@implements(np.atleast_3d)
def atleast_3d(*arys):
    return _atleast("atleast_3d", np.atleast_3d, arys)


@implements(np.tril)
def tril(m, k=0):
    """numpy.tril: the elements above the k-th diagonal read the constant 0 (so inf and NaN
    there give 0, as numpy's, and no gradient)."""
    if _builder(m) is None:
        return np.tril(m, k)
    m = _lift(m)
    return _filled("tril", m, lambda p: np.tril(p, k))


@implements(np.triu)
def triu(m, k=0):
    if _builder(m) is None:
        return np.triu(m, k)
    m = _lift(m)
    return _filled("triu", m, lambda p: np.triu(p, k))


@implements(np.diag)
def diag(v, k=0):
    """numpy.diag: a 1-D array becomes the k-th diagonal of a square matrix (zeros
    elsewhere); a 2-D array gives its k-th diagonal."""
    if _builder(v) is None:
        return np.diag(v, k)
    v = _lift(v)
    if v.ndim == 1:
        return _filled("diag", v, lambda p: np.diag(p, k))
    return _moved("diag", v, lambda p: np.diag(p, k))


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal (a gather; the diagonal's axis comes last, as numpy's)."""
    if _builder(a) is None:
        return np.diagonal(a, offset, axis1, axis2)
    a = _lift(a)
    return _moved("diagonal", a, lambda p: np.diagonal(p, offset, axis1, axis2))


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy.trace: the sum of the diagonal's gather."""
    if _builder(a) is None:
        return np.trace(a, offset, axis1, axis2, dtype, out)
    a = _lift(a)
    _options("trace", a._b, dtype, out)
    d = diagonal(a, offset, axis1, axis2)
    if d.shape[-1] == 0:                       # an empty diagonal sums to 0, as numpy's
        return broadcast_to(a._b.const(0.0), d.shape[:-1])
    return sum(d, axis=-1)


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=_NOVALUE, append=_NOVALUE):
    """numpy.diff: n times ``a[1:] - a[:-1]`` along ``axis`` (two gathers and a subtract)."""
    if _builder(a, None if prepend is _NOVALUE else prepend,
                None if append is _NOVALUE else append) is None:
        kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not _NOVALUE}
        return np.diff(a, n, axis, **kw)
    if n < 0:
        raise ShapeError(at_user_site(f"diff: order must be non-negative but got {n}"))
    b = _builder(a, prepend, append)
    a = b.lift(a)
    if a.ndim == 0:
        raise ShapeError(at_user_site("diff requires input that is at least one dimensional"))
    axis = normalize_axis(axis, a.ndim, "diff")
    parts = []
    for extra in (prepend, a, append):
        if extra is a:
            parts.append(a)
        elif extra is not _NOVALUE:
            e = b.lift(extra)
            if e.ndim == 0:
                e = broadcast_to(e, a.shape[:axis] + (1,) + a.shape[axis + 1:])
            parts.append(e)
    if len(parts) > 1:
        a = concatenate(parts, axis=axis)
    lead = (slice(None),) * axis
    for _ in range(n):
        a = a[lead + (slice(1, None),)] - a[lead + (slice(None, -1),)]
    return a


@implements(np.outer)
def outer(a, b, out=None):
    """numpy.outer: ravel(a)[:, None] * ravel(b)[None, :] (one broadcasting multiply)."""
    bld = _builder(a, b)
    if bld is None:
        return np.outer(a, b, out)
    if out is not None:
        raise InplaceError(at_user_site(
            "numpy.outer(..., out=...) writes in place, which is not traceable: use the "
            "returned value instead"))
    x, w = ravel(bld.lift(a)), ravel(bld.lift(b))
    return multiply(reshape(x, (x.size, 1)), reshape(w, (1, w.size)))


@implements(np.kron)
def kron(a, b):
    """numpy.kron: a reshaped to (a0, 1, a1, 1, ...) times b reshaped to (1, b0, 1, b1, ...),
    merged pairwise: out[i0*b0 + j0, ...] = a[i0, ...] * b[j0, ...]."""
    bld = _builder(a, b)
    if bld is None:
        return np.kron(a, b)
    x, w = bld.lift(a), bld.lift(b)
    nd = builtins.max(x.ndim, w.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ws = (1,) * (nd - w.ndim) + w.shape
    y = multiply(reshape(x, tuple(d for s in xs for d in (s, 1))),
                 reshape(w, tuple(d for s in ws for d in (1, s))))
    return reshape(y, tuple(p * q for p, q in zip(xs, ws)))


@implements(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy.cross of 3-vectors: a1*b2 - a2*b1, ... in numpy's order of operations."""
    bld = _builder(a, b)
    if bld is None:
        return np.cross(a, b, axisa, axisb, axisc, axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    x = moveaxis(bld.lift(a), axisa, -1)
    w = moveaxis(bld.lift(b), axisb, -1)
    if x.shape[-1] != 3 or w.shape[-1] != 3:
        raise UnsupportedOpError(at_user_site(
            f"cross: vectors of length {x.shape[-1]} and {w.shape[-1]}: burnumba traces the "
            "cross product of 3-vectors only (numpy deprecates 2-vectors); for 2-vectors "
            "write a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]"))
    i, j = np.array([1, 2, 0]), np.array([2, 0, 1])
    c = x[..., i] * w[..., j] - x[..., j] * w[..., i]
    return moveaxis(c, -1, axisc)


_PAD_MOVES = ("edge", "reflect", "symmetric", "wrap")


@implements(np.pad)
def pad(array, pad_width, mode="constant", **kwargs):
    """numpy.pad. mode="constant" (with constant_values) points the border at scalar constant
    nodes; "edge", "reflect", "symmetric" and "wrap" only move elements: one gather."""
    if _builder(array) is None:
        return np.pad(array, pad_width, mode, **kwargs)
    array = _lift(array)
    _no_traced("pad", pad_width=pad_width, **kwargs)
    if mode in _PAD_MOVES:
        return _moved("pad", array, lambda p: np.pad(p, pad_width, mode, **kwargs))
    if mode != "constant":
        raise UnsupportedOpError(at_user_site(
            f"pad: mode={mode!r} is not supported on traced values (it computes the border "
            f"from the values); use mode='constant' or one of {', '.join(_PAD_MOVES)}, or "
            "build the border with bnp.concatenate"))
    b = array._b
    try:
        inside = np.pad(np.ones(array.shape, dtype=bool), pad_width, "constant",
                        constant_values=False)
        fills = np.pad(np.zeros(array.shape), pad_width, "constant", **kwargs)
    except (ValueError, TypeError) as e:
        raise ShapeError(at_user_site(f"pad: shape {array.shape}: {e}")) from None
    pos = np.zeros(inside.shape, dtype=np.int64)
    pos[inside] = _positions(array).reshape(-1)
    consts = {}
    for v in np.unique(fills[~inside]):
        consts[float(v)] = b.const(float(v))
        pos[~inside & (fills == v)] = int(consts[float(v)].positions())
    return b.gather([array, *consts.values()], pos.reshape(-1), pos.shape)


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    """numpy.take_along_axis: constant indices are one gather; traced integer indices (an int
    array argument) are numpy's own construction, ``arr[aranges with indices at axis]``."""
    if _builder(arr, indices) is None:
        return np.take_along_axis(arr, indices, axis)
    b = _builder(arr, indices)
    arr = b.lift(arr)
    if not isinstance(indices, Var):
        return _moved("take_along_axis", arr,
                      lambda p: np.take_along_axis(p, np.asarray(indices), axis))
    if axis is None:
        if indices.ndim != 1:
            raise ShapeError(at_user_site(
                f"take_along_axis: with axis=None, indices must be 1-D, not {indices.ndim}-D"))
        return ravel(arr)[indices]
    if indices.ndim != arr.ndim:
        raise ShapeError(at_user_site(
            f"take_along_axis: indices ({indices.ndim}-D) and arr ({arr.ndim}-D) must have the "
            "same number of dimensions"))
    axis = normalize_axis(axis, arr.ndim, "take_along_axis")
    key = []
    for d, size in enumerate(arr.shape):
        if d == axis:
            key.append(indices)
        else:
            key.append(np.arange(size).reshape((1,) * d + (size,) + (1,) * (arr.ndim - d - 1)))
    return arr[tuple(key)]


# np.shape / np.ndim / np.size of a traced value: its metadata, no node
implements(np.shape)(lambda a: a.shape)
implements(np.ndim)(lambda a: a.ndim)
implements(np.size)(lambda a: a.size)


@implements(np.broadcast_to)
def broadcast_to(array, shape):
    if _builder(array) is None:
        return np.broadcast_to(array, shape)
    array = _lift(array)
    return _expand(array, (shape,) if isinstance(shape, int) else tuple(shape))


@implements_method("__getitem__")
def _index(x, key):
    """x[key], with numpy's rules. Constant keys (basic slicing, integers, integer and boolean
    arrays) are applied to the positions at trace time: one gather. A key with traced integer
    arrays goes to ``_advanced``."""
    if type(key) is int and x._view is None:
        return _row(x, key)
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Var) for k in parts):
        return _advanced(x, parts)
    try:
        pos = _positions(x)[key]
    except IndexError as e:
        raise ShapeError(at_user_site(f"index {key!r} into shape {x.shape}: {e}")) from None
    if pos.shape == x.shape and np.array_equal(pos, _positions(x)):
        return x
    return x._b.gather([x], np.asarray(pos).reshape(-1), np.shape(pos))


def _row(x, k):
    """x[k] for a Python int k (a scalar picked from a vector, the commonest index in scalar
    code): its positions without computing the whole array's."""
    n = x.shape[0]
    if not -n <= k < n:
        raise ShapeError(at_user_site(
            f"index {k} is out of bounds for axis 0 with size {n} (shape {x.shape})"))
    width = math.prod(x.shape[1:])
    start = x._b.off[x._node] + (k + n if k < 0 else k) * width
    shape = x.shape[1:]
    return x._b.gather([x], np.arange(start, start + width).reshape(shape), shape)


def _index_data(b, idx):
    """Check that a traced index is integer data: an int array argument outside argnums, or
    elements moved from such arguments and integer constants (t[:2], t.T, np.stack([t, u]),
    t[i]); arithmetic on indices is not traced as integers."""
    if b.need[idx.node if idx._view is None else idx._view[2]] or \
            (idx._view is not None and idx._view[1]):
        raise UnsupportedOpError(at_user_site(
            "indexing with a differentiable traced value: indices must be integer data "
            "(an argument outside argnums), not something gradients flow through"))
    if _integer_data(b, idx):
        return idx
    if idx._view is None and b.input_kinds.get(idx.node) == "b":
        raise UnsupportedOpError(at_user_site(
            "indexing with a boolean mask argument: the result's shape would depend on the "
            "mask's values, which a tape cannot follow. Use bnp.where(mask, x, 0.0) or "
            "bn.masked_fill, or capture the mask as a constant array"))
    raise UnsupportedOpError(at_user_site(
        "traced indices must be an integer array argument (numpy refuses float indices "
        "with IndexError, and arithmetic on indices is not traced as integers): pass the "
        "indices as an int array, e.g. idx.astype(np.int64), and compute derived indices "
        "with numpy before the call (slicing, reshaping and stacking them is fine)"))


def _integer_data(b, v):
    """Whether v holds integer data, exact in the tape's dtype."""
    if v._view is not None:
        return _integer_positions(b, v._view[0])
    return _integer_node(b, v._node)


def _integer_positions(b, positions):
    owners = np.unique(np.searchsorted(np.asarray(b.off), np.ravel(positions), "right") - 1)
    return builtins.all(_integer_node(b, int(k)) for k in owners)


def _integer_node(b, node):
    kind = b.input_kinds.get(node)
    if kind is not None:
        return kind in ("i", "u")
    name = ROWS[b.op[node]].name
    if name == "const":
        v = b.consts[node]
        exact = _EXACT32 if b.dtype == np.float32 else 2 ** 53
        return bool(np.all((v == np.floor(v)) & (np.abs(v) <= exact)))
    if name == "gather":
        start = b.pp[node]
        return _integer_positions(b, b.params[start:start + b.off[node + 1] - b.off[node]])
    if name == "take":                           # rows of an integer table
        return _integer_node(b, b.a0[node])
    return False


# The largest integer that float32 holds exactly: a flat index computed on a float32 tape
# must stay below it.
_EXACT32 = 2 ** 24


def _advanced(x, parts):
    """x[parts] where some entries are traced integer arrays: numpy's advanced indexing.

    Every advanced entry (traced arrays, constant integer or boolean arrays, and, as numpy
    does in their presence, integer scalars) indexes one axis of x; their shapes broadcast
    to B. One ``take`` row reads x at the flat index sum_j wrap(i_j) * stride_j over the
    indexed axes, computed at run time by existing rows (``_flat_index``): each traced i_j
    is wrapped, bounds-checked and scaled by a ``take`` of the constant table
    arange(n_j) * stride_j, so an index out of range raises DataError naming its axis's
    length; constant ones are checked and wrapped by numpy at trace time.

    When the advanced entries are adjacent in the key, numpy puts B in their place, and
    their axes are consecutive in x: x (its slices applied) is read as rows of an
    (outer * n, inner) view at o * n + flat, with no copy of x. Otherwise (and when outer * n
    would pass float32's exact integers) the indexed axes move to the front and merge (one
    gather at trace time), the take reads that merged axis, and B comes first.
    """
    b = x._b
    if x.ndim == 0:
        raise ShapeError(at_user_site("indexing a 0-d traced value with an array: too many "
                                      "indices for an array of dimension 0"))
    entries = []                 # ("adv", value) | ("slice", slice) | ("new", None) | ("ell", None)
    for k in parts:
        if isinstance(k, Var):
            entries.append(("adv", _index_data(b, k)))
        elif k is None:
            entries.append(("new", None))
        elif k is Ellipsis:
            if any(e[0] == "ell" for e in entries):
                raise ShapeError(at_user_site(
                    "an index can only have a single ellipsis ('...')"))
            entries.append(("ell", None))
        elif isinstance(k, slice):
            entries.append(("slice", k))
        elif isinstance(k, (bool, np.bool_)):
            raise UnsupportedOpError(at_user_site(
                "indexing with a boolean scalar next to traced indices is not supported: "
                "drop it, or use None to add an axis"))
        else:
            if _builder(k) is not None:
                raise UnsupportedOpError(at_user_site(
                    "a list of traced values as an index: pass the indices as one integer "
                    "array argument"))
            arr = np.asarray(k)
            if arr.dtype.kind == "b":
                entries.extend(("adv", nz) for nz in np.nonzero(arr))   # numpy's rule
            elif arr.dtype.kind in "iu" or (arr.size == 0 and arr.dtype.kind == "f"):
                entries.append(("adv", arr.astype(np.int64)))
            else:
                raise ShapeError(at_user_site(
                    f"index {k!r}: only integers, slices, None, ..., and integer or boolean "
                    "arrays are valid indices"))
    used = builtins.sum(1 for kind, _ in entries if kind in ("adv", "slice"))
    if used > x.ndim:
        raise ShapeError(at_user_site(
            f"too many indices for an array of shape {x.shape}: {used} were indexed"))
    if not any(kind == "ell" for kind, _ in entries):
        entries.append(("ell", None))
    # the axis of x each entry indexes (an ellipsis stands for x.ndim - used slices)
    adv, rest, out = [], [], []     # (key position, axis, value); axes of rest; output pieces
    axis = 0
    for pos, (kind, v) in enumerate(entries):
        if kind == "adv":
            adv.append((pos, axis, v))
            axis += 1
        elif kind == "slice":
            rest.append(axis)
            out.append(("slice", v, axis, pos))
            axis += 1
        elif kind == "new":
            out.append(("new", None, None, pos))
        else:
            for _ in range(x.ndim - used):
                rest.append(axis)
                out.append(("slice", slice(None), axis, pos))
                axis += 1
    shapes = [v.shape for _, _, v in adv]
    try:
        bshape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(at_user_site(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes "
            f"{' '.join(str(s) for s in shapes)}")) from None
    axes = [a for _, a, _ in adv]
    sizes = [x.shape[a] for a in axes]
    n = math.prod(sizes)
    where = [pos for pos, _, _ in adv]
    adjacent = where[-1] - where[0] == len(where) - 1
    dims = [1 if kind == "new" else len(range(*s.indices(x.shape[a]))) for kind, s, a, _ in out]
    pre = tuple(d for d, (*_, pos) in zip(dims, out) if pos < where[0])
    post = tuple(dims[len(pre):])
    exact = _EXACT32 if b.dtype == np.float32 else 2 ** 53
    if adjacent:
        # the indexed axes are consecutive in x: read x (its slices applied) as (outer, n,
        # inner) and take rows o * n + flat of its (outer * n, inner) view, so that B lands
        # in place with no copy of x. An index outside its axis must not reach the next
        # block, so every traced index is checked by its own axis then.
        key = dict.fromkeys(axes, slice(None))
        key.update((a, s) for kind, s, a, _ in out if kind == "slice")
        if builtins.all(key[a].indices(x.shape[a]) == (0, x.shape[a], 1) for a in key):
            table = x                        # x[idx] of an embedding table: no gather
        else:
            table = x[tuple(key[a] for a in range(x.ndim))]
        outer = math.prod(table.shape[:axes[0]])
        inner = math.prod(table.shape[axes[-1] + 1:])
        if outer * n <= exact:
            flat = _flat_index(b, x, adv, sizes, checked=outer != 1)
            if outer != 1:
                blocks = (np.arange(outer, dtype=np.float64) * n).reshape(
                    (outer,) + (1,) * len(bshape))
                flat = add(flat, blocks)
            flat = broadcast_to(flat, ((outer,) if outer != 1 else ()) + bshape)
            y = _take_rows(reshape(table, (outer * n, inner)), flat)
            return reshape(y, pre + bshape + post)
    if n > exact:
        raise ShapeError(at_user_site(
            f"advanced index over axes {axes} of shape {x.shape}: its flat index runs up to "
            f"{n - 1:,}, beyond 2**24, which a float32 tape does not hold exactly; index in "
            "two steps (x[i][:, j]), or trace in float64"))
    # the table: indexed axes first and merged, slices applied to the rest (one gather)
    table = transpose(x, axes + rest)
    table = table[(slice(None),) * len(axes) + tuple(s for kind, s, *_ in out if kind == "slice")]
    table = reshape(table, (n,) + table.shape[len(axes):])
    y = _take_rows(table, broadcast_to(_flat_index(b, x, adv, sizes), bshape))
    # the new axes (None); B stays first (numpy's rule for separated advanced entries), or
    # moves to its place for adjacent ones read this way (a float32 index beyond 2**24)
    y = reshape(y, bshape + pre + post)
    if adjacent and pre and bshape:
        nb, first = len(bshape), len(pre)
        y = transpose(y, list(range(nb, nb + first)) + list(range(nb)) +
                      list(range(nb + first, y.ndim)))
    return y


def _flat_index(b, x, adv, sizes, checked=False):
    """sum_j wrap(i_j) * stride_j over the advanced entries (strides of the merged axes,
    row-major). A traced i_j is wrapped, checked and scaled by a take of the constant table
    arange(n_j) * stride_j; a constant one by numpy now. A single traced entry is returned
    as it is (the take that reads it checks it) unless ``checked``."""
    if len(adv) == 1 and isinstance(adv[0][2], Var) and not checked:
        return adv[0][2]
    strides = [math.prod(sizes[j + 1:]) for j in range(len(sizes))]
    const = np.zeros((), dtype=np.int64)
    traced = []
    for (_, a, v), size, stride in zip(adv, sizes, strides):
        if isinstance(v, Var):
            steps = b.const(np.arange(size, dtype=np.float64) * stride)
            traced.append(_take_rows(steps, v))
            continue
        bad = (v < -size) | (v >= size)
        if bad.any():
            raise ShapeError(at_user_site(
                f"index {int(v[bad].flat[0])} is out of bounds for axis {a} with size "
                f"{size} (indexing shape {x.shape})"))
        const = const + np.where(v < 0, v + size, v) * stride
    flat = traced[0]
    for t in traced[1:]:
        flat = add(flat, t)
    if const.ndim or const != 0:
        flat = add(flat, const.astype(np.float64))
    return flat


def _take_rows(x, idx):
    """x[idx] for traced integer indices: the take row (numpy's wrap of negative indices;
    an index out of range raises DataError when the tape runs)."""
    b = x._b
    if b.input_kinds.get(idx.node) is not None or b.need[idx.node]:
        _index_data(b, idx)
    if x.ndim == 0:
        raise ShapeError(at_user_site("take: cannot index a 0-d array"))
    width = int(np.prod(x.shape[1:], dtype=np.int64))
    shape = idx.shape + x.shape[1:]
    node = b.add("take", shape, x.node, idx.node, params=[x.shape[0], width],
                 need=b.need[x.node])
    return Var(b, node, shape)


# -- reductions, scans, sort and contractions (#11) ------------------------------------------
#
# prod is the last slice of a cumprod, whose backward multiplies the other elements and never
# divides, so the gradient is exact at zeros: a slice with one zero gives the product of the
# others at the zero and 0 elsewhere; with two zeros, 0 everywhere. sort is a take row whose
# indices the argsort row computes at run time (a tape is traced once and replayed on new
# values), so the gradient scatters through the permutation of the current values. einsum
# and tensordot are compositions: gathers (transposes, diagonals), sums, broadcasting
# multiplies and one matmul per pair of operands.

def _float_only(name, dtype, b):
    """numpy's ``dtype=`` argument, as the reductions take it (``cast_check``: another float
    dtype warns and computes in the tape's; integer, boolean and complex are errors)."""
    if dtype is not None:
        cast_check(f"{name}(..., dtype={np.dtype(dtype)})", dtype, b.dtype)


@implements(np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE,
         where=_NOVALUE):
    """numpy.prod. The gradient at element j is the product of the other elements (exact
    where the slice holds zeros; no division by x).

    >>> bn.grad(lambda x: np.prod(x))(np.array([2.0, 0.0, 3.0]))    # doctest: +SKIP
    array([0., 6., 0.])
    """
    if not isinstance(a, Var):
        kw = {k: v for k, v in (("initial", initial), ("where", where)) if v is not _NOVALUE}
        return np.prod(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)
    b = a._b
    _float_only("prod", dtype, b)
    _no_out("prod", out)
    if initial is not _NOVALUE:
        raise UnsupportedOpError(at_user_site(
            "prod(..., initial=...) on a traced value: multiply the result by the initial "
            "value instead"))
    if where is not _NOVALUE:
        raise UnsupportedOpError(at_user_site(
            "prod(..., where=...) on a traced value: write bnp.prod(bnp.where(mask, x, 1.0)) "
            "instead"))
    axes = list(range(a.ndim))[::-1] if axis is None else _axes("prod", axis, a.ndim)
    keep = [ax for ax in range(a.ndim) if ax not in axes]
    shape = tuple(a.shape[ax] for ax in keep)
    count = math.prod(a.shape[ax] for ax in axes)
    if count == 0:                                  # an empty product is 1, as numpy's
        y = _expand(b.const(1.0), shape)
    elif count == 1:
        y = reshape(a, shape)
    else:
        merged = reshape(transpose(a, keep + sorted(axes)), shape + (count,))
        y = b.axis("cumprod", merged, len(shape), merged.shape)[..., -1]
    return _kept(y, a.shape, axes, keepdims)


def _scan(name, a, axis, dtype, out):
    b = a._b
    _float_only(name, dtype, b)
    _no_out(name, out)
    if axis is None:
        a, axis = reshape(a, (a.size,)), 0
    if a.ndim == 0:
        raise ShapeError(at_user_site(f"{name}: axis {axis} is out of bounds for a 0-d array"))
    axis = normalize_axis(axis, a.ndim, name)
    if a.size == 0 or a.shape[axis] == 1:
        return a
    return b.axis(name, a, axis, a.shape)


@implements(np.cumsum)
def cumsum(a, axis=None, dtype=None, out=None):
    """numpy.cumsum (over the flattened array when axis is None); its gradient is the
    reversed cumulative sum of the upstream gradient."""
    if not isinstance(a, Var):
        return np.cumsum(a, axis=axis, dtype=dtype, out=out)
    return _scan("cumsum", a, axis, dtype, out)


@implements(np.cumprod)
def cumprod(a, axis=None, dtype=None, out=None):
    """numpy.cumprod; its gradient multiplies the other elements (exact at zeros)."""
    if not isinstance(a, Var):
        return np.cumprod(a, axis=axis, dtype=dtype, out=out)
    return _scan("cumprod", a, axis, dtype, out)


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """numpy.sort, stable whatever ``kind``: NaN last, equal values (-0.0 and 0.0 too) in
    their original order. The permutation is computed from the values at run time (the
    argsort row) and the gradient flows through it: element j's gradient is the upstream
    gradient at the place j was sorted to.

    >>> bn.grad(lambda x: np.sort(x)[0])(np.array([3.0, 1.0, 2.0]))   # doctest: +SKIP
    array([0., 1., 0.])
    """
    if not isinstance(a, Var):
        kw = {} if stable is None else {"stable": stable}
        return np.sort(a, axis=axis, kind=kind, order=order, **kw)
    if order is not None:
        raise UnsupportedOpError(at_user_site(
            "sort(..., order=...) sorts structured arrays, which are not traced: drop order="))
    b = a._b
    if axis is None:
        a, axis = reshape(a, (a.size,)), 0
    if a.ndim == 0:
        raise ShapeError(at_user_site("sort: axis -1 is out of bounds for a 0-d array"))
    axis = normalize_axis(axis, a.ndim, "sort")
    if a.size == 0 or a.shape[axis] == 1:
        return a
    if b.dtype == np.float32 and a.size > 2 ** 24:
        raise ShapeError(at_user_site(
            f"sort of {a.size:,} elements in a float32 tape: its indices are stored as float32 "
            "values, exact up to 2**24; trace in float64 or sort smaller arrays"))
    outer, m = math.prod(a.shape[:axis]), a.shape[axis]
    order_node = b.add("argsort", a.shape, a.node, params=[outer, m, a.size // (outer * m)],
                       imm=1.0, need=0)
    node = b.add("take", a.shape + (1,), a.node, order_node, params=[a.size, 1],
                 need=b.need[a.node])
    return reshape(Var(b, node, a.shape + (1,)), a.shape)


def _integer_result(name, hint):
    def f(a, *args, **kwargs):
        if not isinstance(a, Var):
            return getattr(np, name)(a, *args, **kwargs)
        raise UnsupportedOpError(at_user_site(
            f"numpy.{name} of a traced value: its result is integer indices, which are not "
            f"differentiable and are not traced. {hint}"))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy.{name} on numpy arrays; refused on traced values (integer result)."
    f.refused = True            # dispatched only to explain (burnumba._supported lists it so)
    return f


_INDEX_HINT = ("Compute the indices with numpy before the call and pass them in as integer "
               "data (an argument outside argnums)")
argsort = implements(np.argsort)(_integer_result(
    "argsort", "To sort, use np.sort (differentiable; the order is found at run time). "
    + _INDEX_HINT))
argmax = implements(np.argmax)(_integer_result(
    "argmax", "For the largest value use np.max (its gradient goes to the maxima); for a "
    "one-hot mask, x == np.max(x, axis, keepdims=True). " + _INDEX_HINT))
argmin = implements(np.argmin)(_integer_result(
    "argmin", "For the smallest value use np.min; for a one-hot mask, "
    "x == np.min(x, axis, keepdims=True). " + _INDEX_HINT))


def _einsum_labels(term, ndim, ell, name):
    """The labels of one operand's subscripts: letters as themselves, the dimensions of
    ``...`` as the integers ell - n .. ell - 1 (right-aligned, as numpy broadcasts them)."""
    if term.count("...") > 1 or term.replace("...", "").count(".") or not all(
            ch.isalpha() for ch in term.replace("...", "")):
        raise ShapeError(at_user_site(f"{name}: invalid subscripts {term!r}"))
    if "..." not in term:
        if len(term) != ndim:
            raise ShapeError(at_user_site(
                f"{name}: subscripts {term!r} name {len(term)} dimensions, the operand has "
                f"{ndim}"))
        return list(term)
    left, right = term.split("...")
    n = ndim - len(left) - len(right)
    if n < 0:
        raise ShapeError(at_user_site(
            f"{name}: subscripts {term!r} name more dimensions than the operand's {ndim}"))
    return list(left) + list(range(ell - n, ell)) + list(right)


def _einsum_parse(subscripts, shapes):
    """(labels of each operand, labels of the output) of numpy's subscripts string."""
    s = subscripts.replace(" ", "")
    lhs, arrow, rhs = s.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(at_user_site(
            f"einsum: {len(terms)} operand subscripts in {subscripts!r} for {len(shapes)} "
            "operands"))
    ell = builtins.max([len(sh) - len(t.replace("...", "")) for t, sh in zip(terms, shapes)
                        if "..." in t] or [0])
    ins = [_einsum_labels(t, len(sh), ell, "einsum") for t, sh in zip(terms, shapes)]
    letters = [x for labels in ins for x in labels if isinstance(x, str)]
    if arrow:
        out = _einsum_labels(rhs, len(rhs.replace("...", "")) + (ell if "..." in rhs else 0),
                             ell, "einsum")
        if len(set(out)) != len(out) or any(x not in letters for x in out if isinstance(x, str)):
            raise ShapeError(at_user_site(
                f"einsum: output subscripts {rhs!r} repeat a label or name one no operand has"))
    else:
        out = list(range(ell)) + sorted(x for x in set(letters) if letters.count(x) == 1)
    return ins, out


def _diagonals(x, labels):
    """x with each repeated label of its own reduced to the diagonal (a gather)."""
    pos = _positions(x)
    labels = list(labels)
    while len(set(labels)) < len(labels):
        lab = next(v for v in labels if labels.count(v) > 1)
        i = labels.index(lab)
        j = labels.index(lab, i + 1)
        if pos.shape[i] != pos.shape[j]:
            raise ShapeError(at_user_site(
                f"einsum: label {lab!r} is repeated in one operand with dimensions "
                f"{pos.shape[i]} and {pos.shape[j]}"))
        pos = np.diagonal(pos, axis1=i, axis2=j)          # the diagonal's axis goes last
        labels = [v for k, v in enumerate(labels) if k not in (i, j)] + [lab]
    if pos.shape == x.shape and np.array_equal(pos, _positions(x)):
        return x, labels
    return x._b.gather([x], pos.reshape(-1), pos.shape), labels


def _sum_labels(x, labels, keep):
    """Sum x over its labels that are not in ``keep``."""
    axes = tuple(k for k, v in enumerate(labels) if v not in keep)
    if not axes:
        return x, labels
    return sum(x, axis=axes), [v for v in labels if v in keep]


def _contract(x, lx, w, lw, later):
    """The product of two labelled operands summed over their shared labels that no later
    operand (nor the output) has: one broadcasting multiply when nothing is summed, else one
    matmul of (batch, free of x, summed) @ (batch, summed, free of w)."""
    common = [v for v in lx if v in lw]
    batch = [v for v in common if v in later]
    summed = [v for v in common if v not in later]
    fx = [v for v in lx if v not in common]
    fw = [v for v in lw if v not in common]
    dx = dict(zip(lx, x.shape))
    dw = dict(zip(lw, w.shape))
    xt = transpose(x, [lx.index(v) for v in batch + fx + summed])
    wt = transpose(w, [lw.index(v) for v in batch + summed + fw])
    if not summed:
        xs = tuple(dx[v] for v in batch + fx) + (1,) * len(fw)
        ws = tuple(dw[v] for v in batch) + (1,) * len(fx) + tuple(dw[v] for v in fw)
        return multiply(reshape(xt, xs), reshape(wt, ws)), batch + fx + fw
    size = {v: builtins.max(dx[v], dw[v]) for v in common}
    for v in common:
        if dx[v] != dw[v] and 1 not in (dx[v], dw[v]):
            raise ShapeError(at_user_site(
                f"einsum: label {v!r} has dimensions {dx[v]} and {dw[v]}, which do not "
                "broadcast"))
    nb = math.prod(size[v] for v in batch)
    m = math.prod(dx[v] for v in fx)
    n = math.prod(dw[v] for v in fw)
    k = math.prod(size[v] for v in summed)
    xt = _expand(xt, tuple(size[v] for v in batch) + tuple(dx[v] for v in fx)
                 + tuple(size[v] for v in summed))
    wt = _expand(wt, tuple(size[v] for v in batch + summed) + tuple(dw[v] for v in fw))
    lead = (nb,) if batch else ()
    y = matmul(reshape(xt, lead + (m, k)), reshape(wt, lead + (k, n)))
    shape = tuple(size[v] for v in batch) + tuple(dx[v] for v in fx) + tuple(dw[v] for v in fw)
    return reshape(y, shape), batch + fx + fw


def _einsum_sublists(args):
    """numpy's interleaved form einsum(a, [0, 1], b, [1, 2], [0, 2]) as a subscripts string."""
    args = list(args)
    out = args.pop() if len(args) % 2 else None
    ops, subs = args[0::2], args[1::2]
    letter = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(sub):
        return "".join("..." if v is Ellipsis else letter[int(v)] for v in sub)
    text = ",".join(term(sub) for sub in subs)
    return (text if out is None else text + "->" + term(out)), ops


@implements(np.einsum)
def einsum(*operands, out=None, optimize=False, **kwargs):
    """numpy.einsum: explicit (``->``) and implicit outputs, ``...``, repeated labels in one
    operand (diagonals), labels summed within one operand, size-1 dimensions broadcast, any
    number of operands contracted left to right (each pair by one matmul). ``optimize`` is
    accepted and ignored.

    >>> np.einsum("bij,bjk->bik", A, B)                                  # doctest: +SKIP
    """
    if _builder(*operands) is None:
        return np.einsum(*operands, out=out, optimize=optimize, **kwargs)
    _no_out("einsum", out)
    for key, value in kwargs.items():
        if key == "dtype" and value is not None:
            b = _builder(*operands)
            _float_only("einsum", value, b)
        elif key not in ("dtype", "order", "casting"):
            raise UnsupportedOpError(at_user_site(
                f"einsum: keyword {key}= is not supported on traced values; drop it"))
    if isinstance(operands[0], str):
        subscripts, ops = operands[0], list(operands[1:])
    else:
        subscripts, ops = _einsum_sublists(operands)
    b = _builder(*ops)
    xs = [b.lift(x) for x in ops]
    ins, out_labels = _einsum_parse(subscripts, [x.shape for x in xs])
    sizes = {}
    for x, labels in zip(xs, ins):
        for v, d in zip(labels, x.shape):
            if d != 1 and sizes.get(v, 1) not in (1, d):
                raise ShapeError(at_user_site(
                    f"einsum: label {v if isinstance(v, str) else '...'!r} has dimensions "
                    f"{sizes[v]} and {d} in {subscripts!r}, which do not broadcast"))
            sizes[v] = builtins.max(sizes.get(v, 1), d)
    items = []
    for k, (x, labels) in enumerate(zip(xs, ins)):
        x, labels = _diagonals(x, labels)
        elsewhere = set(out_labels).union(*(ins[q] for q in range(len(xs)) if q != k))
        items.append(_sum_labels(x, labels, elsewhere))
    y, ly = items[0]
    for k in range(1, len(items)):
        later = set(out_labels).union(*(items[q][1] for q in range(k + 1, len(items))))
        y, ly = _sum_labels(y, ly, later | set(items[k][1]))
        w, lw = _sum_labels(*items[k], later | set(ly))
        y, ly = _contract(y, ly, w, lw, later)
    y, ly = _sum_labels(y, ly, set(out_labels))
    y = transpose(y, [ly.index(v) for v in out_labels]) if ly else y
    want = tuple(sizes[v] for v in out_labels)
    return y if y.shape == want else _expand(y, want)


@implements(np.tensordot)
def tensordot(a, b, axes=2):
    """numpy.tensordot: the summed axes moved together (gathers), then one matmul."""
    bld = _builder(a, b)
    if bld is None:
        return np.tensordot(a, b, axes)
    x, w = bld.lift(a), bld.lift(b)
    if isinstance(axes, (int, np.integer)):
        if axes < 0 or axes > builtins.min(x.ndim, w.ndim):
            raise ShapeError(at_user_site(
                f"tensordot: axes={axes} for shapes {x.shape} and {w.shape}"))
        ax, aw = list(range(x.ndim - axes, x.ndim)), list(range(axes))
    else:
        try:
            ax, aw = axes
        except (TypeError, ValueError):
            raise ShapeError(at_user_site(
                f"tensordot: axes={axes!r} is neither an int nor a pair of sequences")) from None
        ax = [ax] if isinstance(ax, (int, np.integer)) else list(ax)
        aw = [aw] if isinstance(aw, (int, np.integer)) else list(aw)
        ax = [normalize_axis(int(v), x.ndim, "tensordot") for v in ax]
        aw = [normalize_axis(int(v), w.ndim, "tensordot") for v in aw]
    if len(ax) != len(aw) or any(x.shape[i] != w.shape[j] for i, j in zip(ax, aw)):
        raise ShapeError(at_user_site(
            f"tensordot: shape-mismatch for sum: axes {ax} of {x.shape} and {aw} of {w.shape}"))
    fx = [i for i in range(x.ndim) if i not in ax]
    fw = [j for j in range(w.ndim) if j not in aw]
    k = math.prod(x.shape[i] for i in ax)
    xt = reshape(transpose(x, fx + ax), (math.prod(x.shape[i] for i in fx), k))
    wt = reshape(transpose(w, aw + fw), (k, math.prod(w.shape[j] for j in fw)))
    shape = tuple(x.shape[i] for i in fx) + tuple(w.shape[j] for j in fw)
    return reshape(matmul(xt, wt), shape)


@implements(np.select)
def select(condlist, choicelist, default=0):
    """numpy.select as nested where: the first true condition picks its choice."""
    if _builder(condlist, choicelist, default) is None:
        return np.select(condlist, choicelist, default)
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ShapeError(at_user_site(
            "select: list of cases must be same length as list of conditions"))
    if not condlist:
        raise ShapeError(at_user_site("select: select with an empty condition list is not "
                                      "possible"))
    out = default
    for cond, choice in zip(condlist[::-1], choicelist[::-1]):
        out = where(cond, choice, out)
    return out


# -- more ufuncs and common numpy functions (#11) -------------------------------------------
#
# The rows arcsinh ... logical_xor are wired by name above (the loop over the op table). Here: numpy
# 2's alias names (the same ufunc objects), the ufuncs that are compositions (deg2rad is a multiply
# by the constant numpy multiplies by, so the values agree bit for bit), the two-output ufuncs, and
# numpy functions composed from traced ops. Conventions: functions that only look at shapes
# (zeros_like ...) return numpy constants; rounding (round, rint, trunc, floor_divide) and the
# predicates (isnan, isclose, ...) have gradient 0; the nan* reductions pass gradient 0 to the NaNs
# they skip (JAX's rule: they are where(isnan(x), identity, x) before the reduction); median and
# quantile give NaN, with gradient 0, to a lane holding a NaN (numpy's value: the lane's NaN sorts
# last).

_isnan, _isfinite, _not_equal = (globals()[n] for n in ("isnan", "isfinite", "not_equal"))
_logical_and, _logical_or = globals()["logical_and"], globals()["logical_or"]
_trunc, _fmod, _floor_divide = (globals()[n] for n in ("trunc", "fmod", "floor_divide"))
_copysign, _remainder = globals()["copysign"], globals()["remainder"]
_arccos, _arcsin, _arctan = (globals()[n] for n in ("arccos", "arcsin", "arctan"))
_arccosh, _arcsinh, _arctanh = (globals()[n] for n in ("arccosh", "arcsinh", "arctanh"))
acos, asin, atan, atan2 = _arccos, _arcsin, _arctan, globals()["arctan2"]
acosh, asinh, atanh = _arccosh, _arcsinh, _arctanh
# np.pow is np.power; float_power is power in the tape's dtype (numpy's float64 in float64)
pow = float_power = power
fabs = implements_ufunc(np.fabs)(absolute)


@implements_ufunc(np.conjugate)
def conjugate(x):
    """numpy.conjugate: a real value is its own conjugate."""
    return x if isinstance(x, Var) else np.conjugate(x)


conj = conjugate


def _scaled(name, npfunc, factor):
    def f(x):
        return x * factor if _builder(x) is not None else npfunc(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy.{name}: x * {factor!r}, numpy's constant, on traced values too."
    return f


deg2rad = radians = implements_ufunc(np.deg2rad, np.radians)(
    _scaled("deg2rad", np.deg2rad, math.pi / 180.0))
rad2deg = degrees = implements_ufunc(np.rad2deg, np.degrees)(
    _scaled("rad2deg", np.rad2deg, 180.0 / math.pi))


@implements_ufunc(np.ldexp)
def ldexp(x1, x2):
    """numpy.ldexp: x1 * 2**x2 for constant integer exponents (a multiply by exact powers of
    two; two of them when 2**x2 is not a normal float)."""
    if _builder(x1, x2) is None:
        return np.ldexp(x1, x2)
    if isinstance(x2, Var) or np.asarray(x2).dtype.kind not in "iu":
        raise UnsupportedOpError(at_user_site(
            "ldexp: the exponent must be integer data known at trace time (a Python int or a "
            "numpy integer array); for a traced exponent write x * bnp.exp2(e)"))
    e = np.asarray(x2, dtype=np.int64)
    if np.all((e >= -1022) & (e <= 1023)):
        return x1 * (float(np.ldexp(1.0, e)) if e.ndim == 0 else np.ldexp(1.0, e))
    half = e // 2
    return x1 * np.ldexp(1.0, half) * np.ldexp(1.0, e - half)


@implements_ufunc(np.frexp)
def frexp(x, *args, **kwargs):
    if _builder(x) is None:
        return np.frexp(x, *args, **kwargs)
    raise UnsupportedOpError(at_user_site(
        "numpy.frexp of a traced value: its exponent output is integer data, which is not "
        "traced. For the exponent use bnp.floor(bnp.log2(bnp.abs(x))) + 1; for the mantissa, "
        "x * bnp.exp2(-that)"))


frexp.refused = True


def _bitwise(name, row):
    """numpy's bitwise ufunc ``name`` (what & | ^ ~ call from a numpy array): the logical row
    between masks, as numpy's on booleans; refused on other traced values."""
    def f(*xs):
        if _builder(*xs) is None:
            return getattr(np, name)(*xs)
        if not all(is_mask(x) for x in xs):
            raise UnsupportedOpError(at_user_site(
                f"numpy.{name} of a traced value that is not a mask: & | ^ ~ are traced "
                "between masks only (comparisons, isnan, ..., numpy bool arrays), as "
                "np.logical_and / or / xor / not"))
        return globals()[row](*xs)
    f.__name__ = f.__qualname__ = name
    return f


implements_ufunc(np.bitwise_and)(_bitwise("bitwise_and", "logical_and"))
implements_ufunc(np.bitwise_or)(_bitwise("bitwise_or", "logical_or"))
implements_ufunc(np.bitwise_xor)(_bitwise("bitwise_xor", "logical_xor"))
implements_ufunc(np.invert)(_bitwise("invert", "logical_not"))


@implements_ufunc(np.vecdot, keywords=("axis",))
def vecdot(x1, x2, axis=-1):
    """numpy.vecdot of real vectors: sum(x1 * x2) over ``axis``, the other axes broadcast."""
    if _builder(x1, x2) is None:
        return np.vecdot(x1, x2, axis=axis)
    b = _builder(x1, x2)
    x1, x2 = b.lift(x1), b.lift(x2)
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[axis] != x2.shape[axis]:
        raise ShapeError(at_user_site(
            f"vecdot: shapes {x1.shape} and {x2.shape} have different lengths along axis "
            f"{axis}"))
    return sum(moveaxis(x1, axis, -1) * moveaxis(x2, axis, -1), axis=-1)


@implements_ufunc(np.matvec)
def matvec(x1, x2):
    """numpy.matvec: (..., m, n) matrices times (..., n) vectors, as one matmul."""
    if _builder(x1, x2) is None:
        return np.matvec(x1, x2)
    b = _builder(x1, x2)
    x1, x2 = b.lift(x1), b.lift(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ShapeError(at_user_site(f"matvec: shapes {x1.shape} and {x2.shape}: a matrix "
                                      "and a vector are needed"))
    return matmul(x1, expand_dims(x2, -1))[..., 0]


@implements_ufunc(np.vecmat)
def vecmat(x1, x2):
    """numpy.vecmat of real vectors: (..., n) vectors times (..., n, m) matrices."""
    if _builder(x1, x2) is None:
        return np.vecmat(x1, x2)
    b = _builder(x1, x2)
    x1, x2 = b.lift(x1), b.lift(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ShapeError(at_user_site(f"vecmat: shapes {x1.shape} and {x2.shape}: a vector "
                                      "and a matrix are needed"))
    return matmul(expand_dims(x1, -2), x2)[..., 0, :]


@implements_ufunc(np.modf)
def modf(x):
    """numpy.modf: (fractional part, integral part), both with x's sign: fmod(x, 1) (0 with
    x's sign at +-inf, as numpy) and trunc(x). The fractional part's gradient is 1, the
    integral part's 0 (JAX)."""
    if _builder(x) is None:
        return np.modf(x)
    whole = _trunc(x)
    frac = where(globals()["isinf"](x), _copysign(0.0, x), _fmod(x, 1.0))
    return frac, whole


@implements_ufunc(np.divmod)
def divmod(x1, x2):
    """numpy.divmod: (x1 // x2, x1 % x2), numpy's floor_divide and remainder."""
    if _builder(x1, x2) is None:
        return np.divmod(x1, x2)
    return _floor_divide(x1, x2), _remainder(x1, x2)


@implements(np.round, np.around)
def round(a, decimals=0, out=None):
    """numpy.round: rint(a * 10**d) / 10**d (rint(a / 10**-d) * 10**-d for d < 0), numpy's
    formula, so ties go to even as numpy's; gradient 0."""
    if not isinstance(a, Var):
        return np.round(a, decimals, out)
    _no_out("round", out)
    rint = globals()["rint"]
    if decimals == 0:
        return rint(a)
    if decimals > 0:
        f = 10.0 ** decimals
        return rint(a * f) / f
    f = 10.0 ** -decimals
    return rint(a / f) * f


around = round


@implements(np.real)
def real(val):
    """numpy.real: a real value itself."""
    return val if isinstance(val, Var) else np.real(val)


@implements(np.imag)
def imag(val):
    """numpy.imag: zeros (a constant) for a real traced value."""
    return np.zeros(val.shape, val.dtype) if isinstance(val, Var) else np.imag(val)


def _like(name, npfunc, fill):
    def f(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        if not isinstance(a, Var):
            return npfunc(a, dtype, order, subok, shape, **kwargs)
        return np.full(a.shape if shape is None else shape, fill,
                       dtype=a.dtype if dtype is None else dtype)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"numpy.{name}: of a traced value, a numpy array of its shape (a constant: "
                 "no gradient flows through it)")
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


def _axis_tuple(name, axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(normalize_axis(int(ax), ndim, name) for ax in axes)
    if len(set(out)) != len(out):
        raise ShapeError(at_user_site(f"{name}: repeated axis in {axis}"))
    return out


@implements(np.average)
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """numpy.average: mean(a) or sum(a * w) / sum(w) along ``axis`` (weights 1-D along the
    axis when their shape differs from a's, as numpy); ``returned`` adds the sum of the
    weights (the count without weights), broadcast to the average's shape."""
    b = _builder(a, weights)
    if b is None:
        return np.average(a, axis, weights, returned, keepdims=keepdims)
    a = b.lift(a)
    axes = None if axis is None else _axis_tuple("average", axis, a.ndim)
    if weights is None:
        avg = mean(a, axis=axes, keepdims=keepdims)
        scl = np.full(np.shape(avg), a.size / builtins.max(math.prod(np.shape(avg)), 1),
                      dtype=b.dtype)
    else:
        wgt = weights if isinstance(weights, Var) else np.asarray(weights, dtype=np.float64)
        if tuple(a.shape) != tuple(np.shape(wgt)):
            if axes is None:
                raise UnsupportedOpError(at_user_site(
                    "average: axis must be specified when shapes of a and weights differ"))
            if tuple(np.shape(wgt)) != tuple(a.shape[ax] for ax in axes):
                raise ShapeError(at_user_site(
                    "average: shape of weights must be consistent with shape of a along the "
                    f"specified axis: weights {np.shape(wgt)}, a {a.shape}, axis {axis}"))
            wgt = transpose(wgt, tuple(np.argsort(axes)))
            wgt = reshape(wgt, tuple(s if ax in axes else 1 for ax, s in enumerate(a.shape)))
        scl = sum(wgt, axis=axes, keepdims=keepdims)
        if not isinstance(scl, Var) and np.any(scl == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = sum(a * wgt, axis=axes, keepdims=keepdims) / scl
        if returned and np.shape(scl) != np.shape(avg):
            scl = broadcast_to(scl, np.shape(avg))
    return (avg, scl) if returned else avg


@implements(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    """numpy.ptp: max - min (each with its ties' even split of the gradient)."""
    if not isinstance(a, Var):
        return np.ptp(a, axis, out, keepdims)
    _no_out("ptp", out)
    return max(a, axis=axis, keepdims=keepdims) - min(a, axis=axis, keepdims=keepdims)


def _nan_args(name, dtype, out, b, kwargs):
    _float_only(name, dtype, b)
    _no_out(name, out)
    if kwargs:
        raise UnsupportedOpError(at_user_site(
            f"{name}: keyword arguments {sorted(kwargs)} are not supported on traced values "
            f"(for where=, write bnp.{name}(bnp.where(mask, x, nan)))"))


@implements(np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """numpy.nansum: sum(where(isnan(a), 0, a)); the NaNs get gradient 0."""
    if not isinstance(a, Var):
        return np.nansum(a, axis, dtype, out, keepdims, **kwargs)
    _nan_args("nansum", dtype, out, a._b, kwargs)
    return sum(where(_isnan(a), 0.0, a), axis=axis, keepdims=keepdims)


@implements(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """numpy.nanmean: nansum / the count of non-NaN elements (NaN for an all-NaN slice)."""
    if not isinstance(a, Var):
        return np.nanmean(a, axis, dtype, out, keepdims, **kwargs)
    _nan_args("nanmean", dtype, out, a._b, kwargs)
    nan = _isnan(a)
    return (sum(where(nan, 0.0, a), axis=axis, keepdims=keepdims)
            / sum(1.0 - nan, axis=axis, keepdims=keepdims))


def _nanextreme(name, a, axis, out, keepdims, largest, kwargs):
    _nan_args(name, None, out, a._b, kwargs)
    nan = _isnan(a)
    skip = -math.inf if largest else math.inf
    m = (max if largest else min)(where(nan, skip, a), axis=axis, keepdims=keepdims)
    # a slice of NaNs only is NaN (numpy warns; here it is data)
    return where(min(nan, axis=axis, keepdims=keepdims), math.nan, m)


@implements(np.nanmax)
def nanmax(a, axis=None, out=None, keepdims=False, **kwargs):
    """numpy.nanmax: the largest non-NaN element (NaN for an all-NaN slice)."""
    if not isinstance(a, Var):
        return np.nanmax(a, axis, out, keepdims, **kwargs)
    return _nanextreme("nanmax", a, axis, out, keepdims, True, kwargs)


@implements(np.nanmin)
def nanmin(a, axis=None, out=None, keepdims=False, **kwargs):
    """numpy.nanmin: the smallest non-NaN element (NaN for an all-NaN slice)."""
    if not isinstance(a, Var):
        return np.nanmin(a, axis, out, keepdims, **kwargs)
    return _nanextreme("nanmin", a, axis, out, keepdims, False, kwargs)


@implements(np.nanprod)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """numpy.nanprod: prod(where(isnan(a), 1, a))."""
    if not isinstance(a, Var):
        return np.nanprod(a, axis, dtype, out, keepdims, **kwargs)
    _nan_args("nanprod", dtype, out, a._b, kwargs)
    return prod(where(_isnan(a), 1.0, a), axis=axis, keepdims=keepdims)


@implements(np.nanvar)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """numpy.nanvar, numpy's steps: the NaNs replaced by 0 and left out of the count and of
    the squared deviations; NaN where count - ddof <= 0. The NaNs get gradient 0."""
    if not isinstance(a, Var):
        return np.nanvar(a, axis, dtype, out, ddof, keepdims, **kwargs)
    _nan_args("nanvar", dtype, out, a._b, kwargs)
    nan = _isnan(a)
    arr = where(nan, 0.0, a)
    cnt = sum(1.0 - nan, axis=axis, keepdims=True)
    d = where(nan, 0.0, arr - sum(arr, axis=axis, keepdims=True) / cnt)
    var = sum(d * d, axis=axis, keepdims=keepdims)
    dof = reshape(cnt, np.shape(var)) - float(ddof)
    bad = less_equal(dof, 0.0)
    # the safe divisor keeps 0 / 0 out of the unchosen branch's gradient
    return where(bad, math.nan, var / where(bad, 1.0, dof))


@implements(np.nanstd)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """numpy.nanstd: sqrt(nanvar)."""
    if not isinstance(a, Var):
        return np.nanstd(a, axis, dtype, out, ddof, keepdims, **kwargs)
    _nan_args("nanstd", dtype, out, a._b, kwargs)
    return sqrt(nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims))


@implements(np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.isclose as a 0/1 mask (numpy's formula: |a - b| <= atol + rtol |b| where b is
    finite, or a == b; NaNs equal with equal_nan)."""
    if _builder(a, b, rtol, atol) is None:
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    close = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))
    out = _logical_or(_logical_and(close, _isfinite(b)), equal(a, b))
    if equal_nan:
        out = _logical_or(out, _logical_and(_isnan(a), _isnan(b)))
    return out


@implements(np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if _builder(a, b, rtol, atol) is None:
        return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    raise TracerBoolError(at_user_site(
        "numpy.allclose of a traced value returns a Python bool, which is not known while "
        "tracing. Use bnp.isclose(a, b) (a 0/1 mask) with bnp.where, or bnp.min(bnp.isclose("
        "a, b)) for a traced 0/1 that says whether all are close"))


allclose.refused = True


@implements(np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False):
    """numpy.count_nonzero of a traced value: the count as a traced float (no gradient)."""
    if not isinstance(a, Var):
        return np.count_nonzero(a, axis=axis, keepdims=keepdims)
    return sum(_not_equal(a, 0.0), axis=axis, keepdims=keepdims)


def _lanes(name, a, axis):
    """a with the axes reduced by ``axis`` (None: all) moved last and merged into one:
    (that array, the reduced axes)."""
    axes = _axis_tuple(name, axis, a.ndim)
    keep = [ax for ax in range(a.ndim) if ax not in axes]
    x = transpose(a, keep + sorted(axes)) if a.ndim else a
    x = reshape(x, tuple(a.shape[k] for k in keep) + (-1,))
    if x.shape[-1] == 0:
        raise ShapeError(at_user_site(f"{name} of an empty slice: shape {a.shape}, axis "
                                      f"{axis}"))
    return x, axes


def _restore(name, y, a, axes, qshape, keepdims):
    """y of shape (kept..., *qshape) -> numpy's (*qshape, kept...), keepdims as numpy."""
    nk = y.ndim - len(qshape)
    if qshape:
        y = transpose(y, list(range(nk, y.ndim)) + list(range(nk)))
    if keepdims:
        shape = tuple(1 if ax in axes else s for ax, s in enumerate(a.shape))
        y = reshape(y, tuple(qshape) + shape)
    return y


def _nan_lanes(s, y, qshape):
    """NaN where the sorted lane's last element is NaN (numpy's check); broadcast over q."""
    last = _isnan(s[..., -1])
    last = reshape(last, last.shape + (1,) * len(qshape))
    return where(last, math.nan, y)


@implements(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.median: the middle element of the sorted lane, or the mean of the two middle
    ones; NaN for a lane with a NaN. The gradient goes to the middle element(s), through the
    sort's permutation."""
    if not isinstance(a, Var):
        return np.median(a, axis, out, overwrite_input, keepdims)
    _no_out("median", out)
    x, axes = _lanes("median", a, axis)
    s = sort(x, axis=-1)
    n = s.shape[-1]
    y = s[..., n // 2] if n % 2 else (s[..., n // 2 - 1] + s[..., n // 2]) * 0.5
    y = _nan_lanes(s, y, ())
    return _restore("median", y, a, axes, (), keepdims)


_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
                     "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                     "hazen", "weibull", "median_unbiased", "normal_unbiased")


def _constant_q(name, q):
    """Refuse a traced q: the quantile's position decides which elements are read."""
    if _builder(q) is not None:
        raise UnsupportedOpError(at_user_site(
            f"{name}: a traced q would decide which elements are read; pass q as a constant "
            "(a number or a numpy array)"))


def _quantile(name, a, q, axis, method, keepdims, weights, interpolation):
    from numpy.lib import _function_base_impl as fb     # numpy's own indices and gamma
    if interpolation is not None:
        method = interpolation
    if weights is not None:
        raise UnsupportedOpError(at_user_site(
            f"{name}(..., weights=...) is not supported on traced values"))
    _constant_q(name, q)
    if method not in fb._QuantileMethods:
        raise ShapeError(at_user_site(
            f"{name}: {method!r} is not a valid method. Use one of: {_QUANTILE_METHODS}"))
    q = np.asanyarray(q, dtype=np.float64)
    if not np.all((q >= 0) & (q <= 1)):
        raise ShapeError(at_user_site(f"{name}: quantiles must be in the range [0, 1]"))
    x, axes = _lanes(name, a, axis)
    s = sort(x, axis=-1)
    n = s.shape[-1]
    props = fb._QuantileMethods[method]
    virtual = np.asanyarray(props["get_virtual_index"](n, q))
    if props["fix_gamma"] is None or np.issubdtype(virtual.dtype, np.integer):
        y = s[..., np.asarray(virtual, dtype=np.int64) % n]
    else:
        prev, nxt = fb._get_indexes(np.empty(n), virtual, n)
        gamma = np.asarray(fb._get_gamma(virtual, prev, props), dtype=np.float64)
        prev, nxt = np.asarray(prev) % n, np.asarray(nxt) % n
        # numpy's _lerp: a + (b - a) t, or b - (b - a)(1 - t) where t >= 0.5 (the gathers
        # pick a or b at trace time, the sign goes into the constant)
        high = gamma >= 0.5
        base = s[..., np.where(high, nxt, prev)]
        coef = np.where(high, -(1.0 - gamma), gamma)
        y = base + (s[..., nxt] - s[..., prev]) * coef
    y = _nan_lanes(s, y, q.shape)
    return _restore(name, y, a, axes, q.shape, keepdims)


@implements(np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """numpy.quantile: numpy's indices and interpolation (every method but weights) applied
    to the sorted lanes (bnp.sort); NaN for a lane with a NaN.

    >>> bn.grad(lambda x: np.quantile(x, 0.25))(np.array([3.0, 1.0, 2.0]))   # doctest: +SKIP
    array([0. , 0.5, 0.5])
    """
    if not isinstance(a, Var):
        return np.quantile(a, q, axis, out, overwrite_input, method, keepdims,
                           weights=weights, interpolation=interpolation)
    _no_out("quantile", out)
    return _quantile("quantile", a, q, axis, method, keepdims, weights, interpolation)


@implements(np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """numpy.percentile: quantile at q / 100."""
    if not isinstance(a, Var):
        return np.percentile(a, q, axis, out, overwrite_input, method, keepdims,
                             weights=weights, interpolation=interpolation)
    _no_out("percentile", out)
    _constant_q("percentile", q)
    return _quantile("percentile", a, np.true_divide(q, 100), axis, method, keepdims,
                     weights, interpolation)


# nanmedian and nanquantile: NaNs sort last, so a lane's order statistics are its first
# count elements; their positions depend on the count (data), so each pick is a 0/1 mask over
# the lane (position == index, no gradient) and a sum: vectorized, O(lane) per pick.
def _nan_sorted(name, a, axis, nq):
    """The sorted lanes, shaped (kept..., 1 * nq, m), and their counts of non-NaN values
    (kept..., 1 * nq, 1)."""
    x, axes = _lanes(name, a, axis)
    s = sort(x, axis=-1)
    s = reshape(s, s.shape[:-1] + (1,) * nq + s.shape[-1:])
    cnt = sum(1.0 - _isnan(s), axis=-1, keepdims=True)
    return s, cnt, axes


def _pick(s, index):
    """s[..., index] for a traced index per lane (index of shape (..., 1))."""
    at = equal(np.arange(s.shape[-1], dtype=np.float64), index)
    return sum(where(at, s, 0.0), axis=-1)


@implements(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.nanmedian: the median of each lane's non-NaN values (NaN for an all-NaN lane);
    the NaNs get gradient 0."""
    if not isinstance(a, Var):
        return np.nanmedian(a, axis, out, overwrite_input, keepdims)
    _no_out("nanmedian", out)
    s, cnt, axes = _nan_sorted("nanmedian", a, axis, 0)
    half = (cnt - 1.0) * 0.5
    lo, hi = globals()["floor"](half), globals()["ceil"](half)
    low, high = _pick(s, lo), _pick(s, hi)
    y = where(reshape(equal(lo, hi), low.shape), low, (low + high) * 0.5)
    y = where(reshape(equal(cnt, 0.0), y.shape), math.nan, y)
    return _restore("nanmedian", y, a, axes, (), keepdims)


def _nanquantile(name, a, q, axis, method, keepdims, weights):
    if method != "linear" or weights is not None:
        raise UnsupportedOpError(at_user_site(
            f"{name}: only method='linear' without weights is traced (the positions depend "
            "on each lane's count of NaNs); for the other methods use np.quantile on data "
            "without NaNs"))
    _constant_q(name, q)
    q = np.asanyarray(q, dtype=np.float64)
    if not np.all((q >= 0) & (q <= 1)):
        raise ShapeError(at_user_site(f"{name}: quantiles must be in the range [0, 1]"))
    s, cnt, axes = _nan_sorted(name, a, axis, q.ndim)
    # numpy's linear method on the count's first elements: virtual index (count - 1) q, its
    # floor and the next (both the last element at or above it), gamma against numpy's
    # previous index (-1 above the last), and _lerp
    virtual = (cnt - 1.0) * q.reshape(q.shape + (1,))
    above = greater_equal(virtual, cnt - 1.0)
    fl = globals()["floor"](virtual)
    prev = where(above, cnt - 1.0, fl)
    nxt = where(above, cnt - 1.0, fl + 1.0)
    gamma = virtual - where(above, -1.0, fl)
    low, high = _pick(s, prev), _pick(s, nxt)
    gamma = reshape(gamma, low.shape)
    diff = high - low
    y = where(greater_equal(gamma, 0.5), high - diff * (1.0 - gamma), low + diff * gamma)
    y = where(reshape(equal(cnt, 0.0), np.shape(cnt)[:-1]), math.nan, y)
    return _restore(name, y, a, axes, q.shape, keepdims)


@implements(np.nanquantile)
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """numpy.nanquantile (method "linear"): the quantile of each lane's non-NaN values;
    NaN for an all-NaN lane, gradient 0 at the NaNs."""
    if not isinstance(a, Var):
        return np.nanquantile(a, q, axis, out, overwrite_input, method, keepdims,
                              weights=weights, interpolation=interpolation)
    _no_out("nanquantile", out)
    return _nanquantile("nanquantile", a, q, axis, interpolation or method, keepdims,
                        weights)


@implements(np.nanpercentile)
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """numpy.nanpercentile: nanquantile at q / 100."""
    if not isinstance(a, Var):
        return np.nanpercentile(a, q, axis, out, overwrite_input, method, keepdims,
                                weights=weights, interpolation=interpolation)
    _no_out("nanpercentile", out)
    _constant_q("nanpercentile", q)
    return _nanquantile("nanpercentile", a, np.true_divide(q, 100), axis,
                        interpolation or method, keepdims, weights)


@implements(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """numpy.cov, numpy's steps: rows are variables (columns with rowvar=False), centred by
    their (weighted) mean, X @ X.T / (N - ddof). Weights may be constants or traced."""
    if _builder(m, y, fweights, aweights) is None:
        return np.cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)
    b = _builder(m, y, fweights, aweights)
    if dtype is not None:
        _float_only("cov", dtype, b)
    if ddof is not None and ddof != int(ddof):
        raise ShapeError(at_user_site("cov: ddof must be integer"))
    X = b.lift(m)
    if X.ndim > 2:
        raise ShapeError(at_user_site("cov: m has more than 2 dimensions"))
    ndim = X.ndim
    X = reshape(X, (1, X.size)) if X.ndim < 2 else X
    if not rowvar and ndim != 1:
        X = transpose(X)
    if X.shape[0] == 0:
        return np.array([]).reshape(0, 0)
    if y is not None:
        Y = b.lift(y)
        if Y.ndim > 2:
            raise ShapeError(at_user_site("cov: y has more than 2 dimensions"))
        Y = reshape(Y, (1, Y.size)) if Y.ndim < 2 else Y
        if not rowvar and Y.shape[0] != 1:
            Y = transpose(Y)
        X = concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    for wt, what in ((fweights, "fweights"), (aweights, "aweights")):
        if wt is None:
            continue
        if not isinstance(wt, Var):
            wt = np.asarray(wt, dtype=np.float64)
            if what == "fweights" and np.any(wt != np.around(wt)):
                raise ShapeError(at_user_site("cov: fweights must be integer"))
            if np.any(wt < 0):
                raise ShapeError(at_user_site(f"cov: {what} cannot be negative"))
        if np.ndim(wt) != 1 or np.shape(wt)[0] != X.shape[1]:
            raise ShapeError(at_user_site(f"cov: incompatible numbers of samples and {what}"))
        w = wt if w is None else w * wt
    if w is None:
        avg = mean(X, axis=1)
        fact = X.shape[1] - ddof
    else:
        avg, w_sum = average(X, axis=1, weights=w, returned=True)
        w_sum = w_sum[0]
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * sum(w * aweights) / w_sum
    if not isinstance(fact, Var) and fact <= 0:
        fact = 0.0
    X = X - reshape(avg, (X.shape[0], 1))
    X_T = transpose(X) if w is None else transpose(X * w)
    c = matmul(X, X_T)
    if isinstance(fact, Var):
        return squeeze(c * reciprocal(fact))
    with np.errstate(divide="ignore"):
        c = c * float(np.true_divide(1.0, fact))
    return squeeze(c)


@implements(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """numpy.corrcoef: cov / (stddev_i stddev_j), clipped to [-1, 1] as numpy."""
    if _builder(x, y) is None:
        return np.corrcoef(x, y, rowvar, dtype=dtype)
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    stddev = sqrt(diagonal(c))
    c = c / reshape(stddev, (-1, 1))
    c = c / reshape(stddev, (1, -1))
    return clip(c, -1, 1)


def _correlate_rows(a, v, start, length):
    """Entries start .. start + length of the full correlation c[k] = sum_j a[k - (m - 1)
    + j] v[j] (zero outside a): one gather of a's sliding windows (zero padded, built with
    numpy index arithmetic) and one matrix-vector product."""
    m = v.shape[0]
    padded = pad(a, (m - 1, m - 1)) if m > 1 else a
    windows = np.arange(start, start + length)[:, None] + np.arange(m)[None, :]
    return matmul(padded[windows], v)


def _correlate(name, a, v, mode, reverse_v):
    b = _builder(a, v)
    a, v = b.lift(a), b.lift(v)
    a = reshape(a, (1,)) if a.ndim == 0 else a
    v = reshape(v, (1,)) if v.ndim == 0 else v
    if a.ndim != 1 or v.ndim != 1:
        raise ShapeError(at_user_site(f"{name}: object too deep for desired array (1-D "
                                      f"arrays only; got {a.shape} and {v.shape})"))
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ShapeError(at_user_site(f"{name}: {'a' if a.shape[0] == 0 else 'v'} cannot "
                                      "be empty"))
    if reverse_v and v.shape[0] > a.shape[0]:
        a, v = v, a                                    # convolve is symmetric (numpy swaps)
    if reverse_v:
        v = v[::-1]
    modes = {"valid": 0, "same": 1, "full": 2, 0: 0, 1: 1, 2: 2, "v": 0, "s": 1, "f": 2}
    if mode not in modes:
        raise ShapeError(at_user_site(f"{name}: mode must be one of 'valid', 'same', or "
                                      f"'full' (got {mode!r})"))
    n1, n2 = a.shape[0], v.shape[0]
    big, small, full = builtins.max(n1, n2), builtins.min(n1, n2), n1 + n2 - 1
    start, length = {0: (small - 1, big - small + 1), 1: (small - 1 - small // 2, big),
                     2: (0, full)}[modes[mode]]
    if n1 < n2:                                        # numpy swaps and reverses the result
        start = full - start - length
    return _correlate_rows(a, v, start, length)


@implements(np.correlate)
def correlate(a, v, mode="valid"):
    """numpy.correlate of 1-D arrays (modes valid, same, full): a sliding-window gather and
    one matrix-vector product."""
    if _builder(a, v) is None:
        return np.correlate(a, v, mode)
    return _correlate("correlate", a, v, mode, False)


@implements(np.convolve)
def convolve(a, v, mode="full"):
    """numpy.convolve of 1-D arrays: the correlation with the shorter array reversed."""
    if _builder(a, v) is None:
        return np.convolve(a, v, mode)
    return _correlate("convolve", a, v, mode, True)


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


@implements(np.fix)
def fix(x, out=None):
    """numpy.fix: round toward zero (trunc, the same values and signed zeros); gradient 0."""
    if not isinstance(x, Var):
        return np.fix(x, out)
    _no_out("fix", out)
    return _trunc(x)


from . import linalg  # noqa: E402,F401  (bnp.linalg; it registers np.linalg.*)

