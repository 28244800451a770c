"""``import burnumba.numpy as bnp``: numpy's names for the ops burnumba can trace.

Each function accepts traced values, numpy arrays and Python numbers. With no traced value
among its arguments it simply calls numpy. Plain ``np.exp(x)``, ``np.sum(x)`` ... on a traced
``x`` arrive here through ``__array_ufunc__`` and ``__array_function__``.
"""
import builtins

import numpy as np

from ._errors import InplaceError, ShapeError, UnsupportedOpError, at_user_site
from ._tracer import Var, broadcast_to as _expand, power as _power

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "negative", "positive", "power",
    "square", "exp", "log", "sqrt", "reciprocal", "tanh", "sin", "cos", "abs", "absolute",
    "maximum", "minimum", "greater", "greater_equal", "less", "less_equal", "equal",
    "not_equal", "where", "sum", "mean", "inner", "dot", "matmul", "stack", "concatenate",
    "array", "asarray", "reshape", "ravel", "transpose", "broadcast_to", "expand_dims",
    "squeeze", "relu", "sigmoid", "rsqrt", "sumsq", "clip",
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
    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}``, as numpy.{npfunc.__name__}, on traced values too."
    return f


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


add = _elementwise("add", np.add)
subtract = _elementwise("subtract", np.subtract)
multiply = _elementwise("multiply", np.multiply)
divide = true_divide = _elementwise("divide", np.divide)
negative = _elementwise("negative", np.negative)
square = _elementwise("square", np.square)
exp = _elementwise("exp", np.exp)
log = _elementwise("log", np.log)
sqrt = _elementwise("sqrt", np.sqrt)
reciprocal = _elementwise("reciprocal", np.reciprocal)
tanh = _elementwise("tanh", np.tanh)
sin = _elementwise("sin", np.sin)
cos = _elementwise("cos", np.cos)
abs = absolute = _elementwise("absolute", np.absolute)
maximum = _elementwise("maximum", np.maximum)
minimum = _elementwise("minimum", np.minimum)
greater = _elementwise("greater", np.greater)
greater_equal = _elementwise("greater_equal", np.greater_equal)
less = _elementwise("less", np.less)
less_equal = _elementwise("less_equal", np.less_equal)
equal = _elementwise("equal", np.equal)
not_equal = _elementwise("not_equal", np.not_equal)
# Not in numpy, but rows of their own: relu(x) = max(x, 0), sigmoid = scipy.special.expit,
# rsqrt(x) = 1 / sqrt(x).
relu = _elementwise("relu", lambda x: np.maximum(x, 0.0))
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
    c, x, y = (v if v.size == 1 or v.shape == shape else _expand(v, shape)
               for v in (c, x, y))
    need = b.need[x.node] or b.need[y.node]
    node = b.add("where", shape, x.node, y.node, params=[c.node], need=need)
    return Var(b, node, shape)


# -- reductions ------------------------------------------------------------------------------

def _no_axis(name, axis, keepdims, x):
    if axis is not None or keepdims:
        raise UnsupportedOpError(at_user_site(
            f"{name}(axis={axis!r}, keepdims={keepdims!r}) on a traced value: reductions along "
            "an axis are not supported yet; reduce the whole array, or index the rows first"))


def _items(a):
    """What to reduce over: one array (traced or numpy), or a list of traced / constant
    values, which becomes the operand list of one fused node."""
    if isinstance(a, (Var, np.ndarray)):
        return [a]
    return list(a)


def sum(a, axis=None, keepdims=False):
    """Sum of all elements. A list of scalar nodes becomes one fused n-ary node."""
    b = _builder(a)
    if b is None:
        return np.sum(a, axis=axis, keepdims=keepdims)
    _no_axis("sum", axis, keepdims, a)
    return b.reduce("sum", _items(a))


def _count(b, xs):
    return builtins.sum(b.lift(x).size for x in xs)


def mean(a, axis=None, keepdims=False):
    """Mean of all elements (the sum row with scale 1 / count)."""
    b = _builder(a)
    if b is None:
        return np.mean(a, axis=axis, keepdims=keepdims)
    _no_axis("mean", axis, keepdims, a)
    xs = [b.lift(x) for x in _items(a)]
    n = _count(b, xs)
    if n == 0:
        raise ShapeError(at_user_site("mean of an empty array"))
    return b.reduce("sum", xs, scale=1.0 / n)


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
    """numpy.dot. Two 1-D arrays: the fused inner product."""
    bld = _builder(a, b)
    if bld is None:
        return np.dot(a, b)
    x, w = bld.lift(a), bld.lift(b)
    if x.ndim == 1 and w.ndim == 1:
        return inner(x, w)
    if x.ndim == 0 or w.ndim == 0:
        return multiply(x, w)
    return matmul(x, w)


def matmul(a, b):
    """a @ b. Two 1-D arrays: the fused inner product."""
    bld = _builder(a, b)
    if bld is None:
        return np.matmul(a, b)
    x, w = bld.lift(a), bld.lift(b)
    if x.ndim == 1 and w.ndim == 1:
        return inner(x, w)
    raise UnsupportedOpError(at_user_site(
        f"matmul / @ with shapes {x.shape} and {w.shape} is not supported yet: only two 1-D "
        "arrays are (use bnp.dot / bnp.inner, or write the product with sums)"))


# -- building and reshaping arrays ----------------------------------------------------------

def _positions(x):
    """Absolute arena positions of x's elements, shaped like x."""
    return x._b.off[x.node] + np.arange(x.size).reshape(x.shape)


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
    return Var(a._b, a.node, _resolve_shape(a, tuple(newshape)))


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
    if a.ndim < 2 or pos.shape == a.shape and np.all(np.diff(pos.reshape(-1)) == 1):
        return reshape(a, pos.shape)
    return a._b.gather([a], pos.reshape(-1), pos.shape)


def broadcast_to(array, shape):
    if not isinstance(array, Var):
        return np.broadcast_to(array, shape)
    return _expand(array, (shape,) if isinstance(shape, int) else tuple(shape))


def _index(x, key):
    """x[key] for constant keys: basic slicing, integers, integer and boolean arrays."""
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Var) for k in parts):
        raise UnsupportedOpError(at_user_site(
            "indexing with a traced value: indices must be concrete integers or arrays. "
            "To select by a traced condition use bnp.where"))
    try:
        pos = _positions(x)[key]
    except IndexError as e:
        raise ShapeError(at_user_site(f"index {key!r} into shape {x.shape}: {e}")) from None
    if pos.shape == x.shape and np.array_equal(pos, _positions(x)):
        return x
    return x._b.gather([x], np.asarray(pos).reshape(-1), np.shape(pos))


# -- numpy protocol dispatch -----------------------------------------------------------------

_UFUNCS = {
    np.add: add, np.subtract: subtract, np.multiply: multiply, np.divide: divide,
    np.negative: negative, np.positive: positive, np.power: power, np.square: square,
    np.exp: exp, np.log: log, np.sqrt: sqrt, np.reciprocal: reciprocal, np.tanh: tanh,
    np.sin: sin, np.cos: cos, np.absolute: absolute, np.maximum: maximum, np.minimum: minimum,
    np.greater: greater, np.greater_equal: greater_equal, np.less: less,
    np.less_equal: less_equal, np.equal: equal, np.not_equal: not_equal,
    np.matmul: lambda a, b: matmul(a, b),
}

_FUNCTIONS = {
    np.sum: sum, np.mean: mean, np.inner: inner, np.dot: dot, np.where: where,
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
