"""numpy's functions that convert their arguments before a traced value is asked (#30).

Two kinds of numpy call never reach burnumba through numpy's protocols:

* ``np.asarray(x, dtype=float)`` (the first line of many numpy functions, scipy's examples
  among them), ``np.array(parts, dtype=np.float64)`` and ``np.fromiter(gen, float)``:
  numpy's compiled constructors ask every element for a number when given a dtype;
* ``np.sum([a, b])``, ``np.mean([f(v) for v in x])``, ``np.polyval([a, b, c], t)``,
  ``np.linalg.norm([dx, dy])``: numpy's dispatch looks only at the argument itself, a list,
  and converts it, asking each traced element for numbers.

So while a function is traced these numpy functions (numpy's module attributes, and names a
function binds to them: ``from numpy import asarray``; placed by library_calls.py) are
stand-ins. A constructor called with a float dtype on traced values goes to
burnumba.numpy's asarray (the tape's float dtype; another float dtype warns); a function of
_LIST_FUNCTIONS given lists or tuples holding traced values gets them stacked into traced
arrays and goes to burnumba.numpy's implementation. Every other call goes to numpy's own,
with the same arguments: no dtype (``np.asarray(x)`` keeps its documented result, an object
array of traced scalars), an integer or object dtype, plain values, and burnumba's own
calls. The module itself stays numpy (``xp is np`` holds); a thread that calls these
functions meanwhile gets numpy's result through the stand-in (a type test and a call more).
"""
import functools
import itertools
import sys

import numpy as np

from .. import numpy as _bnp
from ..tracing.dispatch import FUNCTIONS
from ..tracing.tracer import Var

_CONSTRUCTORS = ("asarray", "array", "asanyarray", "ascontiguousarray")
# functions a program applies to Python lists of traced values (np.sum([f(v) for v in x]),
# np.polyval([a, b, c], t), np.outer([dx, dy], u)): their list arguments are stacked
_LIST_FUNCTIONS = ("sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var",
                   "average", "median", "cumsum", "cumprod", "ptp", "diff", "clip", "sort",
                   "outer", "inner", "cross", "convolve", "trapezoid", "polyval", "interp",
                   "maximum", "minimum")
_LINALG_LIST_FUNCTIONS = ("norm", "det", "inv", "solve", "slogdet", "cholesky")


def _holds_traced(a, depth=0):
    """Whether ``a`` is a traced value or a (nested) list, tuple or object array of them."""
    if isinstance(a, Var):
        return True
    if depth < 8 and isinstance(a, (list, tuple)):
        return any(_holds_traced(x, depth + 1) for x in a)
    if isinstance(a, np.ndarray) and a.dtype == object and a.size:
        return any(isinstance(x, Var) for x in a.flat)
    return False


def _float_kind(dtype):
    """Whether ``dtype`` is a float dtype (an object, integer or boolean one stays numpy's:
    an object array of traced values, integer data numpy refuses to guess)."""
    try:
        return np.dtype(dtype).kind == "f"
    except TypeError:
        return False


def _from_burnumba(depth=2):
    """Whether the stand-in's caller is burnumba's own code (which builds from numbers, and
    calls burnumba.numpy for traced values): a look at a module name, not at a list."""
    return sys._getframe(depth).f_globals.get("__name__", "").startswith("burnumba.")


def _constructor(real):
    """``real`` (np.asarray, ...) while a function is traced."""
    @functools.wraps(real)
    def call(a, dtype=None, *args, **kwargs):
        if dtype is not None and (type(a) is not np.ndarray or a.dtype == object) and \
                not _from_burnumba() and _float_kind(dtype) and _holds_traced(a):
            if isinstance(a, np.ndarray):            # numpy's object array of traced values
                a = a.tolist()
            return _bnp.asarray(a, dtype=dtype)
        return real(a, dtype, *args, **kwargs)
    call._burnumba_original = real
    return call


def _fromiter(real):
    """np.fromiter while a function is traced: an iterable yielding traced values, of a
    float dtype, is burnumba.numpy's asarray of its items; any other numpy's own (fed the
    items when they were read here)."""
    @functools.wraps(real)
    def call(iterable, dtype, count=-1, **kwargs):
        if _from_burnumba() or not _float_kind(dtype):
            return real(iterable, dtype, count, **kwargs)
        items = list(iterable) if count < 0 else list(itertools.islice(iterable, count))
        if _holds_traced(items):
            if len(items) < count:
                raise ValueError(f"iterator too short: Expected {count} but iterator had "
                                 f"only {len(items)} items.")
            return _bnp.asarray(items, dtype=dtype)
        return real(items, dtype, count, **kwargs)
    call._burnumba_original = real
    return call


def _lists(real):
    """``real`` (np.sum, np.linalg.det, ...) while a function is traced: its positional
    arguments that are lists or tuples holding traced values are stacked into traced arrays
    (burnumba.numpy's asarray), and the call goes to burnumba.numpy's implementation."""
    mine = FUNCTIONS[real]

    @functools.wraps(real)
    def call(*args, **kwargs):
        for a in args:
            if type(a) in (list, tuple) and _holds_traced(a) and not _from_burnumba():
                return mine(*[_bnp.asarray(v) if type(v) in (list, tuple) and _holds_traced(v)
                              else v for v in args], **kwargs)
        return real(*args, **kwargs)
    call._burnumba_original = real
    return call


def _stand_ins():
    """(module dict, name, numpy's function, its stand-in), made when burnumba is imported,
    before any trace could have put a stand-in in numpy."""
    out = [(np.__dict__, name, getattr(np, name), _constructor(getattr(np, name)))
           for name in _CONSTRUCTORS]
    out.append((np.__dict__, "fromiter", np.fromiter, _fromiter(np.fromiter)))
    for module, names in ((np, _LIST_FUNCTIONS), (np.linalg, _LINALG_LIST_FUNCTIONS)):
        out += [(module.__dict__, name, getattr(module, name), _lists(getattr(module, name)))
                for name in names if getattr(module, name, None) in FUNCTIONS]
    return tuple(out)


_STAND_INS = _stand_ins()
_BY_ID = {id(real): (real, stand_in) for _, _, real, stand_in in _STAND_INS}


def by_id():
    """id(numpy function) -> (the function, its stand-in): for names bound to them."""
    return _BY_ID


def places():
    """numpy's module attributes that get stand-ins, as library_calls' places (always: a
    function may reach numpy by any name, or import it inside)."""
    return [(where, name, real, stand_in) for where, name, real, stand_in in _STAND_INS
            if where.get(name) is real]
