"""The compiled entry points (from the generated ``sweep.py`` and ``update.py``) and how to
load and call them cheaply."""
import numpy as np
from numba import types
from numba.core.runtime import rtsys

from . import update
from .sweep import run_forward, value_and_grad, vjp

__all__ = ["run_forward", "value_and_grad", "vjp", "entry", "update_entry"]

# Every entry point takes the packed tape, I (int32) and F (float64 or float32), both
# C-contiguous; vjp also takes a seed of F's dtype. A float32 tape compiles its own
# specialisation on first use.
_FLOAT = {np.dtype(np.float64): types.float64, np.dtype(np.float32): types.float32}


def _ready(dispatcher, signature):
    """The compiled entry point of ``signature``: loaded from numba's disk cache when it is
    there, else compiled.

    numba's own cache lookup first refreshes every typing and lowering registry, which
    imports most of numba (60 MB of resident memory measured alone; skipping it saves about
    40 MB in a training process). Loading a cached overload needs only the runtime's symbols
    (the math and helper symbols are installed when numba is imported), so on a hit the
    overload is loaded here directly. Any difference in numba's internals falls back to
    numba's own path.
    """
    key = tuple(signature)
    if key not in dispatcher.overloads:
        cres = None
        try:
            ctx = dispatcher.targetctx
            rtsys.initialize(ctx)
            cres = dispatcher._cache._load_overload(signature, ctx)
            if cres is not None and not cres.objectmode:
                ctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
                dispatcher.add_overload(cres)
                dispatcher._cache_hits[signature] += 1     # as numba counts its own hits
        except Exception:       # noqa: BLE001  (numba's private API moved: use the public one)
            cres = None
        if key not in dispatcher.overloads:
            dispatcher.compile(signature)
    return dispatcher.overloads[key].entry_point


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
    return _ready(dispatcher, signature)


def update_entry(name, dtype):
    """The optimiser kernel ``update.<name>`` for float buffers of ``dtype``, without
    dispatch. Offsets and sizes are int64; the hyper-parameter array has ``dtype`` too. The
    caller must pass exactly these types."""
    dispatcher = getattr(update, name)
    if not hasattr(dispatcher, "overloads"):
        return dispatcher
    f, i = _FLOAT[np.dtype(dtype)][::1], types.int64
    signature = {
        "sum_squares": (f, i, i),
        "scale": (f, i, i, types.float64),
        "sgd": (f, i, f, i, i, f, f),
        "adam": (f, i, f, i, i, f, f, f),
    }[name]
    return _ready(dispatcher, signature)
