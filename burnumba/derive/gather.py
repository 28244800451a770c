"""Moving values as traced ops: gather (views, indexing) and take, and the adjoint rows that
their derivatives are made of (scatter for gather, take_add for take). Their rules read arena
positions or build rows that have no numpy name, so they stay here (where carries its own,
in kernels/blocks_gather.py).
"""
import math

import numpy as np

from .. import numpy as bnp
from ..tracing.tracer import Var
from .graph import offsets, params, sources, var


# -- the adjoint rows, as traced ops -----------------------------------------------------------
def scatter(a, positions, shape):
    """zeros(shape) with a's elements added at the flat ``positions`` (gather's adjoint)."""
    b = a._b
    a = b.lift(a)
    shape = tuple(shape)
    node = b.add("scatter", shape, a.node, params=np.asarray(positions).reshape(-1),
                 need=b.need[a.node])
    return Var(b, node, shape)


def take(table, idx):
    """table[idx] for the integer node idx of the trace (the take row, whose index data was
    checked when the trace first met it)."""
    b = table._b
    width = math.prod(table.shape[1:])
    shape = tuple(idx.shape) + tuple(table.shape[1:])
    node = b.add("take", shape, table.node, idx.node, params=[table.shape[0], width],
                 need=b.need[table.node])
    return Var(b, node, shape)


def take_add(a, idx, nrows):
    """zeros((nrows,) + a.shape[1:]) with a's rows added at rows ``idx`` (take's adjoint);
    ``idx`` is integer data of the trace."""
    b = a._b if isinstance(a, Var) else idx._b
    a, idx = b.lift(a), b.lift(idx)
    width = math.prod(a.shape[1:])
    shape = (int(nrows),) + tuple(a.shape[1:])
    node = b.add("take_add", shape, a.node, idx.node, params=[int(nrows), width],
                 need=b.need[a.node])
    return Var(b, node, shape)


def _take_vjp(b, i, g, need=None):
    nrows, width = params(b, i)[:2]
    k = math.prod(b.shapes[b.a1[i]])
    gt = take_add(bnp.reshape(g, (k, width)), var(b, b.a1[i]), nrows)
    return [(b.a0[i], bnp.reshape(gt, b.shapes[b.a0[i]]))]


def _take_jvp(b, i, tangent):
    nrows, width = params(b, i)[:2]
    t = bnp.reshape(tangent(b.a0[i]), (nrows, width))
    return bnp.reshape(take(t, var(b, b.a1[i])), b.shapes[i])


def _take_add_vjp(b, i, g, need=None):
    nrows, width = params(b, i)[:2]
    gg = take(bnp.reshape(g, (nrows, width)), var(b, b.a1[i]))
    return [(b.a0[i], bnp.reshape(gg, b.shapes[b.a0[i]]))]


def _take_add_jvp(b, i, tangent):
    nrows, width = params(b, i)[:2]
    k = math.prod(b.shapes[b.a1[i]])
    t = bnp.reshape(tangent(b.a0[i]), (k, width))
    return bnp.reshape(take_add(t, var(b, b.a1[i]), nrows), b.shapes[i])


def _gather_vjp(b, i, g, need=None):
    """Each source node gets the cotangent elements of the positions it owns, scattered."""
    size = math.prod(b.shapes[i])
    positions = np.asarray(params(b, i)[:size])
    owner = sources(b, positions)
    gpos = g.positions().reshape(-1)
    off = offsets(b)
    out = []
    for s in np.unique(owner):
        js = np.flatnonzero(owner == s)
        part = b.gather([g], gpos[js], (len(js),))
        out.append((int(s), scatter(part, positions[js] - off[s], b.shapes[s])))
    return out


def _gather_jvp(b, i, tangent):
    """The gather of the sources' tangents (a zero constant for a source without one)."""
    size = math.prod(b.shapes[i])
    positions = np.asarray(params(b, i)[:size])
    owner = sources(b, positions)
    off = offsets(b)
    picked = np.empty(size, dtype=np.int64)
    used = []
    for s in np.unique(owner):
        t = tangent(int(s))
        if t is None:
            t = b.const(np.zeros(b.shapes[s])) if b.shapes[s] else b.const(0.0)
        used.append(t)
        js = np.flatnonzero(owner == s)
        picked[js] = t.positions().reshape(-1)[positions[js] - off[s]]
    return b.gather(used, picked, b.shapes[i])


def _scatter_vjp(b, i, g, need=None):
    n = math.prod(b.shapes[b.a0[i]])
    positions = np.asarray(params(b, i)[:n])
    return [(b.a0[i], b.gather([g], g.positions().reshape(-1)[positions], b.shapes[b.a0[i]]))]


def _scatter_jvp(b, i, tangent):
    n = math.prod(b.shapes[b.a0[i]])
    return scatter(tangent(b.a0[i]), np.asarray(params(b, i)[:n]), b.shapes[i])


# gather, take and their adjoints: each row's (vjp, jvp) on traced values
RULES = {
    "take": (_take_vjp, _take_jvp),
    "take_add": (_take_add_vjp, _take_add_jvp),
    "gather": (_gather_vjp, _gather_jvp),
    "scatter": (_scatter_vjp, _scatter_jvp),
}
