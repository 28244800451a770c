"""The derivative sweeps on a trace: a node's vjp and jvp by its row (map rows from their
rules, block rows from the rules in their rows), the backward sweep (last node to first) and
the forward sweep, and dead-node elimination for traces with derivatives in them.
"""
from .. import numpy as bnp
from .._errors import UnsupportedOpError, at_user_site
from ..kernels import OPCODE, ROWS
from ..tracing.tracer import Var, broadcast_to
from . import traced
from .graph import operands
from .maps import map_jvp, map_vjp

# (vjp, jvp) of every block row, by name, from its rules in its row (derive/traced.py)
BLOCK = traced.RULES


# -- the sweeps ---------------------------------------------------------------------------------
def node_vjp(b, i, g, need=None):
    """[(operand node, cotangent)] of node i for the cotangent g of its output; with
    ``need`` (a predicate on nodes), the rows with several operands skip the cotangents of
    operands it rejects, so no dead nodes are traced for them."""
    rule = b.custom.get(i)
    if rule is not None:                        # a user's rule (transforms/custom.py)
        return rule.vjp(b, i, g, need)
    row = ROWS[b.op[i]]
    if row.kind == "map":
        return map_vjp(b, i, g, need)
    return BLOCK[row.name][0](b, i, g, need)


def node_jvp(b, i, tangent):
    """The tangent of node i's output, or None when no operand has one."""
    row = ROWS[b.op[i]]
    if not any(tangent(k) is not None for k in operands(b, i)):
        return None
    rule = b.custom.get(i)
    if rule is not None:                        # a user's rule (transforms/custom.py)
        return rule.jvp(b, i, tangent)
    if row.kind == "map":
        return map_jvp(b, i, tangent)
    return BLOCK[row.name][1](b, i, tangent)


def _reaches(b, start, seeds):
    """The nodes from ``start`` on that depend on a node in ``seeds``."""
    dep = set(seeds)
    for i in range(start, b.n):
        if any(k in dep for k in operands(b, i)):
            dep.add(i)
    return dep


def _live(b, roots, live=None):
    """Per node, 1 when a root depends on it (``live``: nodes already found, whose operands
    are not walked again). Tape order is execution order: one backward pass."""
    n = b.n
    found = bytearray(n)
    for r in roots:
        found[r] = 1
    op, a0, a1 = b.op, b.a0, b.a1
    listed = {OPCODE[r.name] for r in ROWS if r.layout in ("listed", "inner", "tiles")} | {
        OPCODE["gather"]}
    for i in range(n - 1, -1, -1):
        if not found[i] or (live is not None and live[i]):
            continue
        if op[i] in listed:                     # operands named in the parameters too
            for k in operands(b, i):
                found[k] = 1
            continue
        if a0[i] >= 0:
            found[a0[i]] = 1
        if a1[i] >= 0:
            found[a1[i]] = 1
    return found


def eliminate_dead(b, roots, kept=(), drop=True):
    """Make every node that no root depends on a constant, which the sweeps skip: a trace
    with derivatives in it (``b.derived``) computes values its output never reads (the
    loss value under a traced gradient, the gradient under a Hessian). The node keeps its
    slice of the arena and its index (no renumbering: gathers address the arena). Returns
    how many nodes were eliminated.

    ``kept``: nodes whose values are read but never differentiated: the guards' nodes, the
    values a Python decision read. They and the nodes only they depend on stay, with need
    0, so that no sweep computes their derivatives (an hvp whose function decides on its
    loss computes the loss, not the loss's tangent: 1.45x the hvp before, a guard's cost).
    ``drop=False`` (a trace without derivatives in it) only marks those, eliminating
    nothing; a set of nodes: eliminates only those (the comparisons a guard reads off their
    operand, tracing/tracer.py's ``_comparison_guard``, when nothing else reads them)."""
    live = _live(b, roots)
    values = _live(b, kept, live) if len(kept) else bytearray(b.n)
    op, a0, a1, pp = b.op, b.a0, b.a1, b.pp
    const, leaves = OPCODE["const"], {OPCODE["const"], OPCODE["input"]}
    dead = 0
    for i in range(b.n):
        if live[i] or op[i] in leaves:
            continue
        if values[i]:
            b.need[i] = 0
        elif drop is True or (drop and i in drop):
            op[i], a0[i], a1[i], pp[i], b.need[i] = const, -1, -1, -1, 0
            dead += 1
    return dead


def _no_loops_after(b, start):
    """The sweeps differentiate nodes, and a structured loop's nodes are its body's first
    step only (tracing/loops.py): one after ``start`` would give a wrong derivative, so it is
    an error (transforms/nested.py unrolls the loops traced under a nested transformation,
    so this is only reached by code that bypasses that)."""
    for loop in b.loops:
        if loop.lo >= start:
            raise UnsupportedOpError(at_user_site(
                f"{loop.name}: a structured loop cannot be differentiated as traced ops; "
                "pass unroll=True to it"))


def backward(b, start, seeds, wrt):
    """Cotangents {node: traced value or None} of the nodes in ``wrt`` (the copies made at
    ``start``), pulled back from ``seeds`` {node: cotangent} through the nodes appended
    since, last to first. Only nodes that depend on ``wrt`` pass cotangents on."""
    _no_loops_after(b, start)
    b.derived = True
    end = b.n                                   # the rules append nodes: stop at these
    dep = _reaches(b, start, wrt)
    # a seed may come at the shape of a view of its node ((n, 1) for an (n,) node)
    ct = {k: v if not isinstance(v, Var) or v.shape == b.shapes[k]
          else bnp.reshape(v, b.shapes[k]) for k, v in seeds.items()}
    for i in range(end - 1, start - 1, -1):
        g = ct.get(i)
        if g is None or i in wrt or i not in dep or ROWS[b.op[i]].kind == "leaf":
            continue
        for k, c in node_vjp(b, i, g, dep.__contains__):
            if k in dep and c is not None:
                ct[k] = c if k not in ct else ct[k] + c
    return {k: ct.get(k) for k in wrt}


def forward(b, start, tangents):
    """Tangents {node: traced value} of every node appended since ``start`` that a node of
    ``tangents`` (copies made at ``start``) reaches, first to last."""
    _no_loops_after(b, start)
    b.derived = True
    t = dict(tangents)
    end = b.n
    for i in range(start, end):
        row = ROWS[b.op[i]]
        if i in t or row.kind == "leaf" or (row.kind == "map" and row.da is None
                                            and row.db is None):
            continue                            # masks and stop_gradient carry no tangent
        ty = node_jvp(b, i, t.get)
        if ty is None:
            continue
        ty = b.lift(ty)
        t[i] = ty if ty.shape == b.shapes[i] else broadcast_to(ty, b.shapes[i])
    return t
