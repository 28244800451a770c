"""Many tangents at once: the forward sweep with a leading batch axis.

A batched tangent of node i has shape (B,) + shape(i): B directions pushed forward together,
so that a matrix product of tangents is one matrix-matrix product (the Hessian's columns in one
pass instead of d). Rows without a batched rule fall back to one rule per direction.
"""
import functools
import math

import numpy as np

from .. import numpy as bnp
from ..kernels import ROWS
from ..tracing.tracer import Var, broadcast_to
from .graph import operands, params
from .maps import map_env, operand_shape, rule
from . import traced
from .sweeps import node_jvp


def _batched_map(b, i, tangent, B):
    row = ROWS[b.op[i]]
    out_shape = b.shapes[i]
    total = None
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        t = tangent(node)
        if getattr(row, slot) is None or t is None:
            continue
        shape = operand_shape(b, node, out_shape)
        lead = (1,) * (len(out_shape) - len(shape))      # align with the output's axes
        _, ev = map_env(b, i, bnp.reshape(t, (B,) + lead + shape))
        term = rule(row, slot, ev)
        total = term if total is None else total + term
    return total


# the batched rules of the block rows (their own, kernels/blocks_<family>.py), by name
BATCHED = traced.BATCHED


def _whole_copy(b, i):
    """The node that gather node i copies whole and in order, or None."""
    size = math.prod(b.shapes[i])
    src = b.a0[i]
    start = b.off[src]
    if b.off[src + 1] - start != size:
        return None
    p = np.asarray(params(b, i)[:size])
    return src if size and p[0] == start and np.array_equal(p, start + np.arange(size)) \
        else None


class _Scaled:
    """A batched tangent kept as ``base * coef``: base has the node's shape with the leading
    axis of B directions, coef is unbatched (a float, or a traced value that broadcasts over
    the node's shape the way a map row's operand does). A map row's tangent rule is linear in
    the tangent (g * f'(a), g / b, -g, g if c else 0, ...), so applied to a scaled tangent it
    scales the coefficient alone: rule(base * c) = base * rule(c), one op over a node's
    values instead of over B of them. A chain of such rows (the logistic loss's exp, log and
    divides under a Hessian) costs one batched multiply, made where a row needs the batched
    tangent itself (``formed``). Mathematically the same tangent; the rounding differs from
    applying each rule to the batched tangent (the factors are multiplied in another order)."""
    __slots__ = ("base", "coef")

    def __init__(self, base, coef):
        self.base, self.coef = base, coef


def formed(b, t, node):
    """Node ``node``'s batched tangent as a traced value (None without one); a scaled one
    is multiplied out once and kept."""
    ty = t.get(node)
    if not isinstance(ty, _Scaled):
        return ty
    formed = ty.base if type(ty.coef) is float and ty.coef == 1.0 else ty.base * ty.coef
    t[node] = formed
    return formed


def _scaled_map(b, i, t, B):
    """Map row i's batched tangent as a ``_Scaled`` one, or None where it cannot be: an
    operand whose tangent is broadcast over the output, or two operands' tangents on
    different bases."""
    row = ROWS[b.op[i]]
    out_shape = b.shapes[i]
    n = math.prod(out_shape)
    base, coef = None, None
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        tk = t.get(node)
        if getattr(row, slot) is None or tk is None:
            continue
        if math.prod(b.shapes[node]) != n:
            return None
        kb, kc = (tk.base, tk.coef) if isinstance(tk, _Scaled) else (tk, 1.0)
        kb = bnp.reshape(kb, (B,) + out_shape)
        if base is None:
            base = kb
        elif kb.node != base.node:
            return None
        if isinstance(kc, Var) and kc.size != math.prod(b.shapes[node]):
            kc = broadcast_to(kc, b.shapes[node])
        _, ev = map_env(b, i, kc, node)
        term = rule(row, slot, ev)
        coef = term if coef is None else coef + term
    if base is None:
        return None
    return _Scaled(base, coef if isinstance(coef, Var) else float(coef))


def forward_batched(b, start, tangents, B, identity=()):
    """As ``forward``, for tangents with a leading axis of B directions; ``identity``: the
    nodes whose tangents are the B unit vectors (a rule may use that). A tangent of the
    result may be a ``_Scaled`` one: read them with ``formed``."""
    b.derived = True
    t = dict(tangents)
    get = functools.partial(formed, b, t)
    identity = set(identity)
    for i in range(start, b.n):
        row = ROWS[b.op[i]]
        if i in t or row.kind == "leaf" or (row.kind == "map" and row.da is None
                                            and row.db is None):
            continue
        if not any(t.get(k) is not None for k in operands(b, i)):
            continue
        if i in b.custom:                       # a user's rule: one direction at a time
            cols = [b.lift(node_jvp(b, i, lambda n: None if get(n) is None else get(n)[k]))
                    for k in range(B)]
            t[i] = bnp.stack([c if c.shape == b.shapes[i] else broadcast_to(c, b.shapes[i])
                              for c in cols])
            continue
        if row.name == "gather" and _whole_copy(b, i) in t:
            src = _whole_copy(b, i)               # a copy of a node: the same tangent
            t[i] = t[src]
            if src in identity:
                identity.add(i)
            continue
        if row.kind == "map":
            scaled = _scaled_map(b, i, t, B)
            if scaled is not None:
                t[i] = scaled
                continue
            ty = _batched_map(b, i, get, B)
        elif row.name in BATCHED:
            ty = BATCHED[row.name](b, i, get, B, identity)
        else:                                   # one direction at a time
            cols = []
            for k in range(B):
                col = node_jvp(b, i, lambda n: None if get(n) is None else t[n][k])
                col = b.lift(col)
                cols.append(col if col.shape == b.shapes[i] else
                            broadcast_to(col, b.shapes[i]))
            ty = bnp.stack(cols)
        if ty is None:
            continue
        ty = b.lift(ty)
        shape = (B,) + b.shapes[i]
        if ty.shape != shape:
            ty = bnp.reshape(ty, shape) if ty.size == math.prod(shape) else \
                broadcast_to(bnp.reshape(ty, (B,) + (1,) * len(b.shapes[i])), shape) \
                if ty.size == B else broadcast_to(ty, shape)
        t[i] = ty
    return t
