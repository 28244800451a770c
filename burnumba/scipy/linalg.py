"""``burnumba.scipy.linalg``: scipy.linalg's solve_triangular, cho_factor / cho_solve,
lu_factor / lu_solve / lu, expm and logm on traced values, built from the solve, cholesky and
matmul rows; inv, det, solve, cholesky, eigh, eigvalsh, svd, svdvals, norm and block_diag
with scipy's conventions (``_dense.py``).

A triangular system goes through the general solve row (LU with partial pivoting of a
triangular matrix: backward stable, as the triangular substitution); only the triangle
scipy reads is read (the other is replaced by zeros), so values and gradients match scipy's
(gradients are 0 in the ignored triangle).

lu_factor / lu choose their row pivots from the values, as LAPACK does: a decision, taken at
trace time from the matrix's values (the elimination's own columns, evaluated as the tape
computes them) and recorded as one guard of the tape, "every pivot is still the first
largest of its column" (docs/guide/control-flow.md). The elimination itself is traced as
ops with those pivots fixed, so gradients flow through it; a call whose matrix would pivot
otherwise fails the guard and is traced again (a new variant), never a wrong factorization.
"""
import numpy as np

from .._errors import InputError, UnsupportedOpError, at_user_site
from ..numpy import elementwise as ew
from ..numpy import linalg as _la
from ..numpy import products, reductions as red, shapes
from ..numpy._common import _builder, namesake
from ..tracing.concrete import decide, peek
from . import _dense
from ._dense import (block_diag, cholesky, det, eigh, eigvalsh, inv, mirrored,  # noqa: F401
                     norm, solve, svd, svdvals)

__all__ = ["solve_triangular", "cho_factor", "cho_solve", "lu_factor", "lu_solve", "lu",
           "expm", "logm", *_dense.__all__]


def _scipy(name):
    import scipy.linalg
    return getattr(scipy.linalg, name)


def _triangle(a, lower, unit_diagonal=False):
    n = np.shape(a)[-1] if _builder(a) is None else a.shape[-1]
    if unit_diagonal:
        part = shapes.tril(a, -1) if lower else shapes.triu(a, 1)
        return part + np.eye(n)
    return shapes.tril(a) if lower else shapes.triu(a)


def _trans(trans, name="solve_triangular"):
    t = {0: 0, "N": 0, 1: 1, "T": 1, 2: 1, "C": 1}.get(trans)
    if t is None:
        raise InputError(at_user_site(
            f"{name}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}"))
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


# -- LU with partial pivoting: the pivots decided at trace time, guarded -------------------
_LU_FIX = ("pass the matrix as an argument of the transformed function, or use "
           "numpy.linalg.solve (LU inside one row, no decision)")


def _lu_args(name, a):
    if len(a.shape) != 2:
        raise UnsupportedOpError(at_user_site(
            f"{name} of a traced value needs one matrix (m, n), got shape {a.shape}: call it "
            "per matrix, or use numpy.linalg.solve for stacks"))


