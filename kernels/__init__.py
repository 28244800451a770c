"""burnumba's kernels: the op table, the code generated from it, and the engine that
compiles, caches and calls that code.

This package knows nothing of ``burnumba``'s front end; it is installed as
``burnumba.kernels``. Only ``_build.py`` (and what it calls) imports numba.
"""
from .engine import Kernel, KernelError, engine_name, kernel, precompile, update_kernels
from .layout import pack, views
from .ops import BY_NAME, OPCODE, ROWS, Op

__all__ = ["Op", "ROWS", "OPCODE", "BY_NAME", "pack", "views", "Kernel", "KernelError",
           "kernel", "update_kernels", "precompile", "engine_name"]
