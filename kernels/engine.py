"""Find, build and load the compiled kernels, and call them cheaply. No numba here.

A tape asks for the kernel of the rows it uses (``kernel(rows, tensor_rows, dtype)``:
``tensor_rows`` are the map rows it applies to tensors, whose loops must be linked; a map row
used only on scalars runs inline in the dispatcher). The kernel comes from, in order: this
process (the same rows or a superset, already loaded), the disk cache (the same, then any
superset), or a build of exactly that. Which engine builds and runs it:

* ``aot`` (the default): shared libraries compiled ahead of time into the cache folder by a
  subprocess (``_build.py``); loading one needs only ctypes, so a process whose kernels are
  cached never imports numba (less than a third of the memory, and no compile);
* ``jit``: numba cfuncs compiled in this process, without a disk cache, where no C compiler
  is found to link a library (or with ``BURNUMBA_ENGINE=jit``);
* ``python``: the generated source run by the Python interpreter, for tests and debugging
  (``BURNUMBA_ENGINE=python``, or ``NUMBA_DISABLE_JIT=1``). Very slow.

Which BLAS the products call, and with how many threads, is ``blas.py``'s policy; this
module writes its routines into each run's control block (``control_block``).

Compiles that take more than a moment are announced on the ``burnumba`` logger (a WARNING
record: shown on stderr when logging is not configured; silence it with
``logging.getLogger("burnumba").setLevel(logging.ERROR)``).
"""
import ctypes
import functools
import json
import logging
import os
import subprocess
import sys
import threading
import time

import numpy as np

from . import cache, keys, layout
from ._gen import parts
# the BLAS policy (blas.py); burnumba and the reports read these names here too
from .blas import LARGE_PRODUCT, THREADED_PRODUCT, blas, blas_threads, own_core  # noqa: F401
from .errors import KernelError
from .ops import BY_NAME, ROWS

log = logging.getLogger("burnumba")

LEAVES = frozenset(r.name for r in ROWS if r.kind == "leaf")


@functools.lru_cache(maxsize=None)
def engine_name():
    name = os.environ.get("BURNUMBA_ENGINE", "").lower()
    if not name and os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        name = "python"
    if name in ("", "aot"):
        from ._build import c_compiler            # _build imports numba only when compiling
        if c_compiler() is None:
            log.warning("burnumba: no C compiler found to link compiled kernels (set CC); "
                        "compiling in each process with numba instead (BURNUMBA_ENGINE=jit)")
            return "jit"
        return "aot"
    if name not in ("jit", "python"):
        raise KernelError(f"BURNUMBA_ENGINE={name!r}: use aot, jit or python")
    return name


# -- the control block ----------------------------------------------------------------------
def control_block(dtype, largest_product=0, user_table=None):
    """A new control block C for a run state of ``dtype``, of a tape whose largest product
    has ``largest_product`` multiply-adds (which BLAS: ``blas``) and whose users' ops have
    the callbacks in ``user_table`` (an int64 array the tape keeps alive; None: none)."""
    C = np.zeros(layout.CSIZE, np.int64)
    routines = blas(np.dtype(dtype).name, largest_product >= LARGE_PRODUCT)
    C[layout.C_GEMM] = routines.gemm
    C[layout.C_GEMV] = routines.gemv
    C[layout.C_ILP64] = routines.ilp64
    C[layout.C_LANES] = 1
    C[layout.C_BATCH_YK] = 1
    if user_table is not None:
        C[layout.C_USER] = user_table.ctypes.data
    return C


# -- callers -------------------------------------------------------------------------------
try:
    if os.environ.get("BURNUMBA_CALLER") == "ctypes":       # to test the fallback
        raise ImportError("BURNUMBA_CALLER=ctypes")
    from ._bncall import PARALLEL as _PARALLEL, Caller as _Caller, address, run_all as _run_all
    from . import _bncall as _extension
