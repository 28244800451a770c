"""The numba side of ``bn.njit_op``: a user's numba functions compiled as the C callbacks an
``njit_call`` row calls (kernels/blocks_user.py), imported at the first op's first trace.

A callback is ``int64 f(x, y, a, b, nx, ny)`` on pointers into the run's arena: ``x`` the
op's arguments, concatenated flat (``nx`` values), ``y`` its output (``ny``). The forward
writes ``y = fwd(*xs)``; the vjp adds ``vjp(*xs, y, g)`` (g at ``a``) into the arguments'
gradient at ``b``; the jvp writes ``jvp(*xs, y, *ts)`` (ts at ``a``) into ``b``. The
arguments are shown to the user's functions as arrays of their traced shapes (views, no
copy). A callback returns 0, or ``ERR_USER_RAISED`` when the user's function raised: a
numba exception cannot cross into the kernel, and the kernel reports it as a code.
"""
import numpy as np
from numba import carray, cfunc, njit, types
from numba.core import errors

from .._errors import InputError, at_user_site
from ..kernels import layout

RAISED = layout.ERR_USER_RAISED


# The arguments as arrays of their shapes: views of the flat x between offsets o[k], o[k + 1]
# (one function per arity: numba types a tuple of arrays of different ranks only when its
# length is known)
@njit
def _args1(x, o, s):
    return (x[o[0]:o[1]].reshape(s[0]),)


@njit
def _args2(x, o, s):
    return (x[o[0]:o[1]].reshape(s[0]), x[o[1]:o[2]].reshape(s[1]))


@njit
def _args3(x, o, s):
    return (x[o[0]:o[1]].reshape(s[0]), x[o[1]:o[2]].reshape(s[1]),
            x[o[2]:o[3]].reshape(s[2]))


@njit
def _add(gx, lo, hi, d):
    """gx[lo:hi] += d, flattened (d an array of any layout, or a number), of exactly the
    argument's size: anything else raises, which the callback reports."""
    flat = np.asarray(d).ravel()
    if flat.size != hi - lo:
        raise ValueError("a cotangent of the wrong size")
    for k in range(lo, hi):
        gx[k] += flat[k - lo]


@njit
def _add1(gx, o, d):
    _add(gx, o[0], o[1], d)


@njit
def _add2(gx, o, d):
    _add(gx, o[0], o[1], d[0])
    _add(gx, o[1], o[2], d[1])


@njit
def _add3(gx, o, d):
    _add(gx, o[0], o[1], d[0])
    _add(gx, o[1], o[2], d[1])
    _add(gx, o[2], o[3], d[2])


ARGS = {1: _args1, 2: _args2, 3: _args3}
ADDS = {1: _add1, 2: _add2, 3: _add3}
MAX_ARGS = max(ARGS)


def _signature(dtype):
    real = types.float64 if np.dtype(dtype) == np.float64 else types.float32
    ptr = types.CPointer(real)
    return types.int64(ptr, ptr, ptr, ptr, types.int64, types.int64)


def _forward(fn, args, o, s, sy, nin):
    def callback(x, y, a, b, nx, ny):
        try:
            out = carray(y, (ny,)).reshape(sy)
            out[...] = fn(*args(carray(x, (nin,)), o, s))
        except Exception:               # noqa: BLE001 (any exception: a status, not a crash)
            return RAISED
        return 0
    return callback


def _vjp(fn, args, add, o, s, sy, nin):
    def callback(x, y, a, b, nx, ny):
        try:
            xs = args(carray(x, (nin,)), o, s)
            every = xs + (carray(y, (ny,)).reshape(sy), carray(a, (ny,)).reshape(sy))
            add(carray(b, (nin,)), o, fn(*every))
        except Exception:               # noqa: BLE001
            return RAISED
        return 0
    return callback


def _jvp(fn, args, o, s, sy, nin):
    def callback(x, y, a, b, nx, ny):
        try:
            xs = args(carray(x, (nin,)), o, s)
            ts = args(carray(a, (nin,)), o, s)
            out = carray(b, (ny,)).reshape(sy)
            every = xs + (carray(y, (ny,)).reshape(sy),) + ts
            out[...] = fn(*every)
        except Exception:               # noqa: BLE001
            return RAISED
        return 0
    return callback


def compile_callbacks(op, shapes, out_shape, dtype):
    """The (forward, vjp, jvp) callbacks of ``op`` for arguments of ``shapes`` and an output of
    ``out_shape`` (None for a rule not given): numba ``cfunc`` objects."""
    sizes = [int(np.prod(s)) for s in shapes]
    o = tuple(int(v) for v in np.concatenate([[0], np.cumsum(sizes)]))
    s, sy, nin = tuple(tuple(x) for x in shapes), tuple(out_shape), o[-1]
    args = ARGS[len(shapes)]
    sig = _signature(dtype)
    made = []
    for what, fn, make in (("forward", op.fwd, lambda f: _forward(f, args, o, s, sy, nin)),
                           ("vjp", op.vjp_rule, lambda f: _vjp(f, args, ADDS[len(shapes)], o,
                                                               s, sy, nin)),
                           ("jvp", op.jvp_rule, lambda f: _jvp(f, args, o, s, sy, nin))):
        if fn is None:
            made.append(None)
            continue
        try:
            made.append(cfunc(sig)(make(fn)))
        except errors.NumbaError as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise InputError(at_user_site(
                f"bn.njit_op {op.name!r}: its {what} rule does not compile for arguments of "
                f"shapes {list(s)} ({np.dtype(dtype).name}) and an output of shape {sy}: "
                f"{first}. The forward takes the arguments as arrays and returns the output; "
                "the vjp takes (*args, y, g) and returns the arguments' cotangents (one array "
                "per argument: a tuple for several); the jvp takes (*args, y, *tangents) and "
                "returns the output's tangent")) from None
    return made
