"""Sorting and statistics: sort, argsort, argmax, argmin, nanargmax, nanargmin, unique,
searchsorted and digitize (the last eight decided: guards), order statistics (ptp, median,
quantile, percentile, nanmedian, nanquantile, nanpercentile), average, cov, corrcoef,
correlate and convolve.

sort is a take row whose indices the argsort row computes at run time (a tape is traced once
and replayed on new values), so the gradient scatters through the permutation of the current
values. median and quantile give NaN, with gradient 0, to a line holding a NaN (numpy's value:
the line's NaN sorts last).
"""
import builtins
import math

import numpy as np

from .._errors import DataError, ShapeError, UnsupportedOpError, at_user_site
from ..tracing.dispatch import implements
from ..tracing.concrete import peek
from ..tracing.tracer import Var, normalize_axis
from ._common import _builder, _float_only, _no_out
from .indexing import take_along_axis
from .elementwise import (_isnan, _logical_and, _logical_or, _not_equal, ceil, clip, equal,
                          floor, greater_equal, less, logical_not as _logical_not, reciprocal,
                          sqrt, stop_gradient, where)
from .shapes import broadcast_to, concatenate, diagonal, pad, reshape, squeeze, transpose
from .reductions import max, mean, min, sum
from .products import matmul


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
        return a.copy()                     # a new array, as numpy's (writes stay apart)
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


# -- argmax, argmin, argsort: integer results, decided while tracing (guards) ---------------
def _decided_extreme(name, a, axis, out, keepdims, extreme):
    """numpy.argmax / argmin of a traced array: the positions of the extreme values (of the
    NaNs when there is one, as numpy's first NaN wins) are a boolean mask, decided under
    guards (``Var._decided_mask``), and numpy's own function on it gives the index (its first
    True). The index is integer data of the tape, valid while the guards hold: a call where
    another element is the extreme traces again. No gradient flows through an index."""
    if not isinstance(a, Var):
        kw = {} if keepdims is np._NoValue else {"keepdims": keepdims}
        return getattr(np, name)(a, axis=axis, out=out, **kw)
    _no_out(name, out)
    a = stop_gradient(a)            # the decision's nodes pass no gradient (nor NaN * 0)
    nan = _isnan(a)
    any_nan = max(where(nan, 1.0, 0.0), axis=axis, keepdims=True)
    at = where(any_nan > 0.0, nan, equal(a, extreme(a, axis=axis, keepdims=True)))
    mask = at._decided_mask(f"np.{name}")
    return np.argmax(mask, axis=axis, keepdims=bool(keepdims is True))


@implements(np.argmax)
def argmax(a, axis=None, out=None, *, keepdims=np._NoValue):
    """numpy.argmax, decided under guards (``_decided_extreme``)."""
    return _decided_extreme("argmax", a, axis, out, keepdims, max)


@implements(np.argmin)
def argmin(a, axis=None, out=None, *, keepdims=np._NoValue):
    """numpy.argmin, decided under guards (``_decided_extreme``)."""
    return _decided_extreme("argmin", a, axis, out, keepdims, min)


def _nan_extreme(name, a, axis, out, keepdims, fill):
    """numpy.nanargmax / nanargmin: argmax / argmin with the NaNs out of the race (``fill``),
    decided as they are; a slice of NaNs only is numpy's ValueError (a decision too)."""
    npfunc = getattr(np, name)
    if not isinstance(a, Var):
        kw = {} if keepdims is np._NoValue else {"keepdims": keepdims}
        return npfunc(a, axis=axis, out=out, **kw)
    nan = _isnan(stop_gradient(a))
    if bool(min(max(where(nan, 0.0, 1.0), axis=axis)) == 0.0):
        raise DataError(at_user_site(f"np.{name}: All-NaN slice encountered (numpy)"))
    return _decided_extreme(name[3:], where(nan, fill, a), axis, out, keepdims,
                            max if name == "nanargmax" else min)


@implements(np.nanargmax)
def nanargmax(a, axis=None, out=None, *, keepdims=np._NoValue):
    """numpy.nanargmax, decided under guards (NaNs skipped)."""
    return _nan_extreme("nanargmax", a, axis, out, keepdims, -math.inf)


