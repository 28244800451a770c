"""Primitives the generated kernels call, as plain Python (the Python engine's versions).

``_native.py`` supplies the compiled versions under the same names and signatures.
"""
import numpy as np


def _operand(X, offset, rows, cols, ld, transposed):
    """op(X): the (rows x cols) matrix stored row-major at X[offset], ld apart, transposed
    when asked (then it is stored as cols x rows)."""
    stored = (cols, rows) if transposed else (rows, cols)
    m = X[offset:offset + stored[0] * ld].reshape(stored[0], ld)[:, :stored[1]]
    return m.T if transposed else m


def gemm(C, ta, tb, M, N, K, A, oa, lda, B, ob, ldb, beta, Y, oy, ldy):
    """Y[oy:] (M x N, row-major, ldy apart) = op(A) @ op(B) + beta * Y: BLAS's gemm with
    alpha = 1, where op(A) is M x K and op(B) is K x N."""
    a = _operand(A, oa, M, K, lda, ta)
    b = _operand(B, ob, K, N, ldb, tb)
    y = Y[oy:oy + M * ldy].reshape(M, ldy)[:, :N]
    product = np.matmul(a, b, dtype=np.float64)
    y[...] = product if beta == 0.0 else product + beta * y
