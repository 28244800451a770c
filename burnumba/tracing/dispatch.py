"""numpy's protocols on traced values: which burnumba function ``np.f(x)`` and ``x.f()`` call.

As NEP 18 projects do, the numpy layer registers each implementation next to its definition::

    @implements(np.sum)
    def sum(a, axis=None, ...): ...

and ``Var.__array_ufunc__`` / ``Var.__array_function__`` look the numpy ufunc or function up
here (``apply_ufunc``, ``apply_function``). ``Var``'s ndarray methods and operators (``x.sum()``,
``x.T``, ``x @ y``, ``x[i]``) read the same tables with one dict lookup, so the trace layer
never imports the numpy layer above it.

The tables are filled once, when ``burnumba.numpy`` is imported (``import burnumba`` always
imports it, and so does importing any of its submodules), and only read afterwards.
"""
import functools
import inspect
import operator
import sys

import numpy as np

from .._errors import UnsupportedOpError, at_user_site

UFUNCS = {}          # numpy ufunc -> implementation (np.exp(x) on a traced x)
FUNCTIONS = {}       # numpy function -> implementation (np.sum(x); np.linalg.solve(a, b))
METHODS = {}         # ndarray method with no numpy function of its own -> implementation
UFUNC_KEYWORDS = {}  # ufunc -> the keyword arguments a traced call may pass (np.vecdot: axis)
ACCUMULATE = {}      # numpy ufunc -> implementation of its method ``accumulate``
REDUCE = {}          # numpy ufunc -> implementation of its method ``reduce`` (logaddexp)
                     # (np.maximum.accumulate(x) on a traced x: a scan row, Op.accumulate)
# numpy's in-place conventions (burnumba/numpy/inplace.py fills these and METHODS["__out__"],
# METHODS["__view__"]):
OUT_ARGUMENT = {}    # numpy function -> the position of its ``out`` argument
LIKE = set()         # numpy functions whose implementation takes like= (np.zeros(3, like=x):
                     # numpy passes the traced x as the protocol's self, not as an argument)
VIEWS = {}           # numpy function -> True when numpy's result is a read-only view of its
                     # first argument (diagonal, broadcast_to), False for a writable view


def implements(*funcs):
    """Register the decorated function as what the numpy functions ``funcs`` do on traced
    values (``np.max`` and ``np.amax``: one implementation, two keys); its parameters that
    numpy wants as Python ints (CONFIG) accept traced ints (``with_int_config``)."""
    def register(impl):
        impl = with_int_config(impl)
        for func in funcs:
            FUNCTIONS[func] = impl
        return impl
    return register


# Traced ints where numpy wants a Python int: axes, shifts, repeats, pad widths, sizes. A
# Python int argument of a transformed function is data (a tape input), so np.sum(x, axis=k)
# or np.roll(x, k) can receive a traced scalar. There it decides the result's shape or
# layout, so it becomes a Python int (operator.index: a guard of the tape, see
# tracing/concrete.py) before the implementation sees it. Only these parameters, and only
# traced scalars: a traced array stays what it is (the implementation's error names it).
CONFIG = frozenset((
    "axis", "axes", "axis1", "axis2", "source", "destination", "start", "shift", "repeats",
    "reps", "pad_width", "n", "k", "N", "M", "ddof", "indices_or_sections", "decimals",
    "shape", "newshape", "num", "offset", "ord"))


def _traced_scalar(v):
    return getattr(v, "_b", None) is not None and getattr(v, "shape", None) == ()


def _concrete(v):
    if _traced_scalar(v):
        return operator.index(v)
    if isinstance(v, (tuple, list)) and any(_traced_scalar(e) for e in v):
        return type(v)(_concrete(e) for e in v)
    return v


def _traced(v):
    return _traced_scalar(v) or isinstance(v, (tuple, list)) and \
        any(_traced_scalar(e) for e in v)