except ImportError:                  # the optional C extension was not built: use ctypes
    _Caller = _extension = None
    _PARALLEL = 0

    def address(array):
        """Where a C-contiguous array's data starts."""
        return array.ctypes.data


def run_all(callers, mode):
    """Run ``callers`` (a tuple of ``Kernel.caller``s made with ``nogil``) at once with
    ``mode``, one per thread, and return their floats: on OpenMP's threads, where the C
    extension was built with it. None where it was not (or the callers are ctypes' or the
    python engine's, or this process was forked after OpenMP's threads ran, which libgomp
    does not survive): the caller then runs them on threads of its own."""
    if _PARALLEL and all(type(c) is _Caller for c in callers):
        return _run_all(callers, mode)
    return None


def fast_entry(local, run, n_in, with_value, single):
    """The C fast path over a scalar runner ``run`` (``_bncall.Fast``: the argument check,
    this thread's caller ``local.caller`` and the result, in one call), or None with an
    extension built before it."""
    fast = getattr(_extension, "Fast", None)
    return None if fast is None else fast(local, run, n_in, with_value, single)


def has_scalar_calls():
    """Whether callers have the C scalar fast path (``value_and_grad`` of a tuple of floats)."""
    return _Caller is not None


# the kinds of guard the C check must know: burnumba/tracing/concrete.py's 0 .. LAST_KIND
GUARD_KINDS = 16


def has_guard_checks():
    """Whether the scalar fast path checks a tape's guards in its C call (``set_guards``,
    knowing every kind of guard; an extension built before it, or before the kinds it lacks,
    is not asked, and the guards are checked in Python)."""
    return (_Caller is not None and hasattr(_Caller, "set_guards")
            and getattr(_extension, "GUARD_KINDS", 3) >= GUARD_KINDS)


def has_guards_hold():
    """Whether callers check a tape's guards after any run in C (``guards_hold``)."""
    return has_guard_checks() and hasattr(_Caller, "guards_hold")


_RUN_ARGS = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]


class Kernel:
    """The compiled interpreter of a set of rows for one dtype (``tensor`` names the map rows
    whose tensor loops it has)."""

    def __init__(self, rows, tensor, dtype, engine, address=None, python=None, origin=None,
                 keep=None, jvp=False):
        self.rows = frozenset(rows)
        self.tensor = frozenset(tensor)
        self.jvp = bool(jvp)                 # whether it has the tangent sweep
        self.dtype = np.dtype(dtype)
        self.engine = engine
        self.address = address               # of run(I, F, C, mode), compiled
        self.python = python                 # run itself, for the python engine
        self.origin = origin                 # the library file, for messages
        self._keep = keep                    # what keeps the code alive (library, cfuncs)
        if address is not None and _Caller is None:
            self._ctypes = ctypes.CFUNCTYPE(ctypes.c_double, *_RUN_ARGS)(address)

    def covers(self, rows, tensor, jvp=False):
        return self.rows >= rows and self.tensor >= tensor and (self.jvp or not jvp)

    def caller(self, I, F, C, nogil=False, rows_checked=False):
        """``call(mode)``: run this kernel on (I, F, C). The arrays must be C-contiguous,
        I int32, F of the kernel's dtype, C int64, and the tape's ops the kernel's (checked
        here, once; ``rows_checked``: a caller for this I was made before, which checked
        them, and the 15 us of reading I's rows again is skipped)."""
        if not (I.dtype == np.int32 and F.dtype == self.dtype and C.dtype == np.int64
                and C.size >= layout.CSIZE
                and all(a.flags.c_contiguous for a in (I, F, C))):
            raise KernelError(f"kernel for {self.dtype} called with I {I.dtype}, F {F.dtype}, "
                              f"C {C.dtype}: the arrays do not fit its signature")
        if not rows_checked:
            rows, tensor = tape_rows(I)
            if not self.covers(rows, tensor):
                raise KernelError("this kernel was not built for every op of the tape")
        if self.python is not None:
            return functools.partial(self.python, I, F, C)
        if _Caller is not None:
            return _Caller(self.address, I, F, C, bool(nogil))
        return _CtypesCaller(self._ctypes, I, F, C)