def _eliminate(name, a):
    """a = P L U by Doolittle's elimination with partial pivoting, as LAPACK's getrf:
    (order, piv, L, U), ``order[i]`` being the row of a at row i of L U (a[order] = L U),
    ``piv`` LAPACK's 0-based row interchanges, L (m, K) unit lower, U (K, n), K = min(m, n).

    At step k the remaining block S (rows in the order the swaps so far left them) is
    evaluated now, from the trace's input values (tracing/concrete.peek), and the pivot is
    the first row of largest |S[:, 0]| (LAPACK's idamax). The step is traced as ops with
    that row fixed: a static row gather, the multipliers S[1:, 0] / pivot and the update
    S[1:, 1:] - outer(multipliers, pivot row). The decisions are kept as one guard: every
    other candidate's |S[j, 0]| is below the pivot's (or equal, for a row after it),
    checked on the traced values of every run. O(K) steps of O(m n) ops: suited to small
    matrices, as expm."""
    m, n = a.shape
    K = min(m, n)
    order = np.arange(m)
    piv = np.zeros(K, dtype=np.int32)
    cols, rows, gaps, strict = [], [], [], []
    S = a
    for k in range(K):
        column = peek(S, name, _LU_FIX)[:, 0]
        p = int(np.argmax(np.abs(column)))        # the first largest, as idamax
        piv[k] = k + p
        if m - k > 1:                             # the guard's part of this step
            others = np.array([j for j in range(m - k) if j != p])
            c = ew.absolute(S[:, 0])
            gaps.append(c[others] - c[p])
            strict.append(others < p)
        if p:
            idx = np.arange(m - k)
            idx[0], idx[p] = p, 0
            S = S[idx]
            order[k], order[k + p] = order[k + p], order[k]
        pivot = S[0, 0]
        rows.append(S[0, :])
        if m - k > 1:
            # a zero pivot leaves its column's zeros (no division), as LAPACK
            mult = S[1:, 0] / ew.where(ew.equal(pivot, 0.0), 1.0, pivot)
            cols.append((mult, order[k + 1:].copy()))
            if n - k > 1:
                S = S[1:, 1:] - products.outer(mult, S[0, 1:])
        else:
            cols.append((None, None))
    if gaps:
        gap = shapes.concatenate(gaps) if len(gaps) > 1 else gaps[0]
        mask = np.concatenate(strict)
        bad = red.sum(ew.where(mask, ew.greater_equal(gap, 0.0), ew.greater(gap, 0.0)))
        decide(bad, f"{name}'s pivot choice: a row other than the largest of its column "
               "would be the pivot")
    # L's columns are in the row order of their step; later swaps move their rows
    where_now = np.argsort(order)
    L_cols = []
    for k, (mult, at) in enumerate(cols):
        head = np.zeros(k + 1)
        head[k] = 1.0
        if mult is None:
            L_cols.append(head)
            continue
        moved = np.argsort(where_now[at])
        L_cols.append(shapes.concatenate([head, mult[moved]]))
    L = shapes.stack(L_cols, axis=1)
    U = shapes.stack([shapes.concatenate([np.zeros(k), r]) if k else r
                      for k, r in enumerate(rows)])
    return order, piv, L, U


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv) of a (m, n), as scipy.linalg.lu_factor: L (unit diagonal, not stored) and U
    packed in one matrix, ``piv`` LAPACK's 0-based row interchanges (row i was swapped with
    row piv[i]; int32). Differentiable in a; the pivots are a decision of the trace, guarded
    (a matrix that pivots otherwise is traced again). For ``lu_solve``.

    >>> bn.grad(lambda a: lu_solve(lu_factor(a), np.ones(2)).sum())(np.array([[1.0, 2],
    ...                                                                        [3, 4]]))
    """
    if _builder(a) is None:
        return _scipy("lu_factor")(a, check_finite=check_finite)
    _lu_args("lu_factor", a)
    m, n = a.shape
    _, piv, L, U = _eliminate("lu_factor", a)
    lower = L - np.eye(m, min(m, n))                # the unit diagonal is not stored
    if m > n:
        return lower + shapes.concatenate([U, np.zeros((m - n, n))]), piv
    if m < n:
        return shapes.concatenate([lower, np.zeros((m, n - m))], axis=1) + U, piv
    return lower + U, piv


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """(P, L, U) with a = P @ L @ U, as scipy.linalg.lu: P a permutation matrix (m, m),
    L (m, K) unit lower triangular, U (K, n), K = min(m, n); ``permute_l``: (P @ L, U);
    ``p_indices``: (p, L, U) with a = L[p] @ U. P and p are constants of the trace (the
    pivots, guarded as in ``lu_factor``); L and U carry the gradients."""
    if _builder(a) is None:
        return _scipy("lu")(a, permute_l=permute_l, check_finite=check_finite,
                            p_indices=p_indices)
    _lu_args("lu", a)
    order, _, L, U = _eliminate("lu", a)
    p = np.argsort(order)                           # a = L[p] @ U
    if permute_l:
        return L[p], U
    if p_indices:
        return p.astype(np.int32), L, U
    m = a.shape[0]
    P = np.zeros((m, m))
    P[np.arange(m), p] = 1.0
    return P, L, U


def _pivots(piv, n):
    """The row order (a[order] = L U) of LAPACK's interchanges ``piv``; a traced piv (an
    argument) is read now and guarded to stay the same."""
    if _builder(piv) is not None:
        values = peek(piv, "lu_solve", "pass piv as a numpy array, not a traced argument")
        changed = red.sum(ew.not_equal(piv, values))
        decide(changed, "lu_solve's pivots, read from a traced piv")
        piv = values
    piv = np.asarray(piv).astype(np.int64)
    order = np.arange(n)
    for k, p in enumerate(piv):
        if not 0 <= p < n:
            raise InputError(at_user_site(
                f"lu_solve: piv[{k}] = {p} is not a row of the {n} x {n} factor (LAPACK's "
                "0-based interchanges, as lu_factor returns them)"))
        order[k], order[p] = order[p], order[k]
    return order


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with a x = b (trans 0) or a^T x = b (1, 2), from lu_factor(a) = (lu, piv), as
    scipy.linalg.lu_solve: two triangular solves and the pivots' row permutation."""
    lu_, piv = lu_and_piv
    if _builder(lu_, piv, b) is None:
        return _scipy("lu_solve")((lu_, piv), b, trans=trans, check_finite=check_finite)
    t = _trans(trans, "lu_solve")
    shape = np.shape(lu_) if _builder(lu_) is None else lu_.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(at_user_site(
            f"lu_solve: the factor must be square (n, n), as lu_factor's of a square matrix, "
            f"got shape {shape}"))
    n = shape[0]
    order = _pivots(piv, n)
    L = _triangle(lu_, True, unit_diagonal=True)
    U = _triangle(lu_, False)
    if not t:                                       # L U x = b[order]
        return _la.solve(U, _la.solve(L, b[order]))
    y = _la.solve(shapes.swapaxes(L, -1, -2), _la.solve(shapes.swapaxes(U, -1, -2), b))
    return y[np.argsort(order)]                     # x[order] = y


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
    norm1 = _la.norm(A, 1)
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


