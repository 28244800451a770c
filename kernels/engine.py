"""The compiled entry points (from the generated ``sweep.py``) and how to call them cheaply."""
from numba import types

from .sweep import run_forward, value_and_grad, vjp

__all__ = ["run_forward", "value_and_grad", "vjp", "entry", "TAPE_SIGNATURE", "SEED"]

# Every entry point takes the packed tape: I (int32) and F (float64), both C-contiguous.
TAPE_SIGNATURE = (types.int32[::1], types.float64[::1])
SEED = types.float64[::1]


def entry(dispatcher, signature=TAPE_SIGNATURE):
    """The compiled function behind ``dispatcher`` for ``signature``, without dispatch.

    Calling a numba dispatcher first resolves the argument types (about 180 ns for two
    arrays); the compiled entry point skips that. The caller must pass exactly the types of
    ``signature``: the Tape always does. Compiles, or loads from numba's disk cache, once.
    """
    if not hasattr(dispatcher, "overloads"):      # NUMBA_DISABLE_JIT=1: a plain function
        return dispatcher
    dispatcher.compile(signature)
    return dispatcher.overloads[tuple(signature)].entry_point
