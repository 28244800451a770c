"""``bn.njit_op``: a user's own ``@numba.njit`` function as an op of the tape, with the vjp
and jvp the user gives, run inside the compiled loop (no Python per call).

Traced, a call appends one ``njit_call`` node (kernels/blocks_user.py): its operand is the
arguments (one node; several are concatenated flat), its parameter the op's slot in the
tape's table of callbacks. numba compiles the user's functions as C callbacks
(``njit_op_numba``), once per op and argument shapes and dtype; the tape holds their
addresses (``Tape.user_table``) and the run's control block points at it, so the kernel
takes nothing but arrays and ints, and its row is one generic kernel for every user op.

What it does not do: a derivative of a derivative (``bn.hessian``, grad of grad, an hvp)
through the op needs the derivative as traced ops, and the user's rules are compiled code:
that is refused with an error naming the op. A tape holding the op cannot be saved or
pickled (the code lives in the process that traced it).
"""
import functools
import threading

import numpy as np

from .. import numpy as bnp
from .._errors import InputError, UnsupportedOpError, at_user_site
from ..derive.graph import builder_of
from ..tracing.tracer import Var

MAX_ARGS = 3


def _is_dispatcher(fn):
    """A numba ``@njit`` function (without importing numba: its dispatchers have
    ``py_func`` and ``compile``)."""
    return callable(fn) and hasattr(fn, "py_func") and hasattr(fn, "compile")


def _slot(user_ops, entry):
    """The slot of a user's op at these shapes in a trace's list (added at its first use)."""
    for k, seen in enumerate(user_ops):
        if seen[0] is entry[0] and seen[1:] == entry[1:]:
            return k
    user_ops.append(entry)
    return len(user_ops) - 1