# log(I + Y) = integral over [0, 1] of Y (I + t Y)^-1 dt; Gauss-Legendre's 8 points on it are
# the [8/8] Pade approximant (Higham 2001, "Evaluating Pade approximants of the matrix
# logarithm"); on a scalar y its relative error is below 2e-16 for |y| <= 0.34 and 7e-15 at
# y = -0.4 (computed against log1p), so ||Y||_1 <= 0.25 keeps a margin. The nodes and
# weights are numpy's leggauss(8) moved to [0, 1] (a test compares them; importing
# numpy.polynomial here added 2.5 ms to every `import burnumba`)
_LOG_T = (0.019855071751231912, 0.10166676129318664, 0.2372337950418355, 0.4082826787521751,
          0.5917173212478248, 0.7627662049581645, 0.8983332387068134, 0.9801449282487681)
_LOG_W = (0.05061426814518853, 0.11119051722668721, 0.15685332293894344, 0.18134189168918083,
          0.18134189168918083, 0.15685332293894344, 0.11119051722668721, 0.05061426814518853)
_LOG_THETA = 0.25
_MAX_ROOTS = 64               # (1e300)^(2^-64) - 1 ~ 4e-17: any finite matrix is near I by then
_MAX_DB_STEPS = 100


def _not_real_log(what):
    return InputError(at_user_site(
        f"logm of a traced matrix: {what}, so the matrix is singular or has an eigenvalue "
        "on the closed negative real axis, where scipy's logm is complex (burnumba has no "
        "complex numbers); shift or scale the matrix, or take logm of plain values with "
        "scipy"))


def _sqrtm(A, eye):
    """A^(1/2) by the product form of the Denman-Beavers iteration (Higham, Functions of
    Matrices, (6.17)): M <- (I + (M + M^-1) / 2) / 2 and Y <- Y (I + M^-1) / 2 from M = Y =
    A, M -> I and Y -> A^(1/2) quadratically. It stops once ||M - I||_1 is within 1e-10, or
    stops falling by half below 1e-6 (rounding's floor, higher for an ill-conditioned A):
    decisions, each a guard of the tape; one more step then leaves Y at rounding's level."""
    M, Y = A, A
    before = None
    for _ in range(_MAX_DB_STEPS):
        M_inv = _la.inv(M)
        Y = products.matmul(Y, (eye + M_inv) * 0.5)
        M = 0.5 * (eye + 0.5 * (M + M_inv))
        off = _la.norm(M - eye, 1)
        if bool(off <= 1e-10) or (before is not None and bool(off <= 1e-6)
                                  and bool(off > 0.5 * before)):
            return products.matmul(Y, (eye + _la.inv(M)) * 0.5)
        before = off
    raise _not_real_log(f"its square root did not converge in {_MAX_DB_STEPS} steps")


def logm(A, disp=True):
    """The principal matrix logarithm of a square matrix (2-D), as scipy.linalg.logm, by
    inverse scaling and squaring without a Schur form: k square roots (``_sqrtm``) until
    ||A^(1/2^k) - I||_1 <= 0.25, then log(I + Y) by the [8/8] Pade approximant as 8 solves
    (Gauss-Legendre on the integral of Y (I + t Y)^-1), times 2^k. How many roots and
    iterations is decided from the values, each decision a guard (a matrix that needs others
    traces again). Gradients flow through the inverses, products and solves. With
    ``disp=False``, (logm, scipy's error estimate ||expm(logm A) - A||_1 / ||A||_1). A
    matrix whose logarithm is not real raises an error that says so (scipy's is complex)."""
    if _builder(A) is None:
        return _scipy("logm")(A, disp=disp)
    shape = A.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise UnsupportedOpError(at_user_site(
            f"logm of a traced value needs one square matrix (n, n), got shape {shape}"))
    eye = np.eye(shape[0])
    X, k = A, 0
    while not bool(_la.norm(X - eye, 1) <= _LOG_THETA):
        if k == _MAX_ROOTS:
            raise _not_real_log(f"{_MAX_ROOTS} square roots did not bring it near I")
        X, k = _sqrtm(X, eye), k + 1
    Y = X - eye
    L = _LOG_W[0] * _la.solve(eye + _LOG_T[0] * Y, Y)
    for t, w in zip(_LOG_T[1:], _LOG_W[1:]):
        L = L + w * _la.solve(eye + t * Y, Y)
    L = L * 2.0 ** k
    if disp:
        return L
    return L, _la.norm(expm(L) - A, 1) / _la.norm(A, 1)


__getattr__ = namesake(__name__, "scipy.linalg")    # what burnumba does not define: scipy's own
