"""``burnumba.scipy.linalg``: scipy.linalg's solve_triangular, cho_factor / cho_solve and expm
on traced values, built from the solve, cholesky and matmul rows; inv, det, solve, cholesky,
eigh, eigvalsh, svd, svdvals, norm and block_diag with scipy's conventions (``_dense.py``).

A triangular system goes through the general solve row (LU with partial pivoting of a
triangular matrix: backward stable, as the triangular substitution); only the triangle
scipy reads is read (the other is replaced by zeros), so values and gradients match scipy's
(gradients are 0 in the ignored triangle). lu_factor / lu_solve are not provided: scipy's
packed LU with row pivots chosen from the values cannot be a tape (the pivots would be frozen
at the first call); use bnp.linalg.solve, which is LU inside one row.
"""
import numpy as np

from .._errors import InputError, UnsupportedOpError, at_user_site
from ..numpy import elementwise as ew
from ..numpy import linalg as _la
from ..numpy import products, reductions as red, shapes
from ..numpy._common import _builder, namesake
from . import _dense
from ._dense import (block_diag, cholesky, det, eigh, eigvalsh, inv, mirrored,  # noqa: F401
                     norm, solve, svd, svdvals)

__all__ = ["solve_triangular", "cho_factor", "cho_solve", "expm", *_dense.__all__]


def _scipy(name):
    import scipy.linalg
    return getattr(scipy.linalg, name)


def _triangle(a, lower, unit_diagonal=False):
    n = np.shape(a)[-1] if _builder(a) is None else a.shape[-1]
    if unit_diagonal:
        part = shapes.tril(a, -1) if lower else shapes.triu(a, 1)
        return part + np.eye(n)
    return shapes.tril(a) if lower else shapes.triu(a)


def _trans(trans):
    t = {0: 0, "N": 0, 1: 1, "T": 1, 2: 1, "C": 1}.get(trans)
    if t is None:
        raise InputError(at_user_site(
            f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}"))
    return t


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """x with a x = b (trans 0), a^T x = b (1 or 2: real), a triangular: only its lower
    (``lower``) or upper triangle is read, with ones on the diagonal if ``unit_diagonal``.

    >>> bn.grad(lambda b: solve_triangular(np.array([[2.0, 0], [1, 1]]), b, lower=True).sum())(
    ...     np.ones(2))
    """
    if _builder(a, b) is None:
        return _scipy("solve_triangular")(a, b, trans=trans, lower=lower,
                                           unit_diagonal=unit_diagonal)
    t = _trans(trans)
    A = _triangle(a, lower, unit_diagonal)
    if t:
        A = shapes.swapaxes(A, -1, -2)
    return _la.solve(A, b)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): the Cholesky factor of a, L (lower) or L^T (upper, scipy's default), for
    cho_solve, from the triangle of a that scipy reads (the upper one unless ``lower``).
    scipy leaves arbitrary values in c's other triangle; here it holds zeros.
    A matrix that is not positive definite gives NaN (the cholesky row's convention)."""
    if _builder(a) is None:
        return _scipy("cho_factor")(a, lower=lower)
    L = _la.cholesky(mirrored(a, lower))
    return (L if lower else shapes.swapaxes(L, -1, -2)), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with A x = b, from cho_factor(A) = (c, lower): two triangular solves."""
    c, lower = c_and_lower
    if _builder(c, b) is None:
        return _scipy("cho_solve")((c, lower), b)
    if lower:
        L = shapes.tril(c)
        return _la.solve(shapes.swapaxes(L, -1, -2), _la.solve(L, b))
    U = shapes.triu(c)
    return _la.solve(U, _la.solve(shapes.swapaxes(U, -1, -2), b))


# Higham's (2005) degree-13 Pade approximant of exp, valid to double precision for a 1-norm
# up to THETA13; scaling and squaring for larger norms
_B13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
        129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
        40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152
_MAX_SQUARINGS = 64           # 2^64 THETA13 ~ 1e20: exp of a larger norm overflows anyway


def expm(A):
    """The matrix exponential of a square matrix (2-D): Higham's scaling and squaring with
    the degree-13 Pade approximant, as scipy.linalg.expm.

    A tape holds no branch, so the number of squarings s (ceil(log2(|A|_1 / theta13)), chosen
    from the values as scipy chooses it) is a traced value: A is scaled by 2^-s, and each of
    64 squaring steps is taken where its index is below s (where(j < s, X @ X, X)). The
    result is scipy's algorithm for every input the tape replays; 64 products of n x n per
    call, so it suits small matrices. Gradients flow through the solve and the products.
    """
    if _builder(A) is None:
        return _scipy("expm")(A)
    shape = A.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise UnsupportedOpError(at_user_site(
            f"expm of a traced value needs one square matrix (n, n), got shape {shape}"))
    n = shape[0]
    norm1 = red.max(red.sum(ew.absolute(A), axis=0))
    s = ew.maximum(ew.ceil(ew.log2(norm1 / _THETA13)), 0.0)
    s = ew.stop_gradient(ew.where(ew.isfinite(s), s, 0.0))
    X = A * ew.exp2(-s)
    eye = np.eye(n)
    X2 = products.matmul(X, X)
    X4 = products.matmul(X2, X2)
    X6 = products.matmul(X4, X2)
    b = _B13
    U = products.matmul(X, products.matmul(X6, b[13] * X6 + b[11] * X4 + b[9] * X2)
                        + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = (products.matmul(X6, b[12] * X6 + b[10] * X4 + b[8] * X2)
         + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye)
    R = _la.solve(V - U, V + U)
    for j in range(_MAX_SQUARINGS):
        R = ew.where(ew.less(float(j), s), products.matmul(R, R), R)
    return R

__getattr__ = namesake(__name__, "scipy.linalg")    # what burnumba does not define: scipy's own
