"""``bn.profile``: where a function's time goes, node by node, with the user's source lines.

``f`` is retraced with its source lines kept (``Tape.sites``, as under ``debug_nans``), then
timed by ``burnumba.ir.profile`` (the stepped runs; its docstring says how the times are
measured and what they include).
"""
import os
import sys

import linecache

from .._errors import InputError, OutputError, user_site
from ..ir.profile import REPEATS, _check_options, run_profile
from ..ir.tape import Tape
from ..tracing.pytree import flatten
from ..tracing.tracer import Var
from ..transforms import custom
from ..transforms.core import _norm_argnums, _norm_static, _positive, trace_once

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # burnumba/
_PUBLIC = os.path.join(_ROOT, "train")          # nn, optim, ...: the layers users call


# -- tracing with source lines --------------------------------------------------------------
class _Sites(list):
    """The tape's side table of source lines (``Builder.sites``, one entry per node, as
    under debug_nans). When a node was made in one of burnumba's public modules (a layer of
    ``burnumba.nn``), its entry names that line first, then the user's line that called it:
    the user's line alone would be the model's call, the same for every node of a model.
    """

    def append(self, site):
        frame = sys._getframe(1)
        while frame is not None:
            path = os.path.abspath(frame.f_code.co_filename)
            name = os.path.basename(path)
            if os.path.dirname(path) == _PUBLIC and not name.startswith("_"):
                code = linecache.getline(path, frame.f_lineno).strip()
                site = (f"{path}:{frame.f_lineno} ({frame.f_code.co_name}): {code}  "
                        f"<- {site}")
                break
            if not path.startswith(_ROOT):
                break
            frame = frame.f_back
        super().append(site)


def _builder_of(traced_args):
    for a in traced_args:
        for leaf in flatten(a)[0]:
            if isinstance(leaf, Var):
                return leaf._b
    return None


def _trace_with_sites(f, args, argnums, static, single, need_scalar):
    """(tape, signature) of ``f`` on ``args``, its nodes' source lines kept."""
    call_site = user_site()

    def with_sites(*traced):
        b = _builder_of(traced)
        if b is not None and b.sites is None:
            # the input nodes are made before f runs: they get the line of bn.profile
            b.sites = _Sites([call_site] * b.n)
        return f(*traced)

    try:
        tape, sig = trace_once("bn.profile", with_sites, args, {}, argnums, static,
                               need_scalar, single)
    except OutputError as e:
        if not need_scalar:
            raise
        raise OutputError(f"bn.profile: {e}\n  (bn.profile times the value and gradient of a "
                          "scalar loss; for any other output, profile the forward sweep "
                          "alone with mode='forward')") from None
    if tape.sites is not None:
        tape.sites = list(tape.sites)          # a plain list, as a traced tape's
    return tape, sig




def _check_function(f):
    if isinstance(f, Tape):
        raise InputError("bn.profile: f is a Tape; call its method instead: "
                         "tape.profile(*args)")
    if not callable(f):
        raise InputError(f"bn.profile: f must be the function to profile (a callable, e.g. "
                         f"a loss of (params, batch)), got {type(f).__name__}")
    if getattr(f, "_transformed", None) is not None or hasattr(f, "tapes"):
        raise InputError(
            f"bn.profile: f ({getattr(f, '__name__', type(f).__name__)}) is already a "
            "burnumba transformation (bn.grad, bn.value_and_grad, bn.jacobian, ...); pass the "
            "plain function: bn.profile(loss, *args) profiles its value and gradient")


def profile(f, *args, argnums=0, static_argnums=(), mode="value_and_grad", repeats=REPEATS):
    """Time ``f``'s tape node by node: where a step's time goes, and which line made it.

    ``f`` is traced on ``args`` (with its source lines kept), then run ``repeats`` times
    stepping the compiled kernel one node at a time, forward then backward, each step timed
    (medians; an empty step's cost subtracted). ``mode="value_and_grad"`` (a scalar loss,
    gradient with respect to ``argnums``, as ``bn.value_and_grad``) or ``"forward"``. Returns
    a ``Profile``: print it for the tables by op and by node, or use ``.by_op()``,
    ``.by_node()``, ``.total_s`` (stepped) and ``.measured_s`` (an unstepped run). Keyword
    arguments of ``f``: bind them with ``functools.partial``.

    >>> import burnumba as bn, numpy as np
    >>> p = bn.profile(lambda w, x: np.sum(np.tanh(x @ w) ** 2), np.ones((64, 64)),
    ...                np.ones((32, 64)))
    >>> p.by_op()[0].op in ("matmul", "tanh", "powi", "square", "sum")
    True
    """
    _check_function(f)
    _check_options(mode, repeats)
    argnums_t, single = _norm_argnums(argnums)
    argnums_t = _positive(argnums_t, len(args))
    if not args or any(not 0 <= k < len(args) for k in argnums_t):
        raise InputError(f"bn.profile: argnums={argnums!r} but f got {len(args)} "
                         "arguments: pass f's arguments after it, bn.profile(f, params, x)")
    static = _positive(_norm_static(static_argnums, argnums_t), len(args))
    tape, sig = _trace_with_sites(f, args, argnums_t, static, single,
                                  need_scalar=mode == "value_and_grad")
    if tape.custom and mode == "value_and_grad":
        # a user's rule in it: its value and gradient traced as ops (with source lines)
        tape.by_ops = _trace_with_sites(custom.value_and_grads(f, argnums_t, False), args,
                                        argnums_t, static, single, need_scalar=False)[0]
        tape.by_ops.grads_in_output = True
    name = getattr(f, "__qualname__", None) or type(f).__name__
    if getattr(f, "__self__", None) is not None and hasattr(f, "__name__"):
        name = f"{type(f.__self__).__name__}.{f.__name__}"       # a model's method
    return run_profile(tape, sig, argnums_t, single, mode, repeats, name)


