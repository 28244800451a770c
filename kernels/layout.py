"""How a tape's columns are packed into two flat arrays.

The njit entry points take a tape as two arrays, so that a call crosses into numba with few
arguments (each array argument costs about 50 ns of dispatch):

``I`` (int32): ``n out | op[n] a0[n] a1[n] pp[n] need[n] off[n+1] P[...]``
``F`` (float64 or float32): ``imm[n] val[V] grad[V] scratch[S]`` with ``V = off[n]``

The two-int header holds the node count and the output node.

Node ``i`` owns ``val[off[i]:off[i+1]]`` and the same slice of ``grad``; a scalar node owns a
slice of length 1. ``a0`` / ``a1`` are operand node indices (-1 for none), ``pp`` is where the
node's integer parameters start in ``P`` (-1 for none), ``need`` is 1 when the node depends on
a differentiated input and ``imm`` is a float immediate (an exponent, a scale). ``scratch``
is work space for rows whose backward cannot add into ``grad`` directly (matmul).
"""
import numpy as np

INT = np.int32
COLUMNS = ("op", "a0", "a1", "pp", "need")
H = 2                                   # header: n, out


def pack(op, a0, a1, pp, need, off, params, imm, out, scratch=0, dtype=np.float64):
    """Pack the columns (sequences of equal length n, off of length n+1) into (I, F)."""
    n = len(op)
    I = np.concatenate([np.asarray(c, dtype=INT)
                        for c in ((n, out), op, a0, a1, pp, need, off, params)])
    size = int(off[-1]) if n else 0
    F = np.zeros(n + 2 * size + scratch, dtype=dtype)
    F[:n] = imm
    return I, F


def views(I, F):
    """Named numpy views of the packed columns (shared memory, no copies)."""
    n = int(I[0])
    cols = {name: I[H + k * n:H + (k + 1) * n] for k, name in enumerate(COLUMNS)}
    off = I[H + 5 * n:H + 6 * n + 1]
    cols["off"] = off
    cols["P"] = I[H + 6 * n + 1:]
    size = int(off[n]) if n else 0
    cols["imm"] = F[:n]
    cols["val"] = F[n:n + size]
    cols["grad"] = F[n + size:n + 2 * size]
    cols["scratch"] = F[n + 2 * size:]
    return cols


def bases(I):
    """Where each column starts: (op, a0, a1, pp, need, off, P) in I, (imm, val, grad,
    scratch) in F.

    The sweeps index ``I[b_off + i]`` instead of slicing columns, which would cost reference
    counting on every call. ``_gen.py`` copies this function into ``sweep.py`` under @njit.
    """
    n = I[0]
    b_off = H + 5 * n
    size = I[b_off + n]
    return (H, H + n, H + 2 * n, H + 3 * n, H + 4 * n, b_off, b_off + n + 1,
            0, n, n + size, n + 2 * size)
