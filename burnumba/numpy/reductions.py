"""Reductions and scans: sum, mean, max / amax, min / amin, var, std, prod, sumsq, cumsum,
cumprod, count_nonzero, any, all, and the nan* reductions (nansum, nanmean, nanmax, nanmin,
nanprod, nanvar, nanstd).

prod is the last slice of a cumprod, whose backward multiplies the other elements and never
divides, so the gradient is exact at zeros: a slice with one zero gives the product of the
others at the zero and 0 elsewhere; with two zeros, 0 everywhere. The nan* reductions pass
gradient 0 to the NaNs they skip (JAX's rule: they are where(isnan(x), identity, x) before the
reduction).
"""
import builtins
import math
import operator

import numpy as np

from .._errors import ShapeError, UnsupportedOpError, at_user_site
from ..kernels import ROWS
from ..tracing.dispatch import implements, implements_accumulate
from ..tracing.tracer import Var, broadcast_to as _expand, normalize_axis
from ._common import _NOVALUE, _builder, _float_only, _no_out, _options
from .elementwise import _isnan, _not_equal, less_equal, maximum, minimum, sqrt, square, where
from .shapes import reshape, transpose


def _items(a):
    """What to reduce over: one array (traced or numpy), or a list of traced / constant
    values, which becomes the operand list of one fused node."""
    if isinstance(a, (Var, np.ndarray)):
        return [a]
    return list(a)


def _axes(name, axis, ndim):
    """The axes to reduce, largest first (so that reducing one does not renumber the rest)."""
    try:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = [a if isinstance(a, Var) else operator.index(a) for a in axes]
    except TypeError:
        raise ShapeError(at_user_site(f"{name}: axis {axis!r} is not an integer or a tuple of "
                                      "integers")) from None
    out = sorted({normalize_axis(a, ndim, name) for a in axes}, reverse=True)
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


def _reduction(name, a, dtype, out):
    """The traced operand of a reduction (a list of traced values is stacked), after checking
    numpy's ``out`` and ``dtype`` arguments."""
    b = _builder(a)
    _options(name, b, dtype, out)
    return b.lift(a)


def _mask(name, a, where):
    """numpy's ``where=`` of a reduction, broadcast to a's shape (True: no mask). A traced
    mask (``np.sum(x, where=x > 0)``) stays traced: the reductions select with np.where,
    and a mean divides by the mask's traced count, so one tape serves every mask."""
    if where is True:
        return None
    if isinstance(where, Var):
        try:
            return _expand(where, a.shape) if where.shape != a.shape else where
        except ShapeError:
            raise ShapeError(at_user_site(
                f"{name}: where= of shape {where.shape} does not broadcast to the operand's "
                f"shape {a.shape}")) from None
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
    if isinstance(a, Var) and a.size == 0:
        return _empty(b, "sum", a.shape, axis, keepdims)
    if axis is None and not keepdims:
        xs = [b.lift(x) for x in _items(a)]
        if _count(b, xs) == 0:
            raise ShapeError(at_user_site("sum of an empty array"))
        return b.reduce("sum", xs)
    return _reduce("sum", "sum_axis", b.lift(a), axis, keepdims, scale=lambda m: 1.0)


def _empty(b, name, shape, axis, keepdims):
    """numpy's own result for an empty array, a constant (no element, no gradient): sum 0,
    mean NaN with numpy's RuntimeWarning, as an empty selection x[mask] gives them."""
    value = getattr(np, name)(np.zeros(shape), axis=axis, keepdims=keepdims)
    return b.const(value) if np.ndim(value) else b.const(float(value))


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
        count = sum(globals()["where"](mask, 1.0, 0.0), axis=axis, keepdims=keepdims) \
            if isinstance(mask, Var) else np.sum(mask, axis=axis, keepdims=keepdims)
        total = sum(globals()["where"](mask, x, 0.0), axis=axis, keepdims=keepdims)
        # numpy gives NaN (0 / 0) for a line with no element selected
        return total * np.where(count > 0, 1.0 / np.maximum(count, 1), np.nan)
    _options("mean", b, dtype, out)
    if isinstance(a, Var) and a.size == 0:
        return _empty(b, "mean", a.shape, axis, keepdims)
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
                "needs an initial value for the lines the mask leaves empty)"))
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
        return a.copy()                     # a new array, as numpy's (writes stay apart)
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