class _CtypesCaller:
    """The Caller of ``_bncall``, through ctypes (which releases the GIL). It holds the
    arrays, so the pointers it passes stay valid."""

    __slots__ = ("fn", "arrays", "pointers")

    def __init__(self, fn, I, F, C):
        self.fn = fn
        self.arrays = (I, F, C)
        self.pointers = (I.ctypes.data, F.ctypes.data, C.ctypes.data)

    def __call__(self, mode):
        return self.fn(*self.pointers, mode)


# -- finding and building ------------------------------------------------------------------
class _Registry:
    """The kernels this process has loaded, by (rows, tensor rows, dtype). Guarded by a lock:
    threads that need the same kernel at once build it once."""

    def __init__(self):
        self.lock = threading.RLock()
        self.kernels = {}
        self.updates = {}

    def find(self, rows, tensor, dtype, jvp):
        exact = self.kernels.get((rows, tensor, dtype, jvp))
        if exact is not None:
            return exact
        supersets = [k for (_, _, d, _), k in self.kernels.items()
                     if d == dtype and k.covers(rows, tensor, jvp)]
        return min(supersets, key=lambda k: (len(k.rows), k.jvp)) if supersets else None


_REGISTRY = _Registry()


def _load_library(key, kind):
    """(ctypes library, manifest) of a cached library, or None when there is none; a
    damaged one is removed (and then rebuilt by the caller)."""
    try:
        found = cache.read_manifest(key)
    except cache.Damaged as e:
        log.warning("burnumba: %s; compiling it again", e)
        cache.discard(key)
        return None
    if found is None:
        return None
    manifest, path = found
    if manifest.get("kind") != kind:
        log.warning("burnumba: %s is not a %s library; compiling it again", path, kind)
        cache.discard(key)
        return None
    try:
        return ctypes.CDLL(path), manifest
    except OSError as e:
        log.warning("burnumba: %s cannot be loaded (%s); compiling it again", path, e)
        cache.discard(key)
        return None


def _unloadable(what):
    """The error for a library the builder made that this process cannot find under its key:
    the kernels' sources changed since the process started (the builder keyed the library
    by the new ones; nothing stale runs), or the cache folder is damaged."""
    if cache.sources_changed():
        return KernelError(f"{what} was built but cannot be loaded: the kernels' sources in "
                           f"{cache.HERE} changed since this process started, and the builder "
                           "compiled the new ones; restart the process")
    return KernelError(f"{what} was built but cannot be loaded; delete the cache folder "
                       f"{cache.folder()} and retry")


def _announce(what, dtype, rows, parts):
    """Say what is compiled, where to, and for about how long: the builder's start and
    numba's import take ~2 s, the dispatcher ~0.6 s a row (its branches and their row
    functions compile one by one: 8 rows took 6.6 s on the project's 2-core VM, 2026-12-07),
    and a tensor row's object file ~0.35 s a part it lacks; the dispatcher and the row
    objects compile in a pool of processes, one per core (``_build.serve``)."""
    from ._build import processes
    seconds = 2.0 + max(0.6 * rows, (0.6 * rows + 0.35 * parts) / processes())
    log.warning("burnumba: compiling %s for %s (once: the result is cached in %s); "
                "about %.0f s", what, dtype, cache.folder(), seconds)


def _run_builder(request, what, dtype, rows, parts):
    """Run the ahead-of-time builder in a subprocess (so this process never loads numba)."""
    _announce(what, dtype, rows, parts)
    t0 = time.perf_counter()
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [sys.executable, "-m", "burnumba.kernels._build", json.dumps(request)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=here)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise KernelError(f"compiling {what} for {dtype} failed (cache {cache.folder()}):\n"
                          f"{tail}")
    log.info("burnumba: compiled %s for %s in %.1f s", what, dtype, time.perf_counter() - t0)