class njit_op:
    """A user's numba function as one op of the tape, with its derivative rules.

    ``fwd(*args) -> y`` is an ``@numba.njit`` function of 1 to 3 float arrays (or numbers);
    ``vjp(*args, y, g)`` returns the arguments' cotangents for the output's cotangent ``g``
    (an array for one argument, a tuple for several); ``jvp(*args, y, *tangents)`` returns
    the output's tangent. Both are ``@numba.njit`` functions too, and either may be given
    later with ``defvjp`` / ``defjvp`` (a decorator form), before the op's first traced
    call. ``shape``: the output's shape, a tuple or a function of the arguments' shapes;
    None: found by calling ``fwd`` on zeros.

    Traced (under bn.grad, bn.jvp, bn.vmap, ...), a call is one node; its forward, vjp and
    jvp run inside the compiled loop, with no Python per call. Called on numbers or numpy
    arrays, it is ``fwd`` itself.

    >>> import numba, numpy as np, burnumba as bn
    >>> @numba.njit
    ... def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> @numba.njit
    ... def softplus_vjp(x, y, g):
    ...     return g / (1.0 + np.exp(-x))
    >>> op = bn.njit_op(softplus, vjp=softplus_vjp)
    >>> bn.grad(lambda x: op(x).sum())(np.array([0.0, 1.0]))
    array([0.5       , 0.73105858])
    """

    def __init__(self, fwd, vjp=None, jvp=None, *, shape=None, name=None):
        self.name = name or getattr(fwd, "__name__", "njit_op")
        self.fwd = self._rule(fwd, "fwd")
        self.vjp_rule = self._rule(vjp, "vjp") if vjp is not None else None
        self.jvp_rule = self._rule(jvp, "jvp") if jvp is not None else None
        if shape is not None and not callable(shape) and not isinstance(shape, tuple):
            raise InputError(at_user_site(
                f"bn.njit_op {self.name!r}: shape= is {shape!r}; give the output's shape as a "
                "tuple, or a function of the arguments' shapes"))
        self.shape = shape
        self._lock = threading.Lock()
        self._callbacks = {}             # (shapes, out shape, dtype) -> (cfuncs, addresses)
        functools.update_wrapper(self, fwd)

    def _rule(self, fn, what):
        if not _is_dispatcher(fn):
            raise InputError(at_user_site(
                f"bn.njit_op {self.name!r}: its {what} is {fn!r}, not a numba @njit function: "
                "decorate it with @numba.njit (for a Python rule, use bn.custom_vjp)"))
        return fn

    def defvjp(self, vjp):
        """Give the vjp rule (``vjp(*args, y, g)``); returns it, so it decorates."""
        with self._lock:
            self._unused("defvjp")
            self.vjp_rule = self._rule(vjp, "vjp")
        return vjp

    def defjvp(self, jvp):
        """Give the jvp rule (``jvp(*args, y, *tangents)``); returns it, so it decorates."""
        with self._lock:
            self._unused("defjvp")
            self.jvp_rule = self._rule(jvp, "jvp")
        return jvp

    def _unused(self, what):
        """Rules are given before the op's first traced call: the tapes traced since keep
        the callbacks they were traced with, so a later rule would reach some calls only."""
        if self._callbacks:
            raise InputError(at_user_site(
                f"bn.njit_op {self.name!r}.{what}: the op was traced already, with the rules "
                "it had then; give its rules before its first traced call, or make a new "
                "bn.njit_op"))

    def __reduce__(self):
        raise UnsupportedOpError(
            f"bn.njit_op {self.name!r} cannot be pickled: its callbacks are machine code of "
            "this process. Define the op at module level and send the function that uses it")

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise InputError(at_user_site(
                f"bn.njit_op {self.name!r} takes its arguments by position only; got "
                f"{sorted(kwargs)}"))
        if not 1 <= len(args) <= MAX_ARGS:
            raise InputError(at_user_site(
                f"bn.njit_op {self.name!r}: takes 1 to {MAX_ARGS} array arguments, got "
                f"{len(args)}; pack more into one array, or close over constants in fwd"))
        if not any(isinstance(a, Var) for a in args):
            return self.fwd(*args)
        return self._trace(args)

    # -- traced --------------------------------------------------------------------------
    def _out_shape(self, shapes, dtype):
        if callable(self.shape):
            return tuple(self.shape(*shapes))
        if self.shape is not None:
            return self.shape
        try:
            return np.shape(self.fwd(*(np.zeros(s, dtype) for s in shapes)))
        except Exception as e:        # noqa: BLE001 (a numba typing error or the user's)
            raise InputError(at_user_site(
                f"bn.njit_op {self.name!r}: its output's shape is found by calling fwd on "
                f"zeros of the arguments' shapes {list(shapes)}, which raised "
                f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
                "; give shape= (a tuple, or a function of the arguments' shapes)")) from None

    def _trace(self, args):
        b = builder_of(list(args))
        xs = [b.lift(a) for a in args]
        shapes = tuple(x.shape for x in xs)
        operand = xs[0] if len(xs) == 1 else bnp.concatenate(
            [bnp.reshape(x, (x.size,)) for x in xs])
        out_shape = self._out_shape(shapes, b.dtype)
        self.callbacks(shapes, out_shape, b.dtype)     # compiled now: errors at the call
        slot = _slot(b.user_ops, (self, shapes, out_shape))
        node = b.add("njit_call", out_shape, a0=operand.node, params=[slot],
                     need=b.need[operand.node])
        return Var(b, node, out_shape)

    def callbacks(self, shapes, out_shape, dtype):
        """(the compiled callbacks, their addresses: forward, vjp, jvp, 0 for a rule not
        given) of this op for these shapes and dtype, compiled at the first call (once per
        process). A tape keeps the callbacks it calls alive."""
        key = (shapes, out_shape, np.dtype(dtype).name)
        with self._lock:
            hit = self._callbacks.get(key)
            if hit is None:
                from .njit_op_numba import compile_callbacks    # numba at the first op only
                made = compile_callbacks(self, shapes, out_shape, dtype)
                hit = (made, tuple(0 if f is None else f.address for f in made))
                self._callbacks[key] = hit
        return hit

    def evaluate(self, shapes, values):
        """The forward on flat numpy values (a trace's evaluator, for a Python decision)."""
        xs, k = [], 0
        for s in shapes:
            n = int(np.prod(s))
            xs.append(values[k:k + n].reshape(s))
            k += n
        return np.ravel(np.asarray(self.fwd(*xs), dtype=values.dtype))

    def __repr__(self):
        return f"bn.njit_op({self.name})"
