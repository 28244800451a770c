"""Reductions and scans as traced ops: sum, sumsq, inner, sum_axis, max_axis, cumsum, cumprod,
argsort (integer data: no derivative). Each row's vjp is the adjoint of its formula, its jvp
the tangent map.
"""
import numpy as np

from .. import numpy as bnp
from ..tracing.tracer import broadcast_to
from .graph import params, var


def axis3(b, i, node, keep=False):
    """(outer, m, inner) of an axis row, and node's value seen that way (keep: the output
    of a reduction, seen as (outer, 1, inner))."""
    outer, m, inner = params(b, i)[:3]
    shape = (outer, 1, inner) if keep else (outer, m, inner)
    return (outer, m, inner), bnp.reshape(var(b, node) if isinstance(node, int) else node,
                                             shape)


def as3(v, shape):
    return bnp.reshape(v, shape)


def axis_sizes(b, i):
    """(outer, m, inner) of axis row i."""
    (o, m, n), _ = axis3(b, i, b.a0[i])
    return (o, m, n)


def _sum_axis_vjp(b, i, g, need=None):
    (o, m, n), _ = axis3(b, i, b.a0[i])
    c = float(b.imm[i])
    g3 = as3(g, (o, 1, n))
    return [(b.a0[i], bnp.reshape(broadcast_to(c * g3, (o, m, n)), b.shapes[b.a0[i]]))]


def _sum_axis_jvp(b, i, tangent):
    t = tangent(b.a0[i])
    (o, m, n), t3 = axis3(b, i, t)
    return bnp.reshape(float(b.imm[i]) * bnp.sum(t3, axis=1), b.shapes[i])


def _max_mask(b, i):
    (o, m, n), x3 = axis3(b, i, b.a0[i])
    _, y3 = axis3(b, i, i, keep=True)
    mask = bnp.equal(x3, y3)
    return mask, bnp.sum(mask, axis=1, keepdims=True), (o, m, n)


def _max_axis_vjp(b, i, g, need=None):
    mask, ties, (o, m, n) = _max_mask(b, i)
    g3 = as3(g, (o, 1, n))
    return [(b.a0[i], bnp.reshape(g3 * mask / ties, b.shapes[b.a0[i]]))]


def _max_axis_jvp(b, i, tangent):
    mask, ties, (o, m, n) = _max_mask(b, i)
    t3 = as3(tangent(b.a0[i]), (o, m, n))
    return bnp.reshape(bnp.sum(t3 * mask, axis=1, keepdims=True) / ties, b.shapes[i])


def listed(b, i):
    p = params(b, i)
    return [int(k) for k in p[1:1 + p[0]]]


def _sum_vjp(b, i, g, need=None):
    c = float(b.imm[i])
    return [(k, broadcast_to(b.lift(c * g), b.shapes[k])) for k in listed(b, i)]


def _sum_jvp(b, i, tangent):
    terms = [bnp.sum(tangent(k)) for k in listed(b, i) if tangent(k) is not None]
    return float(b.imm[i]) * bnp.sum(terms)


def _sumsq_vjp(b, i, g, need=None):
    c = float(b.imm[i])
    return [(k, 2.0 * c * g * var(b, k)) for k in listed(b, i)]


def _sumsq_jvp(b, i, tangent):
    terms = [bnp.sum(var(b, k) * tangent(k)) for k in listed(b, i)
             if tangent(k) is not None]
    return 2.0 * float(b.imm[i]) * bnp.sum(terms)


def _inner_parts(b, i):
    p = params(b, i)
    m = p[0]
    return [int(k) for k in p[1:1 + m]], [int(k) for k in p[1 + m:1 + 2 * m]]


def _inner_vjp(b, i, g, need=None):
    xs, ws = _inner_parts(b, i)
    need = need or (lambda k: True)
    out = [(x, g * var(b, w)) for x, w in zip(xs, ws) if need(x)]
    out += [(w, g * var(b, x)) for x, w in zip(xs, ws) if need(w)]
    if b.a0[i] >= 0 and need(b.a0[i]):
        out.append((b.a0[i], g))
    return out


def _inner_jvp(b, i, tangent):
    xs, ws = _inner_parts(b, i)
    terms = []
    for x, w in zip(xs, ws):
        if tangent(x) is not None:
            terms.append(bnp.sum(tangent(x) * var(b, w)))
        if tangent(w) is not None:
            terms.append(bnp.sum(var(b, x) * tangent(w)))
    if b.a0[i] >= 0 and tangent(b.a0[i]) is not None:
        terms.append(tangent(b.a0[i]))
    return bnp.sum(terms)


# -- reductions and scans (#11) -----------------------------------------------------------------
def _scan(name, x, axis):
    """The cumsum / cumprod row of x along ``axis``, as a traced op."""
    return x._b.axis(name, x._b.lift(x), axis, x.shape)


def _cumsum_vjp(b, i, g, need=None):
    s = axis_sizes(b, i)
    rev = _scan("cumsum", bnp.flip(as3(g, s), axis=1), 1)     # sum_{k >= j} g_k
    return [(b.a0[i], bnp.reshape(bnp.flip(rev, axis=1), b.shapes[b.a0[i]]))]


def _cumsum_jvp(b, i, tangent):
    t = as3(tangent(b.a0[i]), axis_sizes(b, i))
    return bnp.reshape(_scan("cumsum", t, 1), b.shapes[i])


def _cumprod_weights(b, i):
    """W[o, j, k, n] = d y[o, k, n] / d a[o, j, n] = prod_{i <= k, i != j} a_i for k >= j, else
    0: the cumulative products with a_j replaced by 1 (m lanes of m, exact at zeros)."""
    (o, m, n), x3 = axis3(b, i, b.a0[i])
    eye = np.eye(m, dtype=bool).reshape(1, m, m, 1)
    others = _scan("cumprod", bnp.where(eye, 1.0, bnp.reshape(x3, (o, 1, m, n))), 2)
    return bnp.where(np.triu(np.ones((m, m), dtype=bool)).reshape(1, m, m, 1), others, 0.0)


def _cumprod_vjp(b, i, g, need=None):
    (o, m, n) = axis_sizes(b, i)
    da = bnp.sum(_cumprod_weights(b, i) * bnp.reshape(g, (o, 1, m, n)), axis=2)
    return [(b.a0[i], bnp.reshape(da, b.shapes[b.a0[i]]))]


def _cumprod_jvp(b, i, tangent):
    (o, m, n) = axis_sizes(b, i)
    t = bnp.reshape(tangent(b.a0[i]), (o, m, 1, n))
    return bnp.reshape(bnp.sum(_cumprod_weights(b, i) * t, axis=1), b.shapes[i])


def _argsort_vjp(b, i, g, need=None):
    return []                                   # integer data: no cotangent


def _argsort_jvp(b, i, tangent):
    return None


# the reductions: each row's (vjp, jvp) on traced values
RULES = {
    "sum_axis": (_sum_axis_vjp, _sum_axis_jvp),
    "max_axis": (_max_axis_vjp, _max_axis_jvp),
    "sum": (_sum_vjp, _sum_jvp),
    "sumsq": (_sumsq_vjp, _sumsq_jvp),
    "inner": (_inner_vjp, _inner_jvp),
    "cumsum": (_cumsum_vjp, _cumsum_jvp),
    "cumprod": (_cumprod_vjp, _cumprod_jvp),
    "argsort": (_argsort_vjp, _argsort_jvp),
}