def with_int_config(impl):
    """``impl`` with its CONFIG parameters (not its first, the operand) made Python ints
    when they are traced scalars; ``impl`` itself when it has none."""
    try:
        params = list(inspect.signature(impl).parameters.values())
    except (TypeError, ValueError):
        return impl
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    slots = [k for k, p in enumerate(params) if k > 0 and p.name in CONFIG
             and p.kind in positional]
    names = frozenset(p.name for k, p in enumerate(params) if k > 0 and p.name in CONFIG)
    if not names:
        return impl

    @functools.wraps(impl)
    def concrete_config(*args, **kwargs):
        for k in slots:
            if k < len(args) and _traced(args[k]):
                args = args[:k] + (_concrete(args[k]),) + args[k + 1:]
        if kwargs:
            for name in names & kwargs.keys():
                if _traced(kwargs[name]):
                    kwargs[name] = _concrete(kwargs[name])
        return impl(*args, **kwargs)
    return concrete_config


def implements_ufunc(*ufuncs, keywords=()):
    """Register the decorated function for the numpy ufuncs ``ufuncs``; ``keywords``: the
    keyword arguments it takes besides the operands."""
    def register(impl):
        for ufunc in ufuncs:
            UFUNCS[ufunc] = impl
            if keywords:
                UFUNC_KEYWORDS[ufunc] = frozenset(keywords)
        return impl
    return register


def implements_reduce(*ufuncs):
    """Register the decorated function, ``f(array, axis=0, keepdims=False)``, as what
    ``ufunc.reduce`` does on a traced array for each of ``ufuncs`` (besides the ufuncs whose
    reduce is a numpy reduction: _REDUCTIONS)."""
    def register(impl):
        for ufunc in ufuncs:
            REDUCE[ufunc] = impl
        return impl
    return register


def implements_accumulate(*ufuncs):
    """Register the decorated function, ``f(array, axis=0, dtype=None)``, as what
    ``ufunc.accumulate`` does on a traced array for each of ``ufuncs``."""
    def register(impl):
        for ufunc in ufuncs:
            ACCUMULATE[ufunc] = impl
        return impl
    return register


def implements_method(name):
    """Register the decorated function as the ndarray method ``name`` of traced arrays, for
    a method numpy has no function for (``__getitem__``: indexing)."""
    def register(impl):
        METHODS[name] = impl
        return impl
    return register


def dispatched(name):
    """Whether ``np.<name>`` of a traced value reaches a burnumba implementation."""
    func = getattr(np, name, None)
    try:
        return func in FUNCTIONS or func in UFUNCS
    except TypeError:                               # an unhashable numpy attribute
        return False


def _supported(table):
    return ", ".join(sorted(f.__name__ for f in table))


# ufunc.reduce as the reduction that computes it
_REDUCTIONS = {np.add: np.sum, np.multiply: np.prod, np.maximum: np.max, np.minimum: np.min,
               np.logical_and: np.all, np.logical_or: np.any}


