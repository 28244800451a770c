"""Interpolation, polynomials, integrals and differences (numpy.interp, polyval, vander,
trapezoid, gradient), and numpy's helpers that apply a Python function (piecewise,
apply_along_axis).

Each is composed from rows (comparisons, gathers, arithmetic), in the order of numpy's own
arithmetic, so values agree with numpy's and every derivative is the rows'. Numbers that
decide a shape (spacings' lengths, an axis) are static; the values may all be traced.
"""
import numpy as np

from .._errors import InputError, ShapeError, UnsupportedOpError, at_user_site
from ..tracing.dispatch import implements
from ..tracing.tracer import Var
from ._common import _builder
from .elementwise import floor, isnan, maximum, minimum, where
from .indexing import take
from .shapes import broadcast_to, concatenate, diff, flip, moveaxis, normalize_axis, reshape, stack
from .reductions import cumprod, sum as _sum


# -- interp ----------------------------------------------------------------------------------
@implements(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy.interp: the piecewise-linear interpolant of (xp, fp) at x, with ``left`` /
    ``right`` (default fp[0] / fp[-1]) outside. ``xp`` is data (increasing, as numpy asks);
    x, fp, left and right may be traced. The segment of each x is that of numpy: the last
    knot at or below x (so at a knot, the slope of the segment to its right: the derivative
    in x there is that one-sided slope), the last segment at x = xp[-1]. For traced x the
    segment is counted by comparing x with every knot (len(x) * len(xp) comparisons)."""
    b = _builder(x, xp, fp, left, right)
    if b is None:
        return np.interp(x, xp, fp, left, right, period)
    if isinstance(xp, Var) or (isinstance(xp, (list, tuple)) and _builder(xp) is not None):
        raise UnsupportedOpError(at_user_site(
            "interp: the knots xp are traced; they must be data (their derivative is not "
            "taken): pass xp as a numpy array, or write the interpolation with bnp.where"))
    if period is not None:
        raise UnsupportedOpError(at_user_site(
            "interp(..., period=...) on traced values: wrap x yourself, x % period, with "
            "xp and fp extended by one period, then call interp without period"))
    xp = np.asarray(xp, dtype=np.float64)
    fp = b.lift(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape:
        raise ShapeError(at_user_site(
            f"interp: xp and fp must be 1-D and of the same length, got shapes {xp.shape} "
            f"and {fp.shape}"))
    if xp.size == 0:
        raise ShapeError(at_user_site("interp: array of sample points is empty"))
    x = b.lift(x)
    left = fp[0] if left is None else left
    right = fp[-1] if right is None else right
    if xp.size == 1:
        y = fp[0] + x * 0.0
    else:
        # j: the segment, 0 .. m - 2; floor marks the count as integer data (an index)
        below = _sum(x[..., None] >= xp, axis=-1)
        j = minimum(maximum(floor(below - 1.0), 0.0), xp.size - 2.0)
        x0, x1 = take(xp[:-1], j), take(xp[1:], j)
        f0, f1 = take(fp[:-1], j), take(fp[1:], j)
        y = (f1 - f0) / (x1 - x0) * (x - x0) + f0       # numpy's order of operations
    y = where(x < xp[0], left, where(x > xp[-1], right, y))
    return where(isnan(x), np.nan, y)


# -- polyval ---------------------------------------------------------------------------------
@implements(np.polyval)
def polyval(p, x):
    """numpy.polyval: p[0] x^(n-1) + ... + p[n-1] by Horner's scheme, as numpy evaluates it."""
    b = _builder(p, x)
    if b is None:
        return np.polyval(p, x)
    p = p if isinstance(p, (list, tuple)) else b.lift(p)
    if not isinstance(p, (list, tuple)) and p.ndim != 1:
        raise ShapeError(at_user_site(f"polyval: p must be 1-D, got shape {p.shape}"))
    y = x * 0.0
    for k in range(len(p)):
        y = y * x + p[k]
    return y


# -- trapezoid -------------------------------------------------------------------------------
@implements(np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """numpy.trapezoid: the trapezoidal rule along ``axis``, sum(d * (y[1:] + y[:-1]) / 2),
    d = diff(x) or dx."""
    b = _builder(y, x, dx)
    if b is None:
        return np.trapezoid(y, x, dx, axis)
    y = b.lift(y)
    axis = normalize_axis(axis, y.ndim, "trapezoid")
    if x is None:
        d = dx
    else:
        x = b.lift(x) if _builder(x) is not None else np.asarray(x, dtype=np.float64)
        d = diff(x)
        if x.ndim == 1:
            d = d.reshape((-1,) + (1,) * (y.ndim - 1 - axis))
        else:
            d = diff(x, axis=axis)
    lead = (slice(None),) * axis
    upper, lower = y[lead + (slice(1, None),)], y[lead + (slice(None, -1),)]
    return _sum(d * (upper + lower) / 2.0, axis=axis)



# -- gradient --------------------------------------------------------------------------------
@implements(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """numpy.gradient: second-order central differences inside, first- or second-order
    one-sided ones at the edges (``edge_order``), with a scalar spacing or the coordinates
    per axis (``varargs``), numpy's formulas term by term. A list of arrays for several
    axes, an array for one."""
    b = _builder(f, *varargs)
    if b is None:
        return np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    f = b.lift(f)
    n = f.ndim
    axes = (tuple(range(n)) if axis is None else
            tuple(normalize_axis(a, n, "gradient") for a in np.atleast_1d(axis)))
    if edge_order not in (1, 2):
        raise InputError(at_user_site("gradient: 'edge_order' greater than 2 not supported"))
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise InputError(at_user_site(
            f"gradient: invalid number of arguments: {len(varargs)} spacings for "
            f"{len(axes)} axes"))
    outs = []
    for ax, h in zip(axes, spacing):
        g = moveaxis(f, ax, 0)
        if g.shape[0] < edge_order + 1:
            raise ShapeError(at_user_site(
                "gradient: shape of array too small to calculate a numerical gradient, at "
                "least (edge_order + 1) elements are required"))
        out = _gradient_first_axis(g, h, edge_order, b)
        outs.append(moveaxis(out, 0, ax))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _gradient_first_axis(g, h, edge_order, b):
    """np.gradient along axis 0 of ``g`` with spacing ``h`` (a scalar or the coordinates)."""
    m = g.shape[0]
    if np.ndim(h) == 0:
        inner = (g[2:] - g[:-2]) / (2.0 * h)
        if edge_order == 1:
            first = (g[1] - g[0]) / h
            last = (g[-1] - g[-2]) / h
        else:
            first = -1.5 / h * g[0] + 2.0 / h * g[1] - 0.5 / h * g[2]
            last = 0.5 / h * g[-3] - 2.0 / h * g[-2] + 1.5 / h * g[-1]
    elif not isinstance(h, Var) and _uniform(h, m):     # numpy uses the scalar formulas then
        return _gradient_first_axis(g, float(np.diff(np.asarray(h, np.float64))[0]),
                                    edge_order, b)
    else:
        x = h if isinstance(h, Var) else np.asarray(h, dtype=np.float64)
        if np.ndim(x) != 1 or x.shape[0] != m:
            raise ShapeError(at_user_site(
                "gradient: when 1d, distances must match the length of the corresponding "
                "dimension"))
        dx = diff(x) if isinstance(x, Var) else np.diff(x)
        shape = (-1,) + (1,) * (g.ndim - 1)

        def col(v):
            return v.reshape(shape) if np.ndim(v) else v
        dx1, dx2 = dx[:-1], dx[1:]
        a = col(-dx2 / (dx1 * (dx1 + dx2)))
        c = col(dx1 / (dx2 * (dx1 + dx2)))
        bb = col((dx2 - dx1) / (dx1 * dx2))
        inner = a * g[:-2] + bb * g[1:-1] + c * g[2:]
        if edge_order == 1:
            first = (g[1] - g[0]) / dx[0]
            last = (g[-1] - g[-2]) / dx[-1]
        else:
            d1, d2 = dx[0], dx[1]
            first = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)) * g[0]
                     + (d1 + d2) / (d1 * d2) * g[1] - d1 / (d2 * (d1 + d2)) * g[2])
            d1, d2 = dx[-2], dx[-1]
            last = (d2 / (d1 * (d1 + d2)) * g[-3] - (d2 + d1) / (d1 * d2) * g[-2]
                    + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * g[-1])
    parts = [b.lift(first)[None], inner, b.lift(last)[None]]
    return concatenate(parts, axis=0)