def tape_rows(I):
    """(the rows a packed tape uses, the rows it needs linked functions for: its block rows
    but those written inline, and the map rows of its tensor nodes), as sets of names."""
    n = int(I[0])
    op = I[layout.H:layout.H + n]
    if n and (op.min() < 0 or op.max() >= len(ROWS)):
        raise KernelError(f"the tape holds opcodes outside 0 .. {len(ROWS) - 1}")
    off = I[layout.H + 5 * n:layout.H + 6 * n + 1]
    rows = {ROWS[k].name for k in np.unique(op)}
    maps = {ROWS[k].name for k in np.unique(op[np.diff(off) > 1])}
    tensor = {name for name in rows if BY_NAME[name].linked(maps)}
    return frozenset(rows) | LEAVES, frozenset(tensor)


def _missing_parts(tensor, dtype, jvp):
    return sum(1 for n in tensor for part in parts(BY_NAME[n], jvp)
               if not os.path.exists(cache.path("obj", keys.object_key(n, dtype, part) + ".o")))


def cached_covers(rows, tensor, dtype, jvp):
    """The keys of the kernels in the cache, built from this code, that can run a tape of
    ``rows`` (with ``tensor``'s loops, and the tangent sweep when ``jvp``), smallest first."""
    return [key for other_rows, other_tensor, other_jvp, key in sorted(
                cache.built_kernels(dtype), key=lambda t: (len(t[0]), t[2]))
            if other_rows >= rows and other_tensor >= tensor and (other_jvp or not jvp)
            and keys.current(other_rows, other_tensor, dtype, other_jvp, key)]


def _aot_kernel(rows, tensor, dtype, jvp):
    names, tensor_names = sorted(rows), sorted(tensor)
    key = keys.kernel_key(names, tensor_names, dtype, jvp)
    found = _load_library(key, "kernel")
    if found is None:
        for other_key in cached_covers(rows, tensor, dtype, jvp):
            if other_key != key:
                found = _load_library(other_key, "kernel")
                if found is not None:
                    break
    if found is None:
        what = (f"the kernel of {len(rows - LEAVES)} ops ({', '.join(sorted(rows - LEAVES))})"
                + (" with forward mode" if jvp else ""))
        _run_builder({"kernels": [[names, tensor_names, str(dtype), bool(jvp)]]}, what, dtype,
                     len(rows - LEAVES), _missing_parts(tensor, dtype, jvp))
        found = _load_library(key, "kernel")
        if found is None:
            raise _unloadable(f"the kernel {cache.path('lib', key + '.so')}")
    lib, manifest = found
    address = ctypes.cast(getattr(lib, manifest["symbol"]), ctypes.c_void_p).value
    return Kernel(manifest["rows"], manifest["tensor_rows"], dtype, "aot", address=address,
                  origin=cache.path("lib", manifest["library"]), keep=lib,
                  jvp=manifest.get("jvp", False))


def kernel(rows, tensor, dtype, jvp=False):
    """The kernel that runs tapes using ``rows`` (row names), ``tensor`` being those whose
    functions it must link (block rows, map rows applied to tensors), in ``dtype``; with the
    tangent sweep (forward mode) when ``jvp``."""
    dtype = np.dtype(dtype)
    rows = frozenset(rows) | LEAVES
    tensor = frozenset(n for n in rows if BY_NAME[n].linked(tensor))
    jvp = bool(jvp)
    k = _REGISTRY.find(rows, tensor, dtype, jvp)
    if k is not None:
        return k
    with _REGISTRY.lock:
        k = _REGISTRY.find(rows, tensor, dtype, jvp)    # another thread may have loaded it
        if k is not None:
            return k
        engine = engine_name()
        if engine == "aot":
            k = _aot_kernel(rows, tensor, dtype, jvp)
        elif engine == "jit":
            from . import _build
            _announce(f"the kernel of {len(rows - LEAVES)} ops", dtype, len(rows - LEAVES),
                      len(tensor))
            address, keep = _build.jit_kernel(tuple(sorted(rows)), tuple(sorted(tensor)),
                                              str(dtype), jvp)
            k = Kernel(rows, tensor, dtype, "jit", address=address, keep=keep, jvp=jvp)
        else:
            from . import _build
            k = Kernel(rows, tensor, dtype, "python", python=_build.python_kernel(
                tuple(sorted(rows)), tuple(sorted(tensor)), str(dtype), jvp), jvp=jvp)
        _REGISTRY.kernels[(k.rows, k.tensor, dtype, k.jvp)] = k
        return k