def apply_ufunc(ufunc, method, inputs, kwargs):
    """``Var.__array_ufunc__``: the implementation of ``ufunc`` applied to ``inputs``; an
    ``out=`` array (and ``where=``) is written as numpy would, as a functional update."""
    out = kwargs.pop("out", None)
    where = kwargs.pop("where", True)
    if method == "at":                              # np.add.at(x, idx, v): in place
        return METHODS["__at__"](ufunc, *inputs, **kwargs)
    if method == "accumulate" and ufunc in ACCUMULATE:
        result = ACCUMULATE[ufunc](*inputs, **kwargs)
        if out is None:
            return result
        return METHODS["__out__"](f"numpy.{ufunc.__name__}.accumulate", result, out, True,
                                  False)
    if method == "reduce" and ufunc in _REDUCTIONS:
        # np.add.reduce(x, axis=0) is np.sum(x, axis=0) (reduce's axis defaults to 0)
        (a,) = inputs
        kwargs.setdefault("axis", 0)
        if ufunc not in (np.add, np.multiply) and kwargs.pop("dtype", None) is not None:
            raise UnsupportedOpError(at_user_site(
                f"numpy.{ufunc.__name__}.reduce(..., dtype=...) of a traced value: drop dtype= "
                "(a tape computes in its own float dtype)"))
        if where is not True:
            kwargs["where"] = where
        return _REDUCTIONS[ufunc](a, out=out, **kwargs)
    if method == "reduce" and ufunc in REDUCE and where is True and \
            set(kwargs) <= {"axis", "keepdims"}:
        result = REDUCE[ufunc](*inputs, **kwargs)
        if out is None:
            return result
        return METHODS["__out__"](f"numpy.{ufunc.__name__}.reduce", result, out, True, False)
    if method == "outer" and (UFUNCS.get(ufunc) or _scipy_ufunc(ufunc)) is not None:
        # a[..., None, ...] op b: every element of a with every element of b
        a, b = inputs
        a = np.reshape(a, np.shape(a) + (1,) * np.ndim(b))
        return apply_ufunc(ufunc, "__call__", (a, b), {**kwargs, "out": out, "where": where})
    if method != "__call__":
        hint = ""
        if method == "reduce":
            hint = (" (reduce is supported for "
                    f"{', '.join(sorted(u.__name__ for u in (*_REDUCTIONS, *REDUCE)))}; "
                    "logaddexp's and logaddexp2's with axis= and keepdims= only)")
        if method == "accumulate":
            hint = f" (accumulate is supported for {_supported(ACCUMULATE)})"
        raise UnsupportedOpError(at_user_site(
            f"numpy.{ufunc.__name__}.{method} is not supported on traced values{hint}"))
    fn = UFUNCS.get(ufunc) or _scipy_ufunc(ufunc)
    if fn is None and _is_scipy_ufunc(ufunc):
        raise UnsupportedOpError(at_user_site(
            f"scipy.special.{ufunc.__name__} is not supported on traced values. burnumba.scipy."
            f"special covers the scipy.special ufuncs {', '.join(sorted(SCIPY_UFUNCS))}; "
            "compose it from those (or add a row to kernels/maps_special.py)"))
    if fn is None:
        raise UnsupportedOpError(at_user_site(
            f"numpy.{ufunc.__name__} is not supported on traced values. Supported ufuncs: "
            f"{_supported(UFUNCS)}; compose it from those or add a row to kernels/ops.py"))
    if kwargs and set(kwargs) - UFUNC_KEYWORDS.get(ufunc, set()):
        raise UnsupportedOpError(at_user_site(
            f"numpy.{ufunc.__name__}: keyword arguments {sorted(kwargs)} are not supported "
            "on traced values"))
    result = fn(*inputs, **kwargs)
    if out is None and where is True:
        return result
    return METHODS["__out__"](f"numpy.{ufunc.__name__}", result, out, where, True)


def apply_function(func, args, kwargs, like=None):
    """``Var.__array_function__``: the implementation of the numpy function ``func``
    (``like``: the traced value whose protocol numpy called, for the functions of LIKE)."""
    if func not in FUNCTIONS:
        # numpy's like= dispatch passes the function the module holds now: during a trace,
        # a stand-in for np.asarray / np.array (transforms/numpy_calls.py)
        func = getattr(func, "_burnumba_original", func)
    if func in LIKE:
        kwargs = {**kwargs, "like": like}
    if func not in FUNCTIONS:
        name = getattr(func, "__module__", "numpy") + "." + func.__name__
        raise UnsupportedOpError(at_user_site(
            f"{name} is not supported on traced values. Supported numpy functions: "
            f"{_supported(FUNCTIONS)}; write it with those (or with burnumba.numpy)"))
    return call(func, args, kwargs)


def call(func, args, kwargs):
    """``FUNCTIONS[func](*args, **kwargs)`` with numpy's in-place conventions: an ``out``
    array is written (a functional update of the traced array), and a result that numpy
    makes a view of its first argument is recorded as one, so that writes through either
    reach the other (``Var``'s methods call this too)."""
    fn = FUNCTIONS[func]
    k = OUT_ARGUMENT.get(func)
    if k is not None:
        if "out" in kwargs:
            out = kwargs["out"]
            kwargs = {**kwargs, "out": None}
        elif len(args) > k:
            out = args[k]
            args = args[:k] + (None,) + args[k + 1:]
        else:
            out = None
        if out is not None:
            return METHODS["__out__"](f"numpy.{func.__name__}", fn(*args, **kwargs), out,
                                      True, False)
    result = fn(*args, **kwargs)
    readonly = VIEWS.get(func)
    if readonly is not None and args:
        METHODS["__view__"](args[0], result, func, args[1:], kwargs, readonly)
    return result


