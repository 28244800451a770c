"""The compiled entry points (from the generated ``sweep.py``) and how to call them cheaply."""
import numpy as np
from numba import types

from .sweep import run_forward, value_and_grad, vjp

__all__ = ["run_forward", "value_and_grad", "vjp", "entry"]

# Every entry point takes the packed tape, I (int32) and F (float64 or float32), both
# C-contiguous; vjp also takes a seed of F's dtype. A float32 tape compiles its own
# specialisation on first use.
_FLOAT = {np.dtype(np.float64): types.float64, np.dtype(np.float32): types.float32}


def entry(dispatcher, dtype, seed=False):
    """The compiled function behind ``dispatcher`` for a tape of ``dtype``, without dispatch.

    Calling a numba dispatcher first resolves the argument types (about 180 ns for two
    arrays); the compiled entry point skips that. The caller must pass exactly the types of
    the signature: the Tape always does. Compiles, or loads from numba's disk cache, once.
    """
    if not hasattr(dispatcher, "overloads"):      # NUMBA_DISABLE_JIT=1: a plain function
        return dispatcher
    f = _FLOAT[np.dtype(dtype)]
    signature = (types.int32[::1], f[::1]) + ((f[::1],) if seed else ())
    dispatcher.compile(signature)
    return dispatcher.overloads[signature].entry_point
