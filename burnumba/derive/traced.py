"""The derivatives of block rows that carry their rules in numpy's names (``Op.traced``,
kernels/row.py): the row's own ``vjp`` / ``jvp`` / ``batched``, run with burnumba.numpy on
the node's traced operand and output as its layout shows them (``kernels.row.VIEWS``). Such
a row needs no code here."""
from .. import numpy as bnp
from ..kernels import ROWS
from ..kernels.row import VIEWS
from .graph import params, var


def _views(b, i):
    """The row, its rules' immediate c, and the views (a's, y's) of node i's layout."""
    row = ROWS[b.op[i]]
    if row.layout not in VIEWS:
        raise NotImplementedError(f"{row.name}: traced rules for layout {row.layout!r}")
    return row, float(b.imm[i]), VIEWS[row.layout](*params(b, i)[:3])


def _seen(v, shape):
    """A node (by id) or a traced value, in the view ``shape`` (a reshape: free)."""
    return bnp.reshape(v, shape)


def vjp(b, i, g, need=None):
    row, c, (sa, sy) = _views(b, i)
    a0 = b.a0[i]
    da = row.traced.vjp(bnp, _seen(var(b, a0), sa), _seen(var(b, i), sy), _seen(g, sy), c)
    return [] if da is None else [(a0, bnp.reshape(da, b.shapes[a0]))]


def jvp(b, i, tangent):
    row, c, (sa, sy) = _views(b, i)
    a0 = b.a0[i]
    ty = row.traced.jvp(bnp, _seen(var(b, a0), sa), _seen(var(b, i), sy),
                        _seen(tangent(a0), sa), c)
    return None if ty is None else bnp.reshape(ty, b.shapes[i])


def batched(b, i, tangent, B, identity=()):
    """The row's ``batched`` rule: B tangents of its operand at once, (B,) + a's view."""
    row, c, (sa, sy) = _views(b, i)
    a0 = b.a0[i]
    return row.traced.batched(bnp, _seen(var(b, a0), sa), _seen(var(b, i), sy),
                              _seen(tangent(a0), (B,) + sa), c)


# (vjp, jvp) of every row with traced rules, by name
RULES = {row.name: (vjp, jvp) for row in ROWS if row.traced is not None}
# the rows whose traced rules have a batched form
BATCHED = {row.name: batched for row in ROWS
           if row.traced is not None and row.traced.batched is not None}