def _axis_row_function(row):
    """``row.public(a, axis=None)`` for an "axis" row of the op table that names a public
    function (kernels/row.py: ``Op.public``): the row on a traced value, the row's own numpy
    rules (``Op.traced.value``) on numpy data; over the flattened array when axis is None,
    as numpy's cumulative functions."""
    def f(a, axis=None):
        if isinstance(a, Var):
            return _scan(row.name, a, axis, None, None)
        x = np.asarray(a)
        x = x if x.dtype.kind == "f" else x.astype(np.float64)    # float32 stays, as numpy
        if axis is None:
            x, axis = x.reshape(-1), 0
        axis = normalize_axis(axis, x.ndim, row.public)
        if x.size == 0:
            return x.copy()
        view = (math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:]))
        return row.traced.value(np, x.reshape(view), 0.0).reshape(x.shape)
    f.__name__ = f.__qualname__ = row.public
    f.__doc__ = (f"``{row.public}(a, axis=None)``: {row.doc} along ``axis`` (the flattened "
                 "array when None). A row of the op table (kernels), differentiable to any "
                 "order.")
    return f


# The block rows that name a public function: made here from the row, as the elementwise
# rows' functions are (adding such a row to the op table is all it takes).
ROW_FUNCTIONS = {row.public: _axis_row_function(row) for row in ROWS
                 if row.public and row.layout == "axis"}
globals().update(ROW_FUNCTIONS)


def _accumulate_function(row):
    """``ufunc.accumulate(array, axis=0, dtype=None)`` on a traced array for the "axis" row
    that is that ufunc's accumulation (``Op.accumulate``: cumsum is np.add.accumulate): as
    numpy's, along axis 0 by default, and axis=None only for a 1-d array."""
    ufunc = getattr(np, row.accumulate)
    name = f"numpy.{ufunc.__name__}.accumulate"

    def accumulate(array, axis=0, dtype=None):
        if not isinstance(array, Var):            # a traced out= with numpy data
            return ufunc.accumulate(np.asarray(array), axis=axis, dtype=dtype)
        if axis is None and array.ndim != 1:
            raise ShapeError(at_user_site(
                f"{name}: axis=None accumulates a 1-d array only (numpy: 'accumulate does "
                f"not allow multiple axes'); pass an axis, or ravel the {array.ndim}-d array"))
        if array.ndim == 0:
            raise ShapeError(at_user_site(f"{name}: cannot accumulate on a scalar (numpy "
                                          "refuses it too); give a 1-d array"))
        return _scan(row.name, array, axis, dtype, None)
    accumulate.__name__ = accumulate.__qualname__ = f"{ufunc.__name__}_accumulate"
    return accumulate


# The scan rows that are a ufunc's accumulation, registered for ``ufunc.accumulate`` from the
# row (kernels/row.py: ``Op.accumulate``), so that a new scan row declares it in its rule file.
for _row in ROWS:
    if _row.accumulate:
        implements_accumulate(getattr(np, _row.accumulate))(_accumulate_function(_row))


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


@implements(np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False):
    """numpy.count_nonzero of a traced value: the count as a traced float (no gradient)."""
    if not isinstance(a, Var):
        return np.count_nonzero(a, axis=axis, keepdims=keepdims)
    return sum(_not_equal(a, 0.0), axis=axis, keepdims=keepdims)


def _truth(name, a, axis, out, keepdims, where):
    """numpy.any / numpy.all of a traced value: a traced mask, the largest (any) or smallest
    (all) of ``a != 0`` along ``axis`` (NaN is nonzero, as in numpy). ``bool()`` of it, as in
    ``if np.any(x > tol):``, is a decision of the trace: a guard (tracing/decisions.py)."""
    _no_out(name, out)
    b = a._b
    if a.size == 0:                          # no element decides: numpy's constant answer
        return getattr(np, name)(np.zeros(a.shape, bool), axis=axis, keepdims=keepdims)
    nonzero = _not_equal(a, 0.0)
    mask = _mask(name, a, where)
    if mask is not None:                     # an element left out counts as False / True
        nonzero = globals()["where"](mask, nonzero, 1.0 if name == "all" else 0.0)
    largest = _reduce(name, "max_axis", b.lift(nonzero), axis, keepdims,
                      sign=1.0 if name == "any" else -1.0)
    return _not_equal(largest, 0.0)


@implements(np.any)
def any(a, axis=None, out=None, keepdims=False, *, where=True):
    """numpy.any: whether some element along axis is nonzero, as a traced mask."""
    if not isinstance(a, Var):
        return np.any(a, axis=axis, out=out, keepdims=keepdims, where=where)
    return _truth("any", a, axis, out, keepdims, where)


@implements(np.all)
def all(a, axis=None, out=None, keepdims=False, *, where=True):
    """numpy.all: whether every element along axis is nonzero, as a traced mask."""
    if not isinstance(a, Var):
        return np.all(a, axis=axis, out=out, keepdims=keepdims, where=where)
    return _truth("all", a, axis, out, keepdims, where)
