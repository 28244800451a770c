"""The derivatives of block rows that carry their rules in numpy's names (``Op.traced``,
kernels/row.py): the row's own ``vjp`` / ``jvp`` / ``batched``, run with burnumba.numpy on
the node's traced operands and output as its layout shows them (``Op.node_shapes``).
Such a row needs no code here."""
import math

import numpy as np

from .. import numpy as bnp
from ..kernels import ROWS
from .graph import operands, params, var
from .maps import operand_shape


def _seen(v, shape, work=0):
    """A traced value (a node's whole value or a cotangent of it) in the view ``shape``: a
    reshape (free), after leaving out the ``work`` space that follows the result."""
    if work:
        v = bnp.reshape(v, (v.size,))[:math.prod(shape)]
    return bnp.reshape(v, shape)


def _node(b, i):
    """The row, its immediate c, its operands' nodes, their traced values in their shapes
    (None for a row whose rules take the list of its operands), node i's value in its shape,
    and that shape and the work space after it."""
    row = ROWS[b.op[i]]
    c = float(b.imm[i])
    shapes, sy, work = row.node_shapes(params(b, i))
    if row.layout in ("listed", "inner"):       # the nodes named in P, as they are
        nodes = [int(k) for k in operands(b, i)]
        return row, c, nodes, None, [var(b, k) for k in nodes], var(b, i), (b.shapes[i], 0)
    if row.layout == "tiles":                   # each operand read as a tile of the output
        nodes = [int(k) for k in operands(b, i)]
        shapes = [operand_shape(b, k, b.shapes[i]) for k in nodes]
        sy = b.shapes[i]
    else:
        nodes = (b.a0[i], b.a1[i])[:len(shapes)]
    xs = [_seen(var(b, k), s) for k, s in zip(nodes, shapes)]
    return row, c, nodes, shapes, xs, _seen(var(b, i), sy, work), (sy, work)


def vjp(b, i, g, need=None):
    row, c, nodes, shapes, xs, y, (sy, work) = _node(b, i)
    g = _seen(g, sy, work)
    if shapes is None:
        out = row.traced.vjp(bnp, xs, y, g, c, need=None if need is None else
                             [need(k) for k in nodes])
    elif len(nodes) == 1:
        out = (row.traced.vjp(bnp, *xs, y, g, c),)
    else:
        wanted = tuple(need is None or need(k) for k in nodes)
        out = row.traced.vjp(bnp, *xs, y, g, c, need=wanted)
    return [(k, bnp.reshape(d, b.shapes[k])) for k, d in zip(nodes, out)
            if d is not None and (need is None or need(k))]


def _with_work(b, ty, work):
    """A tangent of a node whose slice holds work space after its result: zeros there."""
    if not work:
        return ty
    return bnp.concatenate([bnp.reshape(ty, (ty.size,)), b.const(np.zeros(work))])


def jvp(b, i, tangent):
    row, c, nodes, shapes, xs, y, (sy, work) = _node(b, i)
    if shapes is None:
        return row.traced.jvp(bnp, xs, y, [tangent(k) for k in nodes], c)
    ts = [None if tangent(k) is None else _seen(tangent(k), s) for k, s in zip(nodes, shapes)]
    ty = row.traced.jvp(bnp, *xs, y, *ts, c)
    return None if ty is None else bnp.reshape(_with_work(b, ty, work), b.shapes[i])


def batched(b, i, tangent, B, identity=()):
    """The row's ``batched`` rule: B tangents at once, each (B,) + its operand's shape."""
    row, c, nodes, shapes, xs, y, _ = _node(b, i)
    if shapes is None:
        return row.traced.batched(bnp, xs, y, [tangent(k) for k in nodes], c)
    return row.traced.batched(bnp, *xs, y, _seen(tangent(nodes[0]), (B,) + shapes[0]), c)


# (vjp, jvp) of every row with traced rules, by name
RULES = {row.name: (vjp, jvp) for row in ROWS if row.traced is not None}
# the rows whose traced rules have a batched form
BATCHED = {row.name: batched for row in ROWS
           if row.traced is not None and row.traced.batched is not None}
