"""The derivatives of block rows that carry their rules in numpy's names (``Op.traced``,
kernels/row.py): the row's own ``vjp`` / ``jvp``, run with burnumba.numpy on the node's
traced operand and output as its layout shows them. Such a row needs no code here."""
from .. import numpy as bnp
from ..kernels import ROWS
from .graph import params, var


def _views(b, i, node):
    """(outer, m, inner), and ``node``'s value (a node id or a traced value) in that shape,
    for an "axis" row."""
    row = ROWS[b.op[i]]
    if row.layout != "axis":
        raise NotImplementedError(f"{row.name}: traced rules for layout {row.layout!r}")
    shape = tuple(params(b, i)[:3])
    return shape, bnp.reshape(var(b, node) if isinstance(node, int) else node, shape)


def vjp(b, i, g, need=None):
    row = ROWS[b.op[i]]
    shape, a = _views(b, i, b.a0[i])
    _, y = _views(b, i, i)
    da = row.traced.vjp(bnp, a, y, bnp.reshape(g, shape), float(b.imm[i]))
    return [(b.a0[i], bnp.reshape(da, b.shapes[b.a0[i]]))]


def jvp(b, i, tangent):
    row = ROWS[b.op[i]]
    shape, a = _views(b, i, b.a0[i])
    _, y = _views(b, i, i)
    _, t = _views(b, i, tangent(b.a0[i]))
    return bnp.reshape(row.traced.jvp(bnp, a, y, t, float(b.imm[i])), b.shapes[i])


# (vjp, jvp) of every row with traced rules, by name
RULES = {row.name: (vjp, jvp) for row in ROWS if row.traced is not None}
