"""burnumba's njit code: the op table, the generated sweeps and their entry points.

This package knows nothing of ``burnumba``'s front end; it is installed as ``burnumba.kernels``.
"""
from .engine import entry, run_forward, update_entry, value_and_grad, vjp
from .layout import pack, views
from .ops import BY_NAME, OPCODE, ROWS, Op

__all__ = ["Op", "ROWS", "OPCODE", "BY_NAME", "pack", "views", "run_forward", "value_and_grad",
           "vjp", "entry", "update_entry"]
