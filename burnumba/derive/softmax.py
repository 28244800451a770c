"""cross_entropy as traced ops: c * g * (softmax(logits) - onehot(targets)). (The other rows
of the softmax family carry their rules in kernels/blocks_softmax.py: derive/traced.py runs
them.)
"""
import numpy as np

from .. import numpy as bnp
from ..numpy.functional import softmax
from .graph import params, var


def _ce_parts(b, i):
    """softmax(logits) - onehot(targets), as (rows, classes)."""
    rows, ncls = params(b, i)[:2]
    logits = bnp.reshape(var(b, b.a0[i]), (rows, ncls))
    targets = bnp.reshape(var(b, b.a1[i]), (rows, 1))
    onehot = bnp.equal(targets, np.arange(ncls, dtype=float))
    return softmax(logits) - onehot


def _cross_entropy_vjp(b, i, g, need=None):
    d = _ce_parts(b, i)
    return [(b.a0[i], bnp.reshape(float(b.imm[i]) * g * d, b.shapes[b.a0[i]]))]


def _cross_entropy_jvp(b, i, tangent):
    rows, ncls = params(b, i)[:2]
    t = bnp.reshape(tangent(b.a0[i]), (rows, ncls))
    return float(b.imm[i]) * bnp.sum(_ce_parts(b, i) * t)


# cross_entropy's (vjp, jvp) on traced values
RULES = {
    "cross_entropy": (_cross_entropy_vjp, _cross_entropy_jvp),
}