# scipy.special's ufuncs, by name: looked up when a ufunc outside UFUNCS reaches a traced value
# and it is scipy.special's ufunc of that name. Keyed by name, so that registering does not
# import scipy (0.5 s): a program that calls scipy.special has imported it already.
SCIPY_UFUNCS = {}


def implements_scipy_ufunc(*names):
    """Register the decorated function for the scipy.special ufuncs ``names``."""
    def register(impl):
        for name in names:
            SCIPY_UFUNCS[name] = impl
        return impl
    return register


def _is_scipy_ufunc(ufunc):
    special = sys.modules.get("scipy.special")
    name = getattr(ufunc, "__name__", "")
    return special is not None and getattr(special, name, None) is ufunc


def _scipy_ufunc(ufunc):
    """The implementation of a scipy.special ufunc, or None."""
    special = sys.modules.get("scipy.special")
    name = getattr(ufunc, "__name__", "")
    if special is None or getattr(special, name, None) is not ufunc:
        return None
    return SCIPY_UFUNCS.get(name)


# scipy's public functions that burnumba.scipy replaces: "scipy.stats.norm.logpdf" ->
# "burnumba.scipy.stats.norm.logpdf", filled by burnumba.scipy when it is imported. A scipy
# function that does Python-level work on its argument (norm.logpdf, logsumexp, convolve,
# odeint) converts a traced value into an array, which fails: the error then names ours.
SCIPY_REPLACEMENTS = {}


def _scipy_name(frame):
    """The public name of the scipy function running in ``frame`` ("scipy.stats.norm.logpdf"
    for a distribution's method, "scipy.special.logsumexp" for a function of a private
    module)."""
    module = frame.f_globals.get("__name__", "")
    wrapped = frame.f_locals.get("f")
    if module.startswith("scipy._lib.") and callable(wrapped):
        # scipy's own decorator (linalg's batching wrapper) around the function called
        module = getattr(wrapped, "__module__", None) or module
        package = ".".join(module.split(".")[:2])
        return f"{package}.{getattr(wrapped, '__name__', frame.f_code.co_name)}"
    package = ".".join(module.split(".")[:2])
    this = frame.f_locals.get("self")
    if package == "scipy.stats" and this is not None:
        dist = getattr(this, "name", None) or type(this).__name__
        dist = getattr(getattr(this, "dist", None), "name", None) or dist
        for suffix in ("_gen", "_frozen"):
            dist = dist[:-len(suffix)] if dist.endswith(suffix) else dist
        return f"scipy.stats.{dist}.{frame.f_code.co_name}"
    return f"{package}.{frame.f_code.co_name}"


def scipy_hint():
    """A sentence naming the burnumba.scipy replacement of the scipy function on the call
    stack that received a traced value ("" when no scipy function is on it): the outermost
    scipy frame of the run of scipy / numpy frames above burnumba's."""
    frame = sys._getframe(1)
    entry = None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("scipy."):
            entry = frame
        elif not module.startswith(("burnumba.", "numpy")) and module != "burnumba":
            break
        frame = frame.f_back
    if entry is None:
        return ""
    name = _scipy_name(entry)
    ours = SCIPY_REPLACEMENTS.get(name)
    if ours is None:
        return (f"{name} does Python-level work on its arguments, which a traced value cannot "
                "go through, and burnumba.scipy has no replacement for it yet (see the "
                "supported-functions table); write it with burnumba.numpy. ")
    return (f"{name} does Python-level work on its arguments, which a traced value cannot go "
            f"through: use {ours}, with the same arguments (import "
            f"{ours.rsplit('.', 1)[0]}). ")