def update_kernels(dtype):
    """{name: function} of the optimiser kernels for ``dtype`` (see update.SIGNATURES)."""
    dtype = np.dtype(dtype)
    found = _REGISTRY.updates.get(dtype)
    if found is not None:
        return found
    with _REGISTRY.lock:
        found = _REGISTRY.updates.get(dtype)
        if found is not None:
            return found
        from . import update
        engine = engine_name()
        if engine == "python":
            functions = {name: getattr(update, name) for name in update.SIGNATURES}
        else:
            if engine == "aot":
                key = keys.update_key(dtype)
                loaded = _load_library(key, "update")
                if loaded is None:
                    _run_builder({"updates": [str(dtype)]}, "the optimiser kernels", dtype, 0,
                                 1)
                    loaded = _load_library(key, "update")
                if loaded is None:
                    raise _unloadable(f"the optimiser kernels {cache.path('lib', key)}")
                lib, manifest = loaded
                addresses = {name: ctypes.cast(getattr(lib, sym), ctypes.c_void_p).value
                             for name, sym in manifest["symbols"].items()}
                keep = lib
            else:
                from . import _build
                compiled = _build.jit_update(str(dtype))
                addresses = {name: a for name, (a, _) in compiled.items()}
                keep = compiled
            functions = {name: _ctypes_update(name, addresses[name], dtype, keep)
                         for name in update.SIGNATURES}
        _REGISTRY.updates[dtype] = functions
        return functions


def _ctypes_update(name, entry, dtype, keep):
    """A Python function calling a compiled optimiser kernel: arrays in, pointers passed."""
    from .update import SIGNATURES
    args, ret = SIGNATURES[name]
    kinds = {"F": ctypes.c_void_p, "i": ctypes.c_int64, "d": ctypes.c_double}
    fn = ctypes.CFUNCTYPE(ctypes.c_double if ret == "d" else None,
                          *[kinds[k] for k in args])(entry)
    pointer = [k == "F" for k in args]

    def call(*values, _library=keep):        # the default keeps the code loaded
        return fn(*[address(v) if p else v for v, p in zip(values, pointer)])
    call.__name__ = name
    return call


def precompile(ops=None, dtypes=("float64", "float32"), optimizers=True, forward_mode=True):
    """Build (or load) the kernel of ``ops`` (op names; default: every op) for each dtype,
    with forward mode, and the optimiser kernels: pay the compile up front, e.g. when
    building a container image. Later tapes whose ops it covers compile nothing.

    >>> import burnumba as bn
    >>> bn.precompile(["add", "multiply", "tanh"], dtypes=["float64"])   # doctest: +SKIP
    """
    names = frozenset(ops) if ops is not None else frozenset(r.name for r in ROWS)
    unknown = sorted(names - set(BY_NAME))
    if unknown:
        raise KernelError(f"precompile: unknown ops {unknown}; the ops are "
                          f"{sorted(BY_NAME)}")
    out = []
    for dtype in dtypes:
        out.append(kernel(names, names, dtype, jvp=forward_mode))
        if optimizers:
            update_kernels(dtype)
    return out
