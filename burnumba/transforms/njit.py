"""``bn.njit_value_and_grad``: a traced gradient that the user's own ``@numba.njit`` code calls.

The handle is a numba dispatcher, so a numba function may call it (as a global, or passed as
an argument) with no Python in the loop. Calling convention, in numba or in Python::

    value = h(*args, grad)

``args`` are the function's arguments with the example's shapes (arrays, or floats for
scalar arguments); ``grad`` is a 1-D array of the tape's dtype and ``h.grad_size`` elements,
filled with the gradients of the differentiated arguments (``argnums``), flattened in
row-major order and concatenated in argnums order. The value is returned as a float.

Each call works in memory of its own (a copy of the tape's ``F0`` and a control block), so
a handle may be called from many threads or ``prange`` iterations at once. The tape (``I``)
and the kernel's address are constants of the compiled handle, which is why a handle is
compiled in the process that made it and not cached on disk.
"""
import numpy as np

from .core import _norm_argnums, _positive, _trace, trace_once
from .custom import value_and_grads
from .._errors import InputError, RandomSourceError, at_user_site


def njit_value_and_grad(f, *example_args, argnums=0):
    """Trace ``f`` on ``example_args`` and return a numba-callable ``h`` with
    ``value = h(*args, grad)``: the value of ``f(*args)``, with the gradient with respect
    to ``argnums`` written into the 1-D array ``grad`` (``h.grad_size`` elements).

    >>> import numba, numpy as np, burnumba as bn
    >>> h = bn.njit_value_and_grad(lambda x: np.sum(x ** 2), np.zeros(3))
    >>> @numba.njit
    ... def descend(x, steps):
    ...     g = np.empty(3)
    ...     for _ in range(steps):
    ...         h(x, g)
    ...         x -= 0.25 * g
    ...     return x
    >>> descend(np.ones(3), 10)
    array([0.00097656, 0.00097656, 0.00097656])
    """
    argnums_t, _ = _norm_argnums(argnums)
    nargs = len(example_args)
    argnums_t = _positive(argnums_t, nargs)
    for k, a in enumerate(example_args):
        if not (isinstance(a, (float, int, np.number)) or (
                isinstance(a, np.ndarray) and a.dtype.kind in "biuf")):
            raise InputError(at_user_site(
                f"njit_value_and_grad: example argument {k} is a {type(a).__name__}: a "
                "numba handle takes floats and numpy arrays (no dicts, lists or tuples); "
                "pass the leaves as separate arguments"))
    if any(not 0 <= k < nargs for k in argnums_t):
        raise InputError(at_user_site(
            f"njit_value_and_grad: argnums {argnums} out of range for {nargs} arguments"))
    tape, sig = trace_once("bn.njit_value_and_grad", f, example_args, {}, argnums_t,
                           need_scalar=True)
    if tape.draws:
        raise RandomSourceError(at_user_site(
            "njit_value_and_grad: the function draws random numbers (from "
            f"{tape.draws[0].source.label}), and a compiled handle cannot call Python's "
            "generators on each call. Make the noise an argument of the function and draw it "
            "in your numba code (np.random.standard_normal works inside @numba.njit)"))
    custom_rule = tape.custom
    if custom_rule:     # a user's derivative rule in it: value and gradient traced as ops
        tape = _trace(value_and_grads(f, argnums_t, False), example_args, {}, argnums_t,
                      False, sig, False)
    if tape.kernel.address is None:
        raise InputError(at_user_site(
            "njit_value_and_grad needs a compiled kernel; this process runs the "
            f"{tape.kernel.engine!r} engine (BURNUMBA_ENGINE): unset it"))
    # slot j holds argnums[0], argnums[1], ..., then the other arguments in order
    order = list(argnums_t) + [k for k in range(nargs) if k not in argnums_t]
    slot_of = {k: j for j, k in enumerate(order)}
    n = tape.n
    starts = np.array([n + tape.in_slots[slot_of[k]][0] for k in range(nargs)], np.int64)
    sizes = np.array([tape.in_slots[slot_of[k]][1] for k in range(nargs)], np.int64)
    grad_size = tape.n_diff_elems
    at_grad = n + int(tape.off[-1])                 # F = imm[n] | val | grad
    at_value = -1                                   # the kernel returns the value
    if custom_rule:                   # the output node holds the value, then the gradient
        at_value = n + int(tape.off[tape.out])
        at_grad = at_value + 1
    from .njit_numba import compile_handle       # imports numba: only when a handle is made
    handle = compile_handle(tape, starts, sizes, grad_size, at_grad, nargs, at_value)
    handle.tape = tape
    handle.grad_size = grad_size
    handle.dtype = tape.dtype
    shapes = [np.shape(a) for a in example_args]
    described = ", ".join(f"arg{k}: {s or 'float'}" for k, s in enumerate(shapes))
    handle.describe = lambda: (
        f"h({described}, "
        f"grad: {tape.dtype}[{grad_size}]) -> value (gradient w.r.t. argnums {argnums_t})")
    return handle


