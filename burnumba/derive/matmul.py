"""The matrix product as traced ops: dA = g @ B^T, dB = A^T @ g over the batch of products, and
the tangent tA @ B + A @ tB.
"""
from .. import numpy as bnp
from .graph import params, var


def matmul_views(b, i):
    nb, M, K, N, sa, sb = params(b, i)[:6]
    A = bnp.reshape(var(b, b.a0[i]), (nb if sa else 1, M, K))
    B = bnp.reshape(var(b, b.a1[i]), (nb if sb else 1, K, N))
    return A, B, (nb, M, K, N, sa, sb)


def _matmul_vjp(b, i, g, need=None):
    A, B, (nb, M, K, N, sa, sb) = matmul_views(b, i)
    need = need or (lambda k: True)
    G = bnp.reshape(g, (nb, M, N))
    out = []
    # an operand shared by the nb products gets the sum of their gradients (of one: itself)
    if need(b.a0[i]):
        dA = bnp.matmul(G, bnp.swapaxes(B, 1, 2))
        out.append((b.a0[i], bnp.reshape(dA if sa or nb == 1 else bnp.sum(dA, axis=0),
                                         b.shapes[b.a0[i]])))
    if need(b.a1[i]):
        dB = bnp.matmul(bnp.swapaxes(A, 1, 2), G)
        out.append((b.a1[i], bnp.reshape(dB if sb or nb == 1 else bnp.sum(dB, axis=0),
                                         b.shapes[b.a1[i]])))
    return out


def _matmul_jvp(b, i, tangent):
    A, B, (nb, M, K, N, sa, sb) = matmul_views(b, i)
    ta, tb = tangent(b.a0[i]), tangent(b.a1[i])
    out = None
    if ta is not None:
        out = bnp.matmul(bnp.reshape(ta, A.shape), B)
    if tb is not None:
        term = bnp.matmul(A, bnp.reshape(tb, B.shape))
        out = term if out is None else out + term
    return bnp.reshape(out, b.shapes[i])


# the matrix product: each row's (vjp, jvp) on traced values
RULES = {
    "matmul": (_matmul_vjp, _matmul_jvp),
}
