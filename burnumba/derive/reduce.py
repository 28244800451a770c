"""The n-ary reductions as traced ops: sum, sumsq and inner over their listed nodes. Each
row's vjp is the adjoint of its formula, its jvp the tangent map. (The rows along an axis,
sum_axis, max_axis and the scans, carry their rules in kernels/: derive/traced.py runs them.)
"""
from .. import numpy as bnp
from ..tracing.tracer import broadcast_to
from .graph import params, var


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


# the reductions: each row's (vjp, jvp) on traced values
RULES = {
    "sum": (_sum_vjp, _sum_jvp),
    "sumsq": (_sumsq_vjp, _sumsq_jvp),
    "inner": (_inner_vjp, _inner_jvp),
}