@implements(np.nanargmin)
def nanargmin(a, axis=None, out=None, *, keepdims=np._NoValue):
    """numpy.nanargmin, decided under guards (NaNs skipped)."""
    return _nan_extreme("nanargmin", a, axis, out, keepdims, math.inf)


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """numpy.argsort of a traced array: the permutation numpy finds for the values now, as
    integer data of the tape, under one guard: that it still sorts the values (each element
    at most the next along the axis, NaNs last, as numpy sorts them). A call whose order
    differs traces again. No gradient flows through the indices; x[np.argsort(x)] has the
    gradient of the elements it takes (np.sort is the same values, found at run time)."""
    if not isinstance(a, Var):
        return np.argsort(a, axis=axis, kind=kind, order=order, stable=stable)
    if order is not None:
        raise UnsupportedOpError(at_user_site(
            "argsort(..., order=...) sorts structured arrays, which are not traced: drop order="))
    if axis is None:
        a, axis = reshape(a, (a.size,)), 0
    axis = normalize_axis(axis, a.ndim, "argsort")
    p = np.argsort(peek(a, "np.argsort", "compute the order with numpy before the call"),
                   axis=axis, kind=kind, stable=stable)
    if a.shape[axis] > 1:
        s = take_along_axis(stop_gradient(a), p, axis)
        lead = (slice(None),) * axis
        before, after = s[lead + (slice(None, -1),)], s[lead + (slice(1, None),)]
        ok = where(_logical_or(greater_equal(after, before), _isnan(after)), 1.0, 0.0)
        bool(min(ok) > 0.0)              # the guard: the permutation still sorts the values
    return p


def _before(x, y):
    """x < y in numpy's sort order (NaN last), as a traced mask."""
    return _logical_or(less(x, y), _logical_and(_isnan(y), _logical_not(_isnan(x))))


@implements(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    """numpy.searchsorted with traced a or v: the insertion points numpy finds for the values
    now, integer data of the tape (as argsort's), under one guard: each v still lies between
    the elements of a around its point, in numpy's order (NaN last; a[i-1] < v <= a[i] for
    side='left', a[i-1] <= v < a[i] for 'right'). Values that move to other points trace
    again; the points carry no gradient."""
    b = _builder(a, v)
    if b is None:
        return np.searchsorted(a, v, side, sorter)
    if side not in ("left", "right"):
        raise ShapeError(at_user_site(f"searchsorted: side must be 'left' or 'right', not "
                                      f"{side!r}"))
    A, V = b.lift(a), b.lift(v)
    if sorter is not None:
        A = A[np.asarray(sorter)]
    if A.ndim != 1:
        raise ShapeError(at_user_site(f"searchsorted: a must be 1-D, not of shape {A.shape}"))
    fix = "compute the points with numpy before the call and pass them in"
    idx = np.searchsorted(peek(A, "np.searchsorted", fix), peek(V, "np.searchsorted", fix),
                          side)
    n = A.shape[0]
    if n:
        A, V = stop_gradient(A), stop_gradient(V)
        first, last = idx == 0, idx == n          # no element of a on that side
        lo, hi = A[np.maximum(idx - 1, 0)], A[np.minimum(idx, n - 1)]
        if side == "left":
            ok = _logical_and(_logical_or(first, _before(lo, V)),
                              _logical_or(last, _logical_not(_before(hi, V))))
        else:
            ok = _logical_and(_logical_or(first, _logical_not(_before(V, lo))),
                              _logical_or(last, _before(V, hi)))
        bool(min(where(ok, 1.0, 0.0)) > 0.0)        # the guard: the points still hold
    return idx


@implements(np.digitize)
def digitize(x, bins, right=False):
    """numpy.digitize, as numpy computes it: searchsorted (above) in the bins, or in the
    reversed bins for decreasing ones (the direction of traced bins is a decision too)."""
    b = _builder(x, bins)
    if b is None:
        return np.digitize(x, bins, right)
    B = b.lift(bins)
    if B.ndim != 1:
        raise ShapeError(at_user_site(f"digitize: bins must be 1-D, not of shape {B.shape}"))
    side = "left" if right else "right"
    increasing = B.shape[0] < 2 or bool(min(where(greater_equal(B[1:], B[:-1]), 1.0, 0.0)) > 0)
    if increasing:
        return searchsorted(B, x, side=side)
    return B.shape[0] - searchsorted(B[::-1], x, side=side)


@implements(np.unique)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           **kwargs):
    """numpy.unique of a traced array (axis=None): its distinct values, sorted. Which elements
    are equal decides the result's length, so it is a decision of the trace: the order
    (argsort's guard) and the equality of each pair of neighbours in that order (a decided
    mask, guards), so a call whose values group differently traces again. The values are the
    elements themselves (one gather of each group's first occurrence, numpy's return_index),
    so each distinct value's gradient goes to that element, as autograd's x[i] would. The
    integer results (index, inverse, counts) are numpy's, decided with it. With equal_nan
    (numpy's default) the NaNs are one value, last; ``sorted=False`` gives the sorted order,
    which numpy allows."""
    if not isinstance(ar, Var):
        return np.unique(ar, return_index, return_inverse, return_counts, axis, **kwargs)
    if axis is not None:
        raise UnsupportedOpError(at_user_site(
            "np.unique(..., axis=...) of a traced array: only the distinct elements "
            "(axis=None) are traced; compare the rows with numpy before the call"))
    equal_nan = kwargs.pop("equal_nan", True)
    kwargs.pop("sorted", None)
    if kwargs:
        raise UnsupportedOpError(at_user_site(
            f"np.unique: keyword arguments {sorted(kwargs)} are not supported on traced "
            "values"))
    flat = reshape(ar, (ar.size,))
    if ar.size > 1:
        order = argsort(flat, kind="stable")          # guarded: the order still holds
        s = flat[order]
        differ = _not_equal(s[1:], s[:-1])
        if equal_nan:                                  # NaN != NaN: one NaN, as numpy's
            differ = _logical_and(differ, _logical_not(
                _logical_and(_isnan(s[1:]), _isnan(s[:-1]))))
        differ._decided_mask("np.unique")              # guards: the groups still hold
    values = peek(flat, "np.unique", "compute the distinct values with numpy before the "
                  "call and pass them in")
    # numpy's own integer results (the inverse's shape is this numpy's), on the values now
    out = np.unique(values.reshape(ar.shape), return_index=True,
                    return_inverse=return_inverse, return_counts=return_counts,
                    equal_nan=equal_nan)
    first = out[1]
    result = (flat[first],) + ((first,) if return_index else ()) + out[2:]
    return result if len(result) > 1 else result[0]


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