def _uniform(h, m):
    x = np.asarray(h, dtype=np.float64)
    if x.ndim != 1 or x.shape[0] != m:
        return False
    d = np.diff(x)
    return bool(np.all(d == d[0]))


# -- functions applied by numpy's helpers ----------------------------------------------------
@implements(np.piecewise)
def piecewise(x, condlist, funclist, *args, **kw):
    """numpy.piecewise: where condlist[k] holds, funclist[k] (a function of x, or a value);
    with one more function than conditions, it applies where none does; 0 elsewhere. Each
    function is traced on the whole of x and its results chosen by where (numpy calls it on
    the selected elements): the gradient at an element is that of its piece."""
    b = _builder(x, condlist)
    if b is None:
        return np.piecewise(x, condlist, funclist, *args, **kw)
    x = b.lift(x)
    if isinstance(condlist, Var) or (isinstance(condlist, np.ndarray) and condlist.dtype == bool
                                     and condlist.shape == x.shape):
        condlist = [condlist]
    condlist = list(condlist)
    n = len(condlist)
    if len(funclist) not in (n, n + 1):
        raise InputError(at_user_site(
            f"piecewise: with {n} condition(s), {n} or {n + 1} functions are expected, got "
            f"{len(funclist)}"))
    if len(funclist) == n + 1:
        none = True
        for c in condlist:
            none = np.logical_and(none, np.logical_not(c))
        condlist.append(none)

    def value(fn):
        return fn(x, *args, **kw) if callable(fn) else fn
    out = 0.0
    for cond, fn in zip(condlist, funclist):     # later conditions win, as numpy's
        out = where(cond, value(fn), out)
    return out


