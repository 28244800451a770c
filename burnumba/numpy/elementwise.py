"""Elementwise functions: numpy's ufuncs, their aliases, and the elementwise functions numpy
composes (clip, where, select, round, isclose, ...).

Every elementwise row of the op table with a numpy ufunc of the same name is a function here,
made by the loop over ``kernels.ROWS`` below, and ``np.<name>`` on a traced value dispatches to
it: adding such a row to kernels/ops.py is all it takes. (A linter cannot see those names:
pyproject.toml turns off F821 for this module.) The rest are numpy 2's alias names (the same
ufunc objects), the ufuncs that are compositions (deg2rad is a multiply by the constant numpy
multiplies by, so the values agree bit for bit), the two-output ufuncs (modf, divmod, frexp)
and numpy functions composed from rows. Rounding (round, rint, trunc, floor_divide, fix) and
the predicates (isnan, isclose, ...) have gradient 0.
"""
import math

import numpy as np

from .._errors import (InplaceError, InputError, ShapeError, UnsupportedOpError,
                       at_user_site)
from ..kernels import ROWS
from ..tracing.dispatch import implements, implements_method, implements_ufunc
from ..tracing.tracer import Var, broadcast_to as _expand, is_mask, power as _power, tiles
from ._common import _NOVALUE, _builder, _lift, _no_out


def _elementwise(name, npfunc):
    def f(*xs):
        b = _builder(*xs)
        return npfunc(*xs) if b is None else b.map(name, *xs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}``, as numpy.{npfunc.__name__}, on traced values too."
    return f


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


# One function per elementwise row that has a numpy ufunc of its name (the module's
# docstring); power has its own function below (it picks among several rows).
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
    return x.copy() if isinstance(x, Var) else np.positive(x)     # a new array


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
def where(condition, x=_NOVALUE, y=_NOVALUE):
    """Elementwise ``x if condition else y``; the gradient flows into the chosen branch only.
    (``np.where(condition)`` alone is np.nonzero.)"""
    if x is _NOVALUE or y is _NOVALUE:
        if x is not y:
            raise InputError(at_user_site("where: either both or neither of x and y should "
                                          "be given (as numpy)"))
        return np.nonzero(condition)        # numpy's one-argument where (decided: guards)
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


# the loop's functions under names a linter sees (used here and by the modules above)
_isnan, _isfinite, _not_equal = (globals()[n] for n in ("isnan", "isfinite", "not_equal"))
_logical_and, _logical_or = globals()["logical_and"], globals()["logical_or"]
_trunc, _fmod, _floor_divide = (globals()[n] for n in ("trunc", "fmod", "floor_divide"))
_copysign, _remainder = globals()["copysign"], globals()["remainder"]
_arccos, _arcsin, _arctan = (globals()[n] for n in ("arccos", "arcsin", "arctan"))
_arccosh, _arcsinh, _arctanh = (globals()[n] for n in ("arccosh", "arcsinh", "arctanh"))
# numpy 2's alias names (the same ufunc objects)
acos, asin, atan, atan2 = _arccos, _arcsin, _arctan, globals()["arctan2"]
acosh, asinh, atanh = _arccosh, _arcsinh, _arctanh
# np.pow is np.power; float_power is power in the tape's dtype (numpy's float64 in float64)
pow = float_power = power
fabs = implements_ufunc(np.fabs)(absolute)


@implements_ufunc(np.conjugate)
def conjugate(x):
    """numpy.conjugate: a real value is its own conjugate."""
    return x.copy() if isinstance(x, Var) else np.conjugate(x)    # a new array


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


@implements_method("round")           # x.round(decimals), the method
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
    """numpy.allclose: a Python bool, as numpy's; of a traced value, bool() of the traced
    all(isclose(a, b)), which is a decision of the trace (a guard: another outcome traces
    another variant, tracing/decisions.py)."""
    if _builder(a, b, rtol, atol) is None:
        return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return bool(np.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


@implements(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    """numpy.array_equal: False for different shapes, else bool() of the traced all(a1 == a2)
    (NaNs equal with equal_nan), a decision of the trace as allclose's."""
    if _builder(a1, a2) is None:
        return np.array_equal(a1, a2, equal_nan=equal_nan)
    if np.shape(a1) != np.shape(a2):
        return False
    same = equal(a1, a2)
    if equal_nan:
        same = _logical_or(same, _logical_and(_isnan(a1), _isnan(a2)))
    return bool(np.all(same))


@implements(np.array_equiv)
def array_equiv(a1, a2):
    """numpy.array_equiv: False when the shapes do not broadcast, else bool() of the traced
    all(a1 == a2), a decision of the trace."""
    if _builder(a1, a2) is None:
        return np.array_equiv(a1, a2)
    try:
        np.broadcast_shapes(np.shape(a1), np.shape(a2))
    except ValueError:
        return False
    return bool(np.all(equal(a1, a2)))


@implements(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """numpy.nan_to_num: NaN -> ``nan``, +inf -> ``posinf`` (the dtype's largest finite value
    by default), -inf -> ``neginf`` (its most negative); gradient 1 where x is finite and 0
    where it was replaced."""
    if not isinstance(x, Var):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    if not copy:
        raise InplaceError(at_user_site(
            "nan_to_num(x, copy=False) writes into x in place; a traced value is replaced "
            "functionally: drop copy=False and use the returned array"))
    big = np.finfo(x._b.dtype).max
    top = big if posinf is None else posinf
    bottom = -big if neginf is None else neginf
    out = where(_isnan(x), nan, x)
    return where(equal(x, math.inf), top, where(equal(x, -math.inf), bottom, out))


@implements(np.sinc)
def sinc(x):
    """numpy.sinc, numpy's formula: y = pi * where(x == 0, 1e-20, x); sin(y) / y (1 at 0,
    gradient 0 there, as the derivative of sinc is)."""
    if not isinstance(x, Var):
        return np.sinc(x)
    y = math.pi * where(equal(x, 0.0), 1.0e-20, x)
    return globals()["sin"](y) / y


@implements(np.fix)
def fix(x, out=None):
    """numpy.fix: round toward zero (trunc, the same values and signed zeros); gradient 0."""
    if not isinstance(x, Var):
        return np.fix(x, out)
    _no_out("fix", out)
    return _trunc(x)
