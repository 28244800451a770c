"""The entry points of the njit interpreter, as plain Python.

``_gen.py`` copies these functions into ``sweep.py`` under ``@njit(cache=True)``, next to the
sweeps they call. numba's disk cache checks only the file that defines a cached function, so
a cached entry point in another file would keep running stale sweeps after the op table
changed; in one generated file they are invalidated together.

Each takes the packed tape (I, F) and nothing else but arrays: one call per step.
"""
import numpy as np


def run_forward(I, F):
    """Evaluate the whole tape."""
    forward(I, F, 0, I[0])  # noqa: F821  (defined in sweep.py)


def seed_grad(I, F, out):
    """Zero the gradients of nodes 0..out; return where out's gradient starts in F."""
    b_op, b_a0, b_a1, b_pp, b_need, b_off, b_P, b_imm, b_val, b_grad, b_scratch = bases(I)  # noqa: F821
    for k in range(I[b_off + out + 1]):      # unsigned: LLVM makes it a memset (10x)
        F[np.uintp(b_grad + k)] = 0.0
    return b_grad + I[b_off + out]


def value_and_grad(I, F):
    """Sweep forward, zero the gradients, seed d out / d out = 1, sweep back.

    The output node (header ``I[1]``) has size 1. Returns its value; the gradients are left
    in F's grad region.
    """
    out = I[1]
    forward(I, F, 0, I[0])  # noqa: F821
    F[seed_grad(I, F, out)] = 1.0
    backward(I, F, out)  # noqa: F821
    b_op, b_a0, b_a1, b_pp, b_need, b_off, b_P, b_imm, b_val, b_grad, b_scratch = bases(I)  # noqa: F821
    return F[b_val + I[b_off + out]]


def vjp(I, F, seed):
    """Forward, then pull the cotangent ``seed`` (the size of the output node) back."""
    out = I[1]
    forward(I, F, 0, I[0])  # noqa: F821
    g = seed_grad(I, F, out)
    for j in range(seed.shape[0]):
        F[g + j] = seed[j]
    backward(I, F, out)  # noqa: F821
