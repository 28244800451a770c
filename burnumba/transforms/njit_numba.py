"""The numba side of ``bn.njit_value_and_grad`` (imported on its first use only: a program
that never asks for a handle never imports numba)."""
import ctypes

import numpy as np
from numba import njit, literal_unroll, types
from numba.core import errors
from numba.extending import overload

from .._errors import GuardError, NjitArgumentError, OutputError, at_user_site
from ..kernels import engine, layout
from ..tracing.concrete import holds

_holds = njit(holds)          # the tape's guard check, compiled into the handle

# run(I, F, C, mode) takes three pointers and a mode; pointers pass as 64-bit integers
_RUN = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                        ctypes.c_int64)


def _put(F, start, size, x):
    """Write one argument into its slice of F (replaced by the overload below in numba)."""


@overload(_put)
def _put_impl(F, start, size, x):
    if isinstance(x, types.Array):
        def impl(F, start, size, x):
            if x.size != size:
                raise NjitArgumentError("burnumba njit handle: an array argument does not "
                                        "have the size traced; see handle.describe()")
            k = start
            for v in np.nditer(x):
                F[k] = v.item()
                k += 1
        return impl
    if isinstance(x, (types.Float, types.Integer, types.Boolean)):
        def impl(F, start, size, x):
            if size != 1:
                raise NjitArgumentError("burnumba njit handle: a number was passed where "
                                        "an array was traced; see handle.describe()")
            F[start] = x
        return impl
    raise errors.TypingError(
        f"burnumba njit handle: an argument of numba type {x} cannot be passed; pass floats "
        "and numpy arrays, in the order and shapes traced")


def compile_handle(tape, starts, sizes, grad_size, at_grad, nargs, at_value=-1):
    """The handle; ``at_value`` >= 0: the tape is run forward only, and the value is read
    from F there (a tape that computes its gradient as traced ops, transforms/custom.py)."""
    I = tape.I                                # noqa: E741 (the tape's I, as in layout)
    F0 = tape.F0
    C0 = engine.control_block(tape.dtype, tape.largest_product, tape.user_table)
    run = _RUN(tape.kernel.address)
    kernel = tape.kernel                      # kept alive by the handle below
    ERR = layout.C_ERR
    VG = layout.MODE_VALUE_AND_GRAD if at_value < 0 else layout.MODE_FORWARD
    dtype = tape.dtype
    if tape.out_shape != () and at_value < 0:
        raise OutputError(at_user_site("njit_value_and_grad needs a scalar output"))

    def check_arity(args):
        """Checked while numba types a call: the count, and that grad is an array."""

    @overload(check_arity)
    def check_arity_impl(args):
        if len(args) != nargs + 1 or not isinstance(args[-1], types.Array):
            raise errors.TypingError(
                f"burnumba njit handle: called with {len(args)} arguments; it takes the "
                f"function's {nargs} argument(s) and then grad, a 1-D {dtype} array of "
                f"{grad_size} elements (see handle.describe())")
        return lambda args: None

    n_nodes = tape.n
    NODE = layout.C_NODE
    if tape.guards is None:
        guard_count = 0
        guard_nodes = guard_at = guard_kinds = np.zeros(0, np.int64)
        guard_values = np.zeros(0)
    else:
        guard_count = len(tape.guard_nodes)
        guard_nodes = tape.guard_nodes.astype(np.int64)
        guard_at = tape.n + tape.guard_pos                # F = imm[n] | val | grad
        guard_kinds = tape.guard_kinds.astype(np.int64)
        guard_values = tape.guard_values.astype(np.float64)
    sites = sorted({site for site in (tape.guards[3] if tape.guards else ()) if site})
    GUARD_MESSAGE = (
        "burnumba njit handle: a Python decision the tape was traced with (an `if`, int() "
        "or an index on a traced value) went the other way at these arguments, and a "
        "compiled handle cannot trace the new branch. The decisions: "
        + ("; ".join(sites) or "(no source lines)") + ". Write the choice as data "
        "(bnp.where, bnp.maximum), or call the function through bn.value_and_grad, which "
        "traces each branch")

    @njit(nogil=True)
    def value_and_grad(*args):
        check_arity(args)
        grad = args[-1]
        if grad.ndim != 1 or grad.size != grad_size:
            raise NjitArgumentError("burnumba njit handle: grad must be a 1-D array of "
                                    "handle.grad_size elements")
        F = F0.copy()
        C = C0.copy()
        j = 0
        for x in literal_unroll(args[:-1]):
            _put(F, starts[j], sizes[j], x)
            j += 1
        value = run(I.ctypes.data, F.ctypes.data, C.ctypes.data, VG)
        # the Python decisions the tape was traced with (none: the loop is empty); after a
        # data error, only those on the nodes computed before it
        below = C[NODE] if C[ERR] != 0 else n_nodes
        for q in range(guard_count):
            if guard_nodes[q] >= below:
                continue
            if not _holds(F[guard_at[q]], guard_kinds[q], guard_values[q]):
                raise GuardError(GUARD_MESSAGE)
        if C[ERR] != 0:
            raise NjitArgumentError("burnumba njit handle: a node reported bad data (an "
                                    "index out of range); call the function through "
                                    "bn.value_and_grad for the full message")
        for k in range(grad_size):
            grad[k] = F[at_grad + k]
        if at_value >= 0:
            value = F[at_value]
        return value

    value_and_grad.kernel = kernel
    value_and_grad.user_table = tape.user_table      # the users' ops' callbacks C0 points at
    return value_and_grad