@implements(np.apply_along_axis)
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """numpy.apply_along_axis: ``func1d`` on each 1-D slice along ``axis``, the results
    stacked where the axis was (a Python loop over the slices, traced one by one)."""
    b = _builder(arr)
    if b is None:
        return np.apply_along_axis(func1d, axis, arr, *args, **kwargs)
    arr = b.lift(arr)
    axis = normalize_axis(axis, arr.ndim, "apply_along_axis")
    moved = moveaxis(arr, axis, -1)
    outer = moved.shape[:-1]
    flat = moved.reshape((-1, moved.shape[-1]))
    results = [b.lift(func1d(flat[k], *args, **kwargs)) for k in range(flat.shape[0])]
    if not results:
        raise ShapeError(at_user_site(
            "apply_along_axis: cannot apply_along_axis when any iteration dimensions are 0"))
    out = stack(results).reshape(outer + results[0].shape)
    # the function's own axes take the place of ``axis``, as numpy puts them
    k = results[0].ndim
    return moveaxis(out, tuple(range(len(outer), len(outer) + k)),
                    tuple(range(axis, axis + k))) if k else out


@implements(np.vander)
def vander(x, N=None, increasing=False):
    """numpy.vander: the columns x**0, x**1, ... (decreasing by default), numpy's products
    x * x * ... (a cumprod along the row, so the values are numpy's bit for bit)."""
    b = _builder(x)
    if b is None:
        return np.vander(x, N, increasing)
    x = b.lift(x)
    if x.ndim != 1:
        raise ShapeError(at_user_site(f"vander: x must be a one-dimensional array, not of "
                                      f"shape {x.shape}"))
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise ShapeError(at_user_site(f"vander: N must be non-negative, not {n}"))
    cols = [b.const(np.ones((x.shape[0], min(n, 1))))]
    if n > 1:
        cols.append(cumprod(broadcast_to(reshape(x, (-1, 1)), (x.shape[0], n - 1)), axis=1))
    out = concatenate(cols, axis=1)
    return out if increasing else flip(out, axis=1)
