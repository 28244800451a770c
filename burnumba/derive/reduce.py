"""inner (BurTorch's fused neuron: sum_k x_k . w_k + bias) as traced ops: its vjp is the
adjoint of its formula, its jvp the tangent map. (The other reductions carry their rules in
kernels/blocks_reduce.py: derive/traced.py runs them.)
"""
from .. import numpy as bnp
from .graph import params, var


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
    "inner": (_inner_vjp, _inner_jvp),
}
