"""The derivatives of block rows, from the rules in their row (kernels/blocks_<family>.py),
with no code per row here:

* ``Op.traced``, the rules in numpy's names: the row's own ``vjp`` / ``jvp`` / ``batched``,
  run with burnumba.numpy on the node's traced operands and output as its layout shows them
  (``Op.node_shapes``);
* ``Op.on_trace``, the rules that read the trace itself (arena positions, rows without a
  numpy name, how an operand is held): run on ``Trace``, the trace as those rules see it.
"""
import math

import numpy as np

from .. import numpy as bnp
from .._errors import UnsupportedOpError, at_user_site
from ..kernels import BY_NAME, ROWS
from ..tracing.conversions import refuse
from ..tracing.tracer import Var
from .graph import offsets, operands, params, sources, var
from .maps import _math, operand_shape


class Trace:
    """The trace as a row's ``on_trace`` rules see it (kernels/row.py: ``OnTrace``): node
    k's shape ``shapes[k]``, operands ``a0[k]`` / ``a1[k]``, immediate ``imm[k]``, integer
    parameters ``params(k)``, traced value ``var(k)`` and the shapes its row shows its
    operands in ``node_shapes(k)``; the arena: its nodes' first positions ``offsets()``, the
    node each position falls in ``sources(positions)``, a view of positions
    ``gather(values, positions, shape)`` (the values the positions fall in) and the positions
    a gather node was made from ``viewed(v)``; new nodes: constants ``const(x)`` and nodes of
    the rows the row ``appends``: ``append(name, shape, a, b, params)`` and, for an axis row
    along the last axis, ``axis(name, x)``; the user's op an njit_call node calls
    ``user_op(k)`` (bn.njit_op); the rules' special functions on traced values
    ``special(name)``; and ``refuse(message)``, an error at the user's line where a row has
    no derivative as traced ops."""
    __slots__ = ("_b", "_row", "shapes", "a0", "a1", "imm")

    def __init__(self, b, row):
        self._b, self._row = b, row
        self.shapes, self.a0, self.a1, self.imm = b.shapes, b.a0, b.a1, b.imm

    def params(self, k):
        return params(self._b, k)

    def var(self, k):
        return var(self._b, k)

    def node_shapes(self, k):
        return ROWS[self._b.op[k]].node_shapes(params(self._b, k))

    def offsets(self):
        return offsets(self._b)

    def sources(self, positions):
        return sources(self._b, positions)

    def gather(self, values, positions, shape):
        return self._b.gather(values, positions, shape)

    def viewed(self, v):
        """The arena positions that the gather node of v reads where v was made from a view
        (the x^T of a backward), else None."""
        return self._b.viewed.get(v.node) if v._view is None else None

    def const(self, x):
        return self._b.const(x)

    def user_op(self, k):
        return self._b.user_ops[int(params(self._b, k)[0])][0]

    def refuse(self, message):
        raise UnsupportedOpError(at_user_site(message))

    def _appended(self, name):
        assert name == self._row.name or name in self._row.appends, (
            f"{self._row.name}'s rules append {name} nodes: name {name} in the row's appends")

    def special(self, name):
        """A special function of the rules (kernels.rules.SPECIAL: lgamma, polygamma, ...) on
        traced values: burnumba.scipy.special's (derive/maps.py), so that a rule's derivative
        through it is itself a row's."""
        return _math()[name]

    def append(self, name, shape, a, b=None, params=None, need=None):
        """A new node of row ``name`` on the operands a (and b), with a's need (or
        ``need``). A "tiles" row's operands are the node params[0], a and b (the beta rows):
        its need is that of any operand it differentiates, and an operand it refuses
        (``Op.refused``: betainc_da's a and b) that depends on a differentiated argument is
        the error the public function gives (a second derivative in a, not a silent 0)."""
        self._appended(name)
        tr = self._b
        a = tr.lift(a)
        b = None if b is None else tr.lift(b)
        shape = tuple(shape)
        row = BY_NAME[name]
        if row.layout == "tiles":
            xs = [var(tr, int(params[0])), a, b]
            refuse(row, xs, tr.need)
            if need is None:
                need = any(bool(tr.need[xs[k].node]) for k in row.diff_operands)
        node = tr.add(name, shape, a.node, -1 if b is None else b.node, params=params,
                      need=tr.need[a.node] if need is None else need)
        return Var(tr, node, shape)

    def axis(self, name, x):
        """A new node of the axis row ``name`` along x's last axis."""
        self._appended(name)
        return self._b.axis(name, x, -1, x.shape)


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


def trace_vjp(b, i, g, need=None):
    row = ROWS[b.op[i]]
    return row.on_trace.vjp(bnp, Trace(b, row), i, g, need)


def trace_jvp(b, i, tangent):
    row = ROWS[b.op[i]]
    return row.on_trace.jvp(bnp, Trace(b, row), i, tangent)


def trace_batched(b, i, tangent, B, identity=()):
    row = ROWS[b.op[i]]
    return row.on_trace.batched(bnp, Trace(b, row), i, tangent, B, identity)


def _slot(row, name):
    """The rule a row gives for slot ``name``: (on_trace's, traced's) as an adapter, or None."""
    own = row.on_trace is not None and getattr(row.on_trace, name) is not None
    if own:
        return {"vjp": trace_vjp, "jvp": trace_jvp, "batched": trace_batched}[name]
    if row.traced is not None and getattr(row.traced, name) is not None:
        return {"vjp": vjp, "jvp": jvp, "batched": batched}[name]
    return None


# (vjp, jvp) of every block row with rules of either kind, by name
RULES = {row.name: (_slot(row, "vjp"), _slot(row, "jvp")) for row in ROWS
         if _slot(row, "vjp") is not None}
# the rows whose rules have a batched form
BATCHED = {row.name: _slot(row, "batched") for row in ROWS
           if _slot(row, "batched") is not None}
