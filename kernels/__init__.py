"""burnumba's kernels: the op table, the code generated from it, and the engine that
compiles, caches and calls that code.

This package knows nothing of ``burnumba``'s front end; it is installed as
``burnumba.kernels``. Only ``_native.py``, ``_build.py`` inside the functions that compile,
and ``numba_cache.py`` (which only burnumba's own numba functions import) import numba: a
process that finds its kernels compiled never loads it.

Its modules are layered; each imports only from the layers below its own, function-local
imports included (tests/test_layers_kernels.py checks it):

    __init__      this package's names
    engine        find, build and load kernels, call them; each run's control block
    _build        compile with numba (ahead of time, or in-process) and link
    keys _native  what each artifact is built from and its cache key; compiled primitives
    _gen reference                the kernels' source from the table; the sweeps in Python
    ops           the op table: the rows in opcode order
    maps blocks_* the rows by kind: elementwise ones, and each block family
    row templates what a row holds; block statements several families share
    rules blas    rules read back as code; which BLAS the products call
    numba_cache   njit for burnumba's own numba functions, cached in the cache folder
    errors layout cache update _prims ieee_cases _bncall     (import nothing of kernels/)
"""
from .engine import Kernel, KernelError, engine_name, kernel, precompile, update_kernels
from .layout import pack, views
from .ops import BY_NAME, OPCODE, ROWS, Op

__all__ = ["Op", "ROWS", "OPCODE", "BY_NAME", "pack", "views", "Kernel", "KernelError",
           "kernel", "update_kernels", "precompile", "engine_name"]
