"""Python's ``math`` functions of traced scalars inside a traced function (#30).

Scalar code written for plain Python calls ``math.exp(-x)``, ``math.sqrt(dx * dx + dy *
dy)`` or ``math.atan2(y, x)``. math's functions ask their argument for a float, which a
traced value that carries a gradient cannot give without losing it. So while a thread
traces, these names, as its own code reads them from the math module (``math.exp``), are
stand-ins (the module's class, as numpy's: module_views.py): given a traced scalar they
record numpy's function of it (``np.exp``; ``math.erf`` and ``math.lgamma`` are
burnumba.scipy.special's ``erf`` and ``gammaln``), and given plain numbers they are math's
own. A global or closure variable bound to one of them (``from math import exp``) holds the
stand-in during the trace (library_calls.py's places); one reached another way (a dict) is
math's builtin, and its error names the fix.

math raises where numpy returns a number: ``math.log(0.0)``, ``math.sqrt(-1.0)`` and
``math.asin(2.0)`` raise ValueError, ``math.exp(1000.0)`` OverflowError; numpy gives -inf,
NaN and inf. Each of math's errors is a NaN from arguments that are not NaN or an infinity
from finite ones, so each stand-in decides ``bool(np.isfinite(y))`` on its result, a guard
of the tape like any ``if``: while the results stay finite the tape replays; when one is
not, the function is traced again, and then math's own function, given the trace's values,
raises its own error where the program would, or returns what numpy's does (exp(inf) is
inf). The gradient is numpy's function's, as autograd's of ``np.exp``.

``math.isnan`` / ``isinf`` / ``isfinite`` / ``isclose`` of traced values are decisions
(guards, as ``bool(x > 0)``); ``math.fsum`` of traced values is the tape's sum of its items
(fsum's extra precision is not kept: its result can differ from math's in the last bits).
``math.floor`` / ``ceil`` / ``trunc`` go through the value's own ``__floor__`` /
``__ceil__`` / ``__trunc__`` (int() guards) and need no stand-in.
"""
import functools
import math

import numpy as np

from .._errors import ConcretizationError, at_user_site
from ..scipy import special as _special
from ..tracing.concrete import peek
from ..tracing.tracer import Var
from .module_views import class_places

# math's name: the traced function of the same numbers
_FUNCTIONS = {
    "exp": np.exp, "expm1": np.expm1, "log1p": np.log1p, "log2": np.log2,
    "log10": np.log10, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "fabs": np.fabs, "degrees": np.degrees, "radians": np.radians,
    "cbrt": np.cbrt, "exp2": np.exp2, "erf": _special.erf, "erfc": _special.erfc,
    "gamma": _special.gamma, "lgamma": _special.gammaln,
    "atan2": np.arctan2, "pow": np.power, "copysign": np.copysign, "fmod": np.fmod,
    "hypot": np.hypot, "log": None, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "isclose": None, "fsum": None,
}
# not math.prod: burnumba's own code reads it from the module for every shape it sizes, and
# each read of a stand-in's name pays the descriptor while a thread traces (a product of
# traced values is np.prod, or a loop)
_DECISIONS = ("isnan", "isinf", "isfinite")


def _scalar(name, a):
    """A traced argument as a scalar: math's functions take one number (a traced array of
    one element too, as numpy's conversion allows)."""
    if a.size != 1:
        raise ConcretizationError(at_user_site(
            f"math.{name} of a traced array of shape {a.shape}: math's functions take one "
            f"number; use numpy's functions for arrays (np.{name}(x) keeps the gradient)"))
    return a.reshape(()) if a.shape else a


def _value(a):
    """An argument as math is given it: a traced one's value now (no guard: the caller
    decided on it already)."""
    return float(peek(a, "math", "")) if isinstance(a, Var) else a


def _log(x, *base):
    y = np.log(x)
    return y / np.log(base[0]) if base else y


def _isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0):
    if bool(a == b):                          # equal infinities, as math's
        return True
    d = abs(a - b)
    return bool(d <= rel_tol * abs(b)) or bool(d <= rel_tol * abs(a)) or bool(d <= abs_tol)


def _stand_in(name, real):
    """``real`` (math.exp, ...) while a function is traced."""
    ours = _FUNCTIONS[name] or {"log": _log, "isclose": _isclose}.get(name)
    if name == "fsum":
        @functools.wraps(real)
        def fsum(items):
            """The tape's sum of the items, when one is traced."""
            items = list(items)
            if not any(isinstance(v, Var) for v in items):
                return real(items)
            out = items[0]
            for v in items[1:]:
                out = out + v
            return out
        fsum._burnumba_original = real
        return fsum

    @functools.wraps(real)
    def call(*args, **kwargs):
        if not any(isinstance(a, Var) for a in args):
            return real(*args, **kwargs)
        args = tuple(_scalar(name, a) if isinstance(a, Var) else a for a in args)
        if name == "isclose":
            return ours(*args, **kwargs)
        y = ours(*args, **kwargs)
        if name in _DECISIONS:
            return bool(y)
        if not bool(np.isfinite(y)):
            # where math raises (a NaN from numbers, an infinity from finite ones), it
            # raises here too, at the program's call; where it does not, numpy's value
            real(*[_value(a) for a in args], **kwargs)
        return y
    call._burnumba_original = real
    return call


_TABLE = {math: {name: _stand_in(name, getattr(math, name)) for name in _FUNCTIONS
                 if hasattr(math, name)}}
_PLACES = class_places(_TABLE)


def places():
    """math's module class: library_calls.py's places."""
    return _PLACES
