"""The softmax family as traced ops: softmax, causal_softmax, log_softmax, logsumexp,
layer_norm and cross_entropy along an axis, seen as (outer, m, inner). Each reuses its output
y where that is cheaper (softmax's vjp is y * (g - sum(g * y))).
"""
import numpy as np

from .. import numpy as bnp
from ..numpy.functional import softmax
from .graph import params, var
from .reduce import as3, axis3, axis_sizes



def _softmax_vjp(b, i, g, need=None):
    s = axis_sizes(b, i)
    y, g3 = as3(var(b, i), s), as3(g, s)
    dx = y * (g3 - bnp.sum(g3 * y, axis=1, keepdims=True))
    return [(b.a0[i], bnp.reshape(dx, b.shapes[b.a0[i]]))]


def _softmax_jvp(b, i, tangent):
    s = axis_sizes(b, i)
    y, t = as3(var(b, i), s), as3(tangent(b.a0[i]), s)
    return bnp.reshape(y * (t - bnp.sum(y * t, axis=1, keepdims=True)), b.shapes[i])


def _causal_softmax_vjp(b, i, g, need=None):
    # y is 0 beyond the diagonal, so the sums run over the visible part only
    s, c = axis_sizes(b, i), float(b.imm[i])
    y, g3 = as3(var(b, i), s), as3(g, s)
    dx = c * y * (g3 - bnp.sum(g3 * y, axis=1, keepdims=True))
    return [(b.a0[i], bnp.reshape(dx, b.shapes[b.a0[i]]))]


def _causal_softmax_jvp(b, i, tangent):
    s, c = axis_sizes(b, i), float(b.imm[i])
    y, t = as3(var(b, i), s), as3(tangent(b.a0[i]), s)
    return bnp.reshape(c * y * (t - bnp.sum(y * t, axis=1, keepdims=True)), b.shapes[i])


def _log_softmax_vjp(b, i, g, need=None):
    s = axis_sizes(b, i)
    y, g3 = as3(var(b, i), s), as3(g, s)
    dx = g3 - bnp.exp(y) * bnp.sum(g3, axis=1, keepdims=True)
    return [(b.a0[i], bnp.reshape(dx, b.shapes[b.a0[i]]))]


def _log_softmax_jvp(b, i, tangent):
    s = axis_sizes(b, i)
    y, t = as3(var(b, i), s), as3(tangent(b.a0[i]), s)
    return bnp.reshape(t - bnp.sum(bnp.exp(y) * t, axis=1, keepdims=True), b.shapes[i])


def _lse_weights(b, i):
    """exp(x - y) along the lane, 0 in a lane of -inf (which passes no gradient)."""
    (o, m, n), x3 = axis3(b, i, b.a0[i])
    _, y3 = axis3(b, i, i, keep=True)
    return bnp.where(y3 >= -np.inf, bnp.exp(x3 - bnp.where(y3 > -np.inf, y3, 0.0)), 0.0), \
        (o, m, n), y3


def _logsumexp_vjp(b, i, g, need=None):
    w, (o, m, n), y3 = _lse_weights(b, i)
    g3 = as3(g, (o, 1, n))
    w = bnp.where(y3 > -np.inf, w, 0.0)
    return [(b.a0[i], bnp.reshape(g3 * w, b.shapes[b.a0[i]]))]


def _logsumexp_jvp(b, i, tangent):
    w, (o, m, n), y3 = _lse_weights(b, i)
    w = bnp.where(y3 > -np.inf, w, 0.0)
    t3 = as3(tangent(b.a0[i]), (o, m, n))
    return bnp.reshape(bnp.sum(w * t3, axis=1), b.shapes[i])


def _layer_norm_parts(b, i):
    """rs = 1 / sqrt(var + eps) per lane, recomputed from x, and y, as (outer, m)."""
    (o, m, _), x3 = axis3(b, i, b.a0[i])
    x = bnp.reshape(x3, (o, m))
    d = x - bnp.mean(x, axis=1, keepdims=True)
    rs = 1.0 / bnp.sqrt(bnp.mean(d * d, axis=1, keepdims=True) + float(b.imm[i]))
    return rs, bnp.reshape(var(b, i), (o, m)), (o, m)


def _layer_norm_vjp(b, i, g, need=None):
    rs, y, s = _layer_norm_parts(b, i)
    g2 = bnp.reshape(g, s)
    dx = rs * (g2 - bnp.mean(g2, axis=1, keepdims=True)
               - y * bnp.mean(g2 * y, axis=1, keepdims=True))
    return [(b.a0[i], bnp.reshape(dx, b.shapes[b.a0[i]]))]


def _layer_norm_jvp(b, i, tangent):
    rs, y, s = _layer_norm_parts(b, i)
    t = bnp.reshape(tangent(b.a0[i]), s)
    ty = rs * (t - bnp.mean(t, axis=1, keepdims=True) - y * bnp.mean(t * y, axis=1,
                                                                      keepdims=True))
    return bnp.reshape(ty, b.shapes[i])


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


# the softmax family: each row's (vjp, jvp) on traced values
RULES = {
    "softmax": (_softmax_vjp, _softmax_jvp),
    "causal_softmax": (_causal_softmax_vjp, _causal_softmax_jvp),
    "log_softmax": (_log_softmax_vjp, _log_softmax_jvp),
    "logsumexp": (_logsumexp_vjp, _logsumexp_jvp),
    "layer_norm": (_layer_norm_vjp, _layer_norm_jvp),
    "cross_entropy": (_cross_entropy_vjp, _cross_entropy_jvp),
}
