"""Primitives the generated kernels call, as plain Python (the Python engine's versions).

``_native.py`` supplies the compiled versions under the same names and signatures.
"""
import ctypes
import math

import numpy as np

from .layout import C_USER, ERR_USER_RULE


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


def gemv(C, ta, M, N, A, oa, lda, X, ox, beta, Y, oy):
    """Y[oy:] = op(A) @ X[ox:] + beta * Y[oy:]: BLAS's gemv with alpha = 1 and unit strides,
    for the M x N matrix A stored row-major at A[oa], lda apart (op(A) = A^T when ta)."""
    a = _operand(A, oa, M, N, lda, False)
    a = a.T if ta else a
    rows, cols = a.shape
    y = Y[oy:oy + rows]
    product = np.matmul(a, X[ox:ox + cols], dtype=np.float64)
    y[...] = product if beta == 0.0 else product + beta * y


def user(C, slot, which, X, ox, nx, Y, oy, ny, A, oa, B, ob):
    """_native.user in Python: the user's function at ``table[3 * slot + which]`` of the
    table at ``C[C_USER]``, called through ctypes on pointers into the arrays."""
    if C is None or not C[C_USER]:
        return ERR_USER_RULE
    entry = int(C[C_USER]) + 8 * (3 * int(slot) + int(which))
    address = ctypes.c_int64.from_address(entry).value
    if not address:
        return ERR_USER_RULE
    real = ctypes.c_double if X.dtype == np.float64 else ctypes.c_float
    ptr = ctypes.POINTER(real)
    fn = ctypes.CFUNCTYPE(ctypes.c_int64, ptr, ptr, ptr, ptr, ctypes.c_int64,
                          ctypes.c_int64)(address)
    size = X.dtype.itemsize
    return int(fn(*[ctypes.cast(Z.ctypes.data + size * int(o), ptr)
                    for Z, o in ((X, ox), (Y, oy), (A, oa), (B, ob))], int(nx), int(ny)))


# -- exp without libm ------------------------------------------------------------------------
# libm's exp is a call LLVM cannot vectorize, and it dominates the map rows' loops that use
# it (exp, tanh, sigmoid, gelu: 3.6x slower over 65,536 doubles than the arithmetic below,
# which vectorizes; _native.VECTOR_MATH says where it is used).
# exp(x) = 2^k exp(r), k = rint(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2] (Cody and
# Waite: ln 2 in two parts, the first with 21 trailing zero bits so that k * LN2_HI is
# exact); exp(r) by its Taylor series to r^13 (truncation below 5e-18 relative). Measured
# against glibc's exp on 2 * 10^6 points over the whole range, subnormal results included:
# at most 1 ulp, 0.11 ulp on average (tests/test_exp.py).
LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10


def pow2(k):
    """2.0 ** k for an integer k in [-1022, 1023] (``_native`` builds the exponent bits)."""
    return math.ldexp(1.0, int(k))


def exp(x):
    """e ** x within 1 ulp, in float64 arithmetic; inf above 709.78..., 0 below -745.13...,
    NaN for NaN."""
    xc = min(max(x, -746.0), 710.0)     # beyond these exp is inf or 0; k stays in [-1076, 1024]
    kf = np.rint(xc * LOG2E)
    r = (xc - kf * LN2_HI) - kf * LN2_LO
    p = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (
        1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (
            1.0 / 3628800 + r * (1.0 / 39916800 + r * (1.0 / 479001600 + r * (
                1.0 / 6227020800)))))))))))))
    # 2^k in two factors, each a normal number: one rounding, into the subnormals too. At
    # and below -746 (exp is 0 there) the second factor is 0, so that the product is 0 with
    # no subnormal intermediate: those take a slow path in the FPU (2.2x slower for a slice
    # of -inf, softmax's masked entries)
    k = np.int64(kf)
    h = k >> 1
    y = p * pow2(h) * (pow2(k - h) if x > -746.0 else 0.0)
    return y if x == x else x
