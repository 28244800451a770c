"""A trace seen as a graph: a node's operands, its integer parameters, the nodes that arena
positions fall in, and the copy node that stands in for a differentiated argument.
"""
import math

import numpy as np

from .._errors import LeakedTracerError, at_user_site
from ..kernels import ROWS
from ..tracing.tracer import Var


def builder_of(leaves):
    """The one live trace the traced leaves belong to."""
    builders = {x._b for x in leaves if isinstance(x, Var)}
    if len(builders) > 1 or not all(b.live for b in builders):
        raise LeakedTracerError(at_user_site(
            "a transformation got traced values from two different traces (one leaked out "
            "of an earlier bn.grad / bn.trace): pass the values in as arguments"))
    return builders.pop() if builders else None


# -- nodes of a trace ----------------------------------------------------------------------
def var(b, i):
    return Var(b, i, b.shapes[i])


def params(b, i):
    """Node i's integer parameters (a view: no copy of the rest of the list)."""
    p = b.pp[i]
    return _Params(b.params, p) if p >= 0 else []


class _Params:
    """``b.params[p:]`` without copying it: indexed and sliced relative to p."""

    __slots__ = ("items", "p")

    def __init__(self, items, p):
        self.items, self.p = items, p

    def __getitem__(self, k):
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self.items) - self.p)
            return self.items[self.p + start:self.p + stop:step]
        return self.items[self.p + k]


def copy(x):
    """A node of its own holding x's value (a gather of its positions): the stand-in for a
    differentiated argument."""
    b = x._b
    view = b.gather([x], x.positions().reshape(-1), x.shape)._view
    return b.materialize(view, x.shape, copy=True)


def offsets(b):
    return np.asarray(b.off, dtype=np.int64)


def sources(b, positions):
    """The nodes that arena positions fall in, and each position's node."""
    owner = np.searchsorted(offsets(b), np.asarray(positions), "right") - 1
    return owner


def operands(b, i):
    """The nodes node i's value depends on (differentiably or not)."""
    row = ROWS[b.op[i]]
    p = params(b, i)
    if row.layout == "listed":
        return list(p[1:1 + p[0]])
    if row.layout == "inner":
        m = p[0]
        return list(p[1:1 + 2 * m]) + ([b.a0[i]] if b.a0[i] >= 0 else [])
    if row.name == "gather":
        size = math.prod(b.shapes[i])
        return sorted({int(k) for k in sources(b, p[:size])})
    if row.layout == "tiles":                   # where: cond (the node P[p]), a0, a1
        return [p[0], b.a0[i], b.a1[i]]
    return [k for k in (b.a0[i], b.a1[i]) if k >= 0]
