"""What every area of ``burnumba.numpy`` uses: the trace among a function's arguments, and
numpy's argument conventions (``out=``, ``dtype=``, an argument not given)."""
import importlib

import numpy as np

from .._errors import InplaceError, at_user_site
from ..tracing.tracer import Var, cast_check


_NOVALUE = object()        # an argument not given (numpy's own default then applies)


def namesake(module, target):
    """A module ``__getattr__`` that hands out ``target``'s own object for a public name the
    module does not define, so that ``import burnumba.numpy as np`` (or a burnumba.scipy
    module) can replace ``import numpy as np`` or ``autograd.numpy`` in a whole program:
    np.pi, np.float64, np.random, np.unique are numpy's. A numpy or scipy function given a
    traced value comes back to burnumba through ``__array_function__`` / ``__array_ufunc__`` /
    ``__array__``, so one burnumba cannot trace raises the error that names it and the fix."""
    def __getattr__(name):
        if not name.startswith("_"):
            try:
                return getattr(importlib.import_module(target), name)
            except AttributeError:
                pass
        raise AttributeError(f"module {module!r} has no attribute {name!r} (nor has {target})")
    return __getattr__


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


def _float_only(name, dtype, b):
    """numpy's ``dtype=`` argument, as the reductions take it (``cast_check``: another float
    dtype warns and computes in the tape's; integer, boolean and complex are errors)."""
    if dtype is not None:
        cast_check(f"{name}(..., dtype={np.dtype(dtype)})", dtype, b.dtype)
