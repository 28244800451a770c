"""The njit entry points: one call per step, two arrays in (the packed tape), nothing else."""
from numba import njit, types

from .layout import bases
from .sweep import backward, forward


@njit(cache=True, nogil=True)
def run_forward(I, F):
    """Evaluate the whole tape."""
    forward(I, F, 0, I[0])


@njit(cache=True, nogil=True, inline="always")
def _seed(I, F, out):
    """Zero the gradients of nodes 0..out and return where out's gradient starts in F."""
    b_op, b_a0, b_a1, b_pp, b_need, b_off, b_P, b_imm, b_val, b_grad = bases(I)
    for k in range(b_grad, b_grad + I[b_off + out + 1]):
        F[k] = 0.0
    return b_grad + I[b_off + out]


@njit(cache=True, nogil=True)
def value_and_grad(I, F):
    """Sweep forward, zero the gradients, seed d out / d out = 1, sweep back.

    The output node (header ``I[1]``) has size 1. Returns its value; the gradients are left
    in F's grad region.
    """
    out = I[1]
    forward(I, F, 0, I[0])
    F[_seed(I, F, out)] = 1.0
    backward(I, F, out)
    b_op, b_a0, b_a1, b_pp, b_need, b_off, b_P, b_imm, b_val, b_grad = bases(I)
    return F[b_val + I[b_off + out]]


@njit(cache=True, nogil=True)
def vjp(I, F, seed):
    """Forward, then pull the cotangent ``seed`` (the size of the output node) back."""
    out = I[1]
    forward(I, F, 0, I[0])
    g = _seed(I, F, out)
    for j in range(seed.shape[0]):
        F[g + j] = seed[j]
    backward(I, F, out)


# Every entry point takes the packed tape: I (int32) and F (float64), both C-contiguous.
TAPE_SIGNATURE = (types.int32[::1], types.float64[::1])


def entry(dispatcher, signature=TAPE_SIGNATURE):
    """The compiled function behind ``dispatcher`` for ``signature``, without dispatch.

    Calling a numba dispatcher first resolves the argument types (about 180 ns for two
    arrays); the compiled entry point skips that. The caller must pass exactly the types of
    ``signature``: the Tape always does. Compiles, or loads from numba's disk cache, once.
    """
    dispatcher.compile(signature)
    return dispatcher.overloads[tuple(signature)].entry_point
