"""Traced ints given where numpy wants a Python int: axes, shifts, repeats, pad widths,
sizes. A Python int argument of a transformed function is data (a tape input), so
``np.sum(x, axis=k)`` or ``np.roll(x, k)`` can receive a traced scalar. There it decides the
result's shape or layout, so it becomes a Python int (``operator.index``: a guard of the
tape, tracing/concrete.py) before the implementation sees it. Only the parameters named
here are converted, and only traced scalars (a traced array stays what it is, and the
implementation's own error names it)."""
import functools
import inspect
import operator

from ..tracing.dispatch import FUNCTIONS
from ..tracing.tracer import Var

CONFIG = frozenset((
    "axis", "axes", "axis1", "axis2", "source", "destination", "start", "shift", "repeats",
    "reps", "pad_width", "n", "k", "N", "M", "ddof", "indices_or_sections", "decimals",
    "shape", "newshape", "num", "offset", "ord"))


def _concrete(v):
    if isinstance(v, Var):
        return operator.index(v) if v.shape == () else v
    if isinstance(v, (tuple, list)) and any(isinstance(e, Var) for e in v):
        return type(v)(_concrete(e) for e in v)
    return v


def _traced(v):
    return isinstance(v, Var) or isinstance(v, (tuple, list)) and \
        any(isinstance(e, Var) for e in v)


def with_int_config(impl):
    """``impl`` with its CONFIG parameters made Python ints when traced scalars."""
    try:
        params = list(inspect.signature(impl).parameters.values())
    except (TypeError, ValueError):
        return impl
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    slots = [(k, p.name) for k, p in enumerate(params)
             if p.name in CONFIG and p.kind in positional]
    names = frozenset(p.name for p in params if p.name in CONFIG)
    if not names:
        return impl
    # the first parameter is the array operand: a traced one is never converted
    slots = [(k, name) for k, name in slots if k > 0]

    @functools.wraps(impl)
    def concrete_config(*args, **kwargs):
        for k, _ in slots:
            if k < len(args) and _traced(args[k]):
                args = args[:k] + (_concrete(args[k]),) + args[k + 1:]
        if kwargs:
            for name in names & kwargs.keys():
                if _traced(kwargs[name]):
                    kwargs[name] = _concrete(kwargs[name])
        return impl(*args, **kwargs)
    return concrete_config


def register():
    """Wrap every registered numpy function that has such parameters (once, on import)."""
    wrapped = {}
    for func, impl in list(FUNCTIONS.items()):
        if impl not in wrapped:
            wrapped[impl] = with_int_config(impl)
        FUNCTIONS[func] = wrapped[impl]