def _lines(name, a, axis):
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


def _nan_lines(s, y, qshape):
    """NaN where the sorted line's last element is NaN (numpy's check); broadcast over q."""
    last = _isnan(s[..., -1])
    last = reshape(last, last.shape + (1,) * len(qshape))
    return where(last, math.nan, y)


@implements(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.median: the middle element of the sorted line, or the mean of the two middle
    ones; NaN for a line with a NaN. The gradient goes to the middle element(s), through the
    sort's permutation."""
    if not isinstance(a, Var):
        return np.median(a, axis, out, overwrite_input, keepdims)
    _no_out("median", out)
    x, axes = _lines("median", a, axis)
    s = sort(x, axis=-1)
    n = s.shape[-1]
    y = s[..., n // 2] if n % 2 else (s[..., n // 2 - 1] + s[..., n // 2]) * 0.5
    y = _nan_lines(s, y, ())
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
    x, axes = _lines(name, a, axis)
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
    y = _nan_lines(s, y, q.shape)
    return _restore(name, y, a, axes, q.shape, keepdims)


@implements(np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """numpy.quantile: numpy's indices and interpolation (every method but weights) applied
    to the sorted lines (bnp.sort); NaN for a line with a NaN.

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


# nanmedian and nanquantile: NaNs sort last, so a line's order statistics are its first
# count elements; their positions depend on the count (data), so each pick is a 0/1 mask over
# the line (position == index, no gradient) and a sum: vectorized, O(line) per pick.
def _nan_sorted(name, a, axis, nq):
    """The sorted lines, shaped (kept..., 1 * nq, m), and their counts of non-NaN values
    (kept..., 1 * nq, 1)."""
    x, axes = _lines(name, a, axis)
    s = sort(x, axis=-1)
    s = reshape(s, s.shape[:-1] + (1,) * nq + s.shape[-1:])
    cnt = sum(1.0 - _isnan(s), axis=-1, keepdims=True)
    return s, cnt, axes


def _pick(s, index):
    """s[..., index] for a traced index per line (index of shape (..., 1))."""
    at = equal(np.arange(s.shape[-1], dtype=np.float64), index)
    return sum(where(at, s, 0.0), axis=-1)


@implements(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.nanmedian: the median of each line's non-NaN values (NaN for an all-NaN line);
    the NaNs get gradient 0."""
    if not isinstance(a, Var):
        return np.nanmedian(a, axis, out, overwrite_input, keepdims)
    _no_out("nanmedian", out)
    s, cnt, axes = _nan_sorted("nanmedian", a, axis, 0)
    half = (cnt - 1.0) * 0.5
    lo, hi = floor(half), ceil(half)
    low, high = _pick(s, lo), _pick(s, hi)
    y = where(reshape(equal(lo, hi), low.shape), low, (low + high) * 0.5)
    y = where(reshape(equal(cnt, 0.0), y.shape), math.nan, y)
    return _restore("nanmedian", y, a, axes, (), keepdims)


def _nanquantile(name, a, q, axis, method, keepdims, weights):
    if method != "linear" or weights is not None:
        raise UnsupportedOpError(at_user_site(
            f"{name}: only method='linear' without weights is traced (the positions depend "
            "on each line's count of NaNs); for the other methods use np.quantile on data "
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
    fl = floor(virtual)
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
    """numpy.nanquantile (method "linear"): the quantile of each line's non-NaN values;
    NaN for an all-NaN line, gradient 0 at the NaNs."""
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
