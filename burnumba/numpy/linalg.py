"""``burnumba.numpy.linalg`` (``bnp.linalg``): numpy.linalg's functions on traced values.

Four rows of the op table do the factorizations (``solve``, ``slogdet``, ``cholesky``,
``eigh``; see kernels/ops.py): each works on a stack of ``(n, n)`` matrices, and each keeps
its work space after its result in its own value slice, so the functions here hand out a
view of the result part. The rest is composed of those rows and existing ops:

* ``inv(a)`` is ``solve(a, I)``; ``det`` is ``sign * exp(logabsdet)`` of ``slogdet``
  (a negative determinant keeps its sign; the gradient det * A^-T is that of autograd;
  at an exactly singular matrix it is NaN);
* ``eigvalsh`` is ``eigh``'s eigenvalues; ``svd`` is ``eigh`` of the symmetric
  ``[[0, A], [A^T, 0]]`` (m + n square): its eigenvalues are +-s and |m - n| zeros, its
  eigenvectors for +s are ``[u; v] / sqrt(2)``. So s is accurate to eps times the largest
  (as LAPACK's, unlike eigh of the Gram matrix A^T A, which squares the condition
  number), at the price of an (m + n)-square Jacobi. A singular value of 0 (rank
  deficiency) has a kink, and there its vectors have no gradient;
* ``norm`` is numpy's definitions over abs / sum / max / min / sqrt, and svd for the
  matrix orders 2, -2 and 'nuc';
* ``qr`` is LAPACK's Householder reflections (dgeqrf, dorgqr) written in traced ops, so
  its Q and R are numpy's, signs included.

Gradients are those of HIPS autograd (``autograd.numpy.linalg``) and assume distinct
eigenvalues (eigh) and singular values (svd): at repeated eigenvalues a loss of the
eigenvectors gets NaN in reverse mode (as autograd), while forward mode leaves the repeated
eigenspace still (finite tangents: one valid choice, as the eigenvectors are not unique
there). The factorizations are O(n^3) loops without blocking (eigh: cyclic Jacobi, up to 60
sweeps): meant for the small matrices one differentiates (n up to a few dozen).
Eigenvectors are normalised so that the entry of largest magnitude of each is positive
(numpy's signs are LAPACK's, arbitrary), so compare them with numpy's up to sign. A
singular or non-finite input gives NaN where numpy raises LinAlgError (``bn.debug_nans()``
names the row); slogdet of a singular matrix is numpy's (0, -inf).

>>> import numpy as np, burnumba as bn
>>> a = np.array([[2.0, 1.0], [1.0, 3.0]])
>>> float(bn.grad(lambda a: np.linalg.slogdet(a)[1])(a)[0, 0])      # (A^-T)[0, 0]
0.6
"""
import math
import operator
from collections import namedtuple

import numpy as np

try:                                    # numpy 2's result types (numpy 1 returns tuples)
    from numpy.linalg._linalg import EighResult, SlogdetResult, SVDResult
except ImportError:                     # pragma: no cover
    EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
    SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
    SVDResult = namedtuple("SVDResult", "U S Vh")

from .._errors import InputError, ShapeError, UnsupportedOpError, at_user_site
from ..kernels import BY_NAME
from ..tracing.dispatch import implements
from ..tracing.tracer import Var
from .elementwise import absolute, exp, sqrt, square, stop_gradient as _stop_gradient, where
from .products import matmul
from .calculus import vander
from ._common import _NOVALUE, namesake
from .shapes import broadcast_to, concatenate, flip, reshape, swapaxes, transpose, triu
from .reductions import max as _max, min as _min, sum as _sum


def _builder(*xs):
    for x in xs:
        if isinstance(x, Var):
            return x._b
    return None


def _real(name, *xs):
    for x in xs:
        if not isinstance(x, Var) and np.iscomplexobj(x):
            raise UnsupportedOpError(at_user_site(
                f"numpy.linalg.{name}: complex input is not supported on traced values "
                "(burnumba traces real float64 / float32 arrays): split it into real and "
                "imaginary parts, or compute it with numpy outside the traced function"))


def _matrices(name, a):
    """Check a traced stack of square matrices (..., n, n); return n and the stack's shape."""
    _real(name, a)
    _square(name, a)
    return a.shape[-1], a.shape[:-2]


def _square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(at_user_site(
            f"numpy.linalg.{name}: the last two dimensions must be square, (..., n, n); got "
            f"shape {a.shape}. Pass a square matrix or a stack of them"))
    if a.shape[-1] == 0 or math.prod(a.shape) == 0:
        raise ShapeError(at_user_site(
            f"numpy.linalg.{name}: an empty matrix (shape {a.shape}) is not traced"))


def _stack(a, batch, shape):
    """a broadcast to batch + shape, as (nb,) + shape."""
    nb = math.prod(batch)
    return reshape(broadcast_to(a, tuple(batch) + shape), (nb,) + shape)


def _view(b, node, positions, shape):
    """The elements of ``node`` at ``positions`` (relative to the node), shaped ``shape``."""
    whole = Var(b, node, b.shapes[node])
    return b.gather([whole], b.off[node] + np.asarray(positions).reshape(-1), shape)


def _node(b, name, xs, params, imm=0.0):
    """A node of linalg row ``name``: its result, then its work space (the row's shape rule,
    kernels/blocks_linalg.py)."""
    _, result, work = BY_NAME[name].node_shapes(params)
    size = math.prod(result) + work
    xs = [b.lift(x) for x in xs]
    need = any(b.need[x.node] for x in xs)
    return b.add(name, (size,), xs[0].node, xs[1].node if len(xs) > 1 else -1,
                 params=params, imm=imm, need=need)


# -- the rows --------------------------------------------------------------------------------
def solve_rows(A, B):
    """X (nb, n, k) with A X = B for A (nb, n, n) and B (nb, n, k): the solve row."""
    nb, n, k = B.shape
    b = A._b if isinstance(A, Var) else B._b
    node = _node(b, "solve", (A, B), [nb, n, k])
    return _view(b, node, np.arange(nb * n * k), (nb, n, k))


def slogdet_rows(A):
    """(sign, logabsdet), each (nb,), of A (nb, n, n): the slogdet row."""
    nb, n = A.shape[:2]
    b = A._b
    node = _node(b, "slogdet", (A,), [nb, n])
    return (_view(b, node, 2 * np.arange(nb), (nb,)),
            _view(b, node, 2 * np.arange(nb) + 1, (nb,)))


def cholesky_rows(A):
    """The lower Cholesky factor (nb, n, n) of A's lower triangle: the cholesky row."""
    nb, n = A.shape[:2]
    b = A._b
    node = _node(b, "cholesky", (A,), [nb, n])
    return _view(b, node, np.arange(nb * n * n), (nb, n, n))


def eigh_rows(A):
    """(w (nb, n), U (nb, n, n)) of the symmetric matrices of A's lower triangle."""
    nb, n = A.shape[:2]
    b = A._b
    eps = float(np.finfo(b.dtype).eps)
    node = _node(b, "eigh", (A,), [nb, n], imm=eps * eps)
    base = (n + n * n) * np.arange(nb)[:, None]
    w = _view(b, node, base + np.arange(n), (nb, n))
    U = _view(b, node, base + n + np.arange(n * n), (nb, n, n))
    return w, U


# -- numpy.linalg's functions ----------------------------------------------------------------
@implements(np.linalg.solve)
def solve(a, b):
    """numpy.linalg.solve: x with a @ x = b, for a (..., n, n). As numpy 2, b is a vector
    (n,) only when b.ndim == 1; otherwise it is (..., n, k), its leading dimensions
    broadcast with a's.

    >>> import burnumba as bn, numpy as np
    >>> a = np.array([[3.0, 1.0], [1.0, 2.0]])
    >>> bn.grad(lambda b: np.linalg.solve(a, b).sum())(np.array([9.0, 8.0])).round(4)
    array([0.2, 0.4])
    """
    bld = _builder(a, b)
    if bld is None:
        return np.linalg.solve(a, b)
    _real("solve", a, b)
    A, B = bld.lift(a), bld.lift(b)
    _square("solve", A)
    n = A.shape[-1]
    vector = B.ndim == 1
    if vector:
        B = reshape(B, (B.shape[0], 1))
    if B.shape[-2] != n:
        raise ShapeError(at_user_site(
            f"numpy.linalg.solve: a has shape {A.shape} and b {B.shape}: b's "
            f"{'length' if vector else 'second-to-last dimension'} must be {n} (numpy 2 "
            "reads b as a stack of matrices unless b is 1-D; for a stack of vectors pass "
            "b[..., None] and take [..., 0] of the result)"))
    try:
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise ShapeError(at_user_site(
            f"numpy.linalg.solve: the stacks of a {A.shape} and b {B.shape} do not "
            "broadcast")) from None
    k = B.shape[-1]
    if k == 0 or math.prod(batch) == 0:
        raise ShapeError(at_user_site(
            f"numpy.linalg.solve: an empty right-hand side (shape {B.shape}) is not traced"))
    X = solve_rows(_stack(A, batch, (n, n)), _stack(B, batch, (n, k)))
    return reshape(X, tuple(batch) + ((n,) if vector else (n, k)))


@implements(np.linalg.inv)
def inv(a):
    """numpy.linalg.inv, as solve(a, I): dA = -Y^T G Y^T.

    >>> import burnumba as bn, numpy as np
    >>> float(bn.grad(lambda a: np.linalg.inv(a)[0, 0])(np.diag([2.0, 4.0]))[0, 0])
    -0.25
    """
    bld = _builder(a)
    if bld is None:
        return np.linalg.inv(a)
    n, batch = _matrices("inv", a)
    X = solve_rows(_stack(a, batch, (n, n)), _stack(bld.const(np.eye(n)), batch, (n, n)))
    return reshape(X, a.shape)


@implements(np.linalg.matrix_power)
def matrix_power(a, n):
    """numpy.linalg.matrix_power: numpy's products (a @ a, (a @ a) @ a, then repeated
    squaring from the lowest bit of n), so the values are numpy's; n < 0 is inv(a) ** -n,
    n == 0 the identity (a constant)."""
    bld = _builder(a)
    if bld is None:
        return np.linalg.matrix_power(a, n)
    try:
        n = operator.index(n)
    except TypeError:
        raise UnsupportedOpError(at_user_site(
            f"numpy.linalg.matrix_power: the exponent must be an integer, not {n!r}")) from None
    size, _ = _matrices("matrix_power", a)
    if n == 0:
        return bld.const(np.broadcast_to(np.eye(size), a.shape).copy())
    if n < 0:
        a, n = inv(a), -n
    if n <= 3:
        out = a
        for _ in range(n - 1):
            out = matmul(out, a)
        return out if n > 1 else a.copy()
    z = result = None
    while n > 0:
        z = a if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@implements(np.linalg.slogdet)
def slogdet(a):
    """numpy.linalg.slogdet: (sign, logabsdet) of a (..., n, n); the sign has gradient 0.

    >>> import burnumba as bn, numpy as np
    >>> bn.grad(lambda a: np.linalg.slogdet(a).logabsdet)(np.diag([2.0, -4.0]))
    array([[ 0.5 ,  0.  ],
           [ 0.  , -0.25]])
    """
    bld = _builder(a)
    if bld is None:
        return np.linalg.slogdet(a)
    n, batch = _matrices("slogdet", a)
    sign, logdet = slogdet_rows(_stack(a, batch, (n, n)))
    return SlogdetResult(reshape(sign, batch), reshape(logdet, batch))


@implements(np.linalg.det)
def det(a):
    """numpy.linalg.det, as sign * exp(logabsdet): gradient det * A^-T (NaN at an exactly
    singular matrix).

    >>> import burnumba as bn, numpy as np
    >>> bn.grad(lambda a: np.linalg.det(a))(np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[ 4., -3.],
           [-2.,  1.]])
    """
    if _builder(a) is None:
        return np.linalg.det(a)
    _matrices("det", a)
    sign, logdet = slogdet(a)
    return sign * exp(logdet)


@implements(np.linalg.cholesky)
def cholesky(a, /, *, upper=False):
    """numpy.linalg.cholesky: L lower with L @ L.T = a, reading a's lower triangle (its
    upper one with ``upper=True``, which returns L.T). Not positive definite: NaN.

    >>> import burnumba as bn, numpy as np
    >>> bn.grad(lambda a: np.linalg.cholesky(a)[1, 1])(np.array([[4.0, 2.0], [2.0, 5.0]]))
    array([[ 0.0625, -0.125 ],
           [-0.125 ,  0.25  ]])
    """
    bld = _builder(a)
    if bld is None:
        return np.linalg.cholesky(a, upper=True) if upper else np.linalg.cholesky(a)
    n, batch = _matrices("cholesky", a)
    src = swapaxes(a, -1, -2) if upper else a
    L = reshape(cholesky_rows(_stack(src, batch, (n, n))), a.shape)
    return swapaxes(L, -1, -2) if upper else L


@implements(np.linalg.eigh)
def eigh(a, UPLO="L"):
    """numpy.linalg.eigh: (eigenvalues ascending, eigenvectors as columns) of the symmetric
    matrix that a's lower (UPLO='L') or upper ('U') triangle defines. Gradients as HIPS
    autograd: the triangle read gets them (the diagonal once, each element below it the sum
    of the symmetric pair's); eigenvalues must be distinct where eigenvectors are used.

    >>> import burnumba as bn, numpy as np
    >>> bn.grad(lambda a: np.linalg.eigh(a)[0][1])(np.array([[2.0, 0.0], [0.0, 1.0]]))
    array([[1., 0.],
           [0., 0.]])
    """
    bld = _builder(a)
    if bld is None:
        return np.linalg.eigh(a, UPLO=UPLO)
    n, batch = _matrices("eigh", a)
    if UPLO not in ("L", "U", "l", "u"):
        raise ShapeError(at_user_site(f"numpy.linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}"))
    src = swapaxes(a, -1, -2) if UPLO in ("U", "u") else a
    w, U = eigh_rows(_stack(src, batch, (n, n)))
    return EighResult(reshape(w, batch + (n,)), reshape(U, a.shape))


@implements(np.linalg.eigvalsh)
def eigvalsh(a, UPLO="L"):
    """numpy.linalg.eigvalsh: eigh's eigenvalues (ascending)."""
    if _builder(a) is None:
        return np.linalg.eigvalsh(a, UPLO=UPLO)
    return eigh(a, UPLO)[0]


@implements(np.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """numpy.linalg.svd of a (..., m, n), through eigh of the symmetric (m + n) x (m + n)
    matrix [[0, a], [a^T, 0]], whose eigenvalues are +-s and |m - n| zeros, with eigenvectors
    [u; v] / sqrt(2) for +s (see the module's notes). full_matrices=True with m != n would
    need a basis of the null space, whose gradient is not defined: pass
    full_matrices=False.

    >>> import burnumba as bn, numpy as np
    >>> bn.grad(lambda a: np.linalg.svd(a, compute_uv=False)[0])(np.diag([3.0, 1.0]))
    array([[1., 0.],
           [0., 0.]])
    """
    bld = _builder(a)
    if bld is None:
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                             hermitian=hermitian)
    _real("svd", a)
    if a.ndim < 2 or a.size == 0:
        raise ShapeError(at_user_site(
            f"numpy.linalg.svd: a must be (..., m, n) and not empty; got shape {a.shape}"))
    m, n = a.shape[-2:]
    k = min(m, n)
    if compute_uv and full_matrices and m != n:
        raise UnsupportedOpError(at_user_site(
            f"numpy.linalg.svd(a, full_matrices=True) of a non-square {m} x {n} matrix: the "
            f"extra {abs(m - n)} singular vectors span a null space that is not unique, so "
            "their gradient is not defined. Pass full_matrices=False (or compute_uv=False)"))
    batch = a.shape[:-2]
    h = concatenate([
        concatenate([np.zeros(batch + (m, m)), a], axis=-1),
        concatenate([swapaxes(a, -1, -2), np.zeros(batch + (n, n))], axis=-1)],
        axis=-2)
    w, Q = eigh(h)
    s = flip(w[..., m + n - k:], axis=-1)          # the k largest, descending
    if not compute_uv:
        return s
    Q = flip(Q[..., m + n - k:], axis=-1) * math.sqrt(2.0)
    return SVDResult(Q[..., :m, :], s, swapaxes(Q[..., m:, :], -1, -2))


# -- QR: Householder reflections, as LAPACK's dgeqrf / dorgqr -------------------------------
try:
    from numpy.linalg._linalg import QRResult
except ImportError:                     # pragma: no cover
    QRResult = namedtuple("QRResult", "Q R")


@implements(np.linalg.qr)
def qr(a, mode="reduced"):
    """numpy.linalg.qr of a traced (m, n) matrix, by LAPACK's own algorithm in traced ops:
    for each column j < min(m, n), the Householder reflection H = I - tau v v^T of dlarfg
    (beta = -sign(alpha) * ||x||, tau = (beta - alpha) / beta, v = [1, x[1:] / (alpha -
    beta)]) applied to the rest of R and accumulated into Q, so Q and R are numpy's (R's
    diagonal holds the betas, signs included), to rounding. A column already zero below its
    diagonal is not reflected (tau = 0, as dlarfg), and the sign of alpha picks beta's:
    both are decisions (guards). Gradients through the reflections: those of the
    factorization on the branch taken. Modes 'reduced', 'complete' and 'r'; a stack of
    matrices is refused (loop over them).

    >>> import burnumba as bn, numpy as np
    >>> a = np.array([[3.0, 1.0], [4.0, 2.0]])
    >>> bool(np.allclose(bn.grad(lambda a: np.linalg.qr(a)[1][1, 1])(a),
    ...                  [[0.352, -0.8], [-0.264, 0.6]]))
    True
    """
    if _builder(a) is None:
        return np.linalg.qr(a, mode=mode)
    _real("qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise UnsupportedOpError(at_user_site(
            f"numpy.linalg.qr(a, mode={mode!r}) of a traced matrix: use mode 'reduced', "
            "'complete' or 'r'"))
    if a.ndim != 2 or a.size == 0:
        raise UnsupportedOpError(at_user_site(
            f"numpy.linalg.qr of a traced array of shape {a.shape}: one (m, n) matrix, not "
            "empty; for a stack, call it per matrix and stack the results"))
    m, n = a.shape
    k = min(m, n)
    R = a * 1.0                                   # a traced copy, written below
    Q = np.eye(m) * (a[0, 0] * 0.0 + 1.0) if mode != "r" else None
    for j in range(k):
        x = R[j:, j]
        alpha = x[0]
        rest = _sum(square(x[1:])) if m - j > 1 else alpha * 0.0
        if not bool(rest > 0.0):                  # nothing to annihilate: H = I (tau = 0)
            continue
        norm = sqrt(square(alpha) + rest)
        beta = -norm if bool(alpha >= 0.0) else norm
        tau = (beta - alpha) / beta
        v = concatenate([np.ones(1), x[1:] / (alpha - beta)])
        block = R[j:, j:]
        R[j:, j:] = block - tau * v[:, None] * matmul(v, block)[None, :]
        if Q is not None:
            cols = Q[:, j:]
            Q[:, j:] = cols - tau * matmul(cols, v)[:, None] * v[None, :]
    if mode == "r":
        return triu(R[:k, :])
    if mode == "complete":
        return QRResult(Q, triu(R))
    return QRResult(Q[:, :k], triu(R[:k, :]))


# -- least squares: lstsq and pinv, for matrices of full rank --------------------------------
def _full_rank(name, a, s, rcond):
    """The rank decision of lstsq / pinv: singular values above ``rcond`` times the largest
    count (numpy's cutoff); the count is a Python int, so a guard of the trace. A rank below
    min(m, n) is refused: there the solution jumps (numpy drops the small singular values),
    and the augmented solve below would divide by them."""
    m, n = a.shape[-2:]
    rank = int(_min(_sum(s > rcond * s[..., :1], axis=-1)))
    if rank < min(m, n):
        raise UnsupportedOpError(at_user_site(
            f"numpy.linalg.{name} of a {m} x {n} matrix of rank {rank} (singular values "
            f"above {rcond:.3g} times the largest): burnumba traces the full-rank case only, "
            "where the solution is differentiable. Drop the dependent columns or rows, or add "
            "a ridge term (np.linalg.solve(a.T @ a + lam * np.eye(n), a.T @ b))"))
    return rank


def _least_squares(a, B, s):
    """For a (..., m, n) of full rank and B (..., m, k): the x minimising |a x - B| (m >= n),
    or the x of least norm with a x = B (m < n), by one solve of Björck's augmented system

        m >= n: [[alpha I_m, a], [a^T, 0]] [r / alpha; x] = [B; 0]   (r = B - a x, a^T r = 0)
        m <  n: [[alpha I_n, a^T], [a, 0]] [x; y] = [0; B]           (x = -a^T y / alpha)

    whose condition number is that of a, not of a^T a as the normal equations'. alpha, the
    smallest singular value (``s``'s last), is where that holds best; it changes no
    solution, so its gradient is stopped."""
    bld = a._b
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    alpha = reshape(_stop_gradient(s[..., -1:]), batch + (1, 1))
    tall = m >= n
    p, q = (m, n) if tall else (n, m)
    top = a if tall else swapaxes(a, -1, -2)                           # (..., p, q)
    K = concatenate([
        concatenate([alpha * bld.const(np.broadcast_to(np.eye(p), batch + (p, p)).copy()),
                     top], axis=-1),
        concatenate([swapaxes(top, -1, -2), np.zeros(batch + (q, q))], axis=-1)], axis=-2)
    k = B.shape[-1]
    zeros = np.zeros(B.shape[:-2] + (n, k))
    rhs = concatenate([B, zeros], axis=-2) if tall else concatenate([zeros, B], axis=-2)
    X = solve(K, rhs)
    return X[..., m:, :] if tall else X[..., :n, :]


@implements(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    """numpy.linalg.lstsq for a of full rank: (x, residuals, rank, s) as numpy's, x by the
    augmented solve above (the least-squares solution, or the least-norm one when m < n);
    residuals the squared norms of b - a x when m > n; rank a Python int (a guard); s the
    singular values. A rank-deficient a is refused with the fix."""
    bld = _builder(a, b)
    if bld is None:
        return np.linalg.lstsq(a, b, rcond=rcond)
    _real("lstsq", a, b)
    A, B = bld.lift(a), bld.lift(b)
    if A.ndim != 2 or B.ndim not in (1, 2) or B.shape[0] != A.shape[0]:
        raise ShapeError(at_user_site(
            f"numpy.linalg.lstsq: a must be (m, n) and b (m,) or (m, k); got {A.shape} and "
            f"{B.shape}"))
    m, n = A.shape
    eps = float(np.finfo(bld.dtype).eps)
    rcond = eps * max(m, n) if rcond is None else (eps if rcond < 0 else float(rcond))
    s = svd(A, compute_uv=False)
    rank = _full_rank("lstsq", A, s, rcond)
    vector = B.ndim == 1
    Bm = reshape(B, (m, 1)) if vector else B
    X = _least_squares(A, Bm, s)
    residuals = _sum(square(Bm - A @ X), axis=0) if m > n else np.zeros(0, bld.dtype)
    return (reshape(X, (n,)) if vector else X), residuals, rank, s


@implements(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=_NOVALUE):
    """numpy.linalg.pinv of a (..., m, n) of full rank: the least-squares solution of
    a X = I (the augmented solve above), numpy's cutoff (numpy 2's defaults) deciding the
    rank, which must be full (a guard; a rank-deficient matrix is refused with the fix)."""
    bld = _builder(a)
    if bld is None:
        kw = {} if rtol is _NOVALUE else {"rtol": rtol}
        return np.linalg.pinv(a, rcond, hermitian, **kw)
    _real("pinv", a)
    if rcond is not None and rtol is not _NOVALUE:
        raise InputError(at_user_site("numpy.linalg.pinv: `rtol` and `rcond` can't be both "
                                      "set (numpy)"))
    s = svd(a, compute_uv=False)                 # checks a is (..., m, n), not empty
    m, n = a.shape[-2:]
    if rcond is None:
        rcond = 1e-15 if rtol is _NOVALUE else (
            max(m, n) * float(np.finfo(bld.dtype).eps) if rtol is None else rtol)
    _full_rank("pinv", a, s, float(rcond))
    eye = bld.const(np.broadcast_to(np.eye(m), a.shape[:-2] + (m, m)).copy())
    return _least_squares(a, eye, s)


@implements(np.polyfit)
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """numpy.polyfit with traced x, y or w: numpy's steps (the Vandermonde matrix, its columns
    scaled to unit norm, lstsq above, the scale divided out), for a full-rank fit (a
    rank-deficient one is refused, where numpy warns)."""
    bld = _builder(x, y, w)
    if bld is None:
        return np.polyfit(x, y, deg, rcond, full, w, cov)
    if cov:
        raise UnsupportedOpError(at_user_site(
            "np.polyfit(..., cov=True) of traced values: compute the covariance from the "
            "full=True results"))
    order = int(deg) + 1
    x, y = bld.lift(x), bld.lift(y)
    if x.ndim != 1 or y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise ShapeError(at_user_site(
            f"np.polyfit: x must be 1-D and y (len(x),) or (len(x), k); got {x.shape} and "
            f"{y.shape}"))
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(bld.dtype).eps)
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = bld.lift(w)
        lhs = lhs * reshape(w, (-1, 1))
        rhs = rhs * (w if rhs.ndim == 1 else reshape(w, (-1, 1)))
    scale = sqrt(_sum(lhs * lhs, axis=0))
    c, resids, rank, s = lstsq(lhs / scale, rhs, rcond)
    c = c / (scale if c.ndim == 1 else reshape(scale, (-1, 1)))
    return (c, resids, rank, s, rcond) if full else c


def _vector_norm(x, ord, axis, keepdims):
    ax = absolute(x)
    if ord is None or ord == 2:
        return sqrt(_sum(x * x, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return _max(ax, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return _min(ax, axis=axis, keepdims=keepdims)
    if ord == 0:
        return _sum(where(x != 0.0, 1.0, 0.0), axis=axis, keepdims=keepdims)
    if ord == 1:
        return _sum(ax, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ShapeError(at_user_site(
            f"numpy.linalg.norm: ord={ord!r} is a matrix norm; pass a 2-tuple axis or a 2-D x"))
    p = float(ord)
    return _sum(ax ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _matrix_norm(x, ord, axis, keepdims):
    r, c = (int(k) % x.ndim for k in axis)
    if r == c:
        raise ShapeError(at_user_site("numpy.linalg.norm: duplicate axes given"))
    if ord in (None, "fro", "f"):
        out = sqrt(_sum(x * x, axis=(r, c)))
    elif ord in (2, -2, "nuc"):
        rest = [k for k in range(x.ndim) if k not in (r, c)]
        s = svd(transpose(x, rest + [r, c]), compute_uv=False)
        out = (_max(s, axis=-1) if ord == 2 else _min(s, axis=-1) if ord == -2
               else _sum(s, axis=-1))
    elif ord in (1, -1):
        sums = _sum(absolute(x), axis=r)
        out = (_max if ord == 1 else _min)(sums, axis=c - 1 if c > r else c)
    elif ord in (np.inf, -np.inf):
        sums = _sum(absolute(x), axis=c)
        out = (_max if ord == np.inf else _min)(sums, axis=r - 1 if r > c else r)
    else:
        raise ShapeError(at_user_site(
            f"numpy.linalg.norm: invalid norm order {ord!r} for matrices (None, 'fro', "
            "'nuc', 1, -1, 2, -2, inf, -inf)"))
    if keepdims:
        shape = list(x.shape)
        shape[r] = shape[c] = 1
        out = reshape(out, tuple(shape))
    return out


@implements(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: vector norms (ord None / 2, 1, inf, -inf, 0, any p) along an int
    axis, matrix norms (None / 'fro', 'nuc', 1, -1, 2, -2, inf, -inf) over a 2-tuple axis;
    axis=None takes a 1-D x as a vector and a 2-D x as a matrix (and any x, ord=None, as
    a vector of all its elements).

    >>> import burnumba as bn, numpy as np
    >>> bn.grad(lambda x: np.linalg.norm(x))(np.array([3.0, 4.0]))
    array([0.6, 0.8])
    """
    if _builder(x) is None:
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    _real("norm", x)
    if axis is None:
        if ord is None:
            out = sqrt(_sum(x * x))
            return reshape(out, (1,) * x.ndim) if keepdims else out
        if x.ndim == 1:
            axis = (0,)
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ShapeError(at_user_site(
                f"numpy.linalg.norm: ord={ord!r} needs axis for a {x.ndim}-D array"))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    axis = tuple(axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis[0], keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ShapeError(at_user_site(f"numpy.linalg.norm: improper number of dimensions to "
                                  f"norm ({len(axis)} axes)"))


@implements(np.linalg.vector_norm)
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """numpy.linalg.vector_norm (numpy 2): a vector norm over ``axis`` (None: all elements;
    an int; or a tuple of axes, taken together as one vector).

    >>> import burnumba as bn, numpy as np
    >>> bn.grad(lambda x: np.linalg.vector_norm(x, ord=1))(np.array([[1.0, -2.0]]))
    array([[ 1., -1.]])
    """
    if _builder(x) is None:
        return np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    _real("vector_norm", x)
    axes = tuple(range(x.ndim)) if axis is None else (
        (int(axis),) if isinstance(axis, (int, np.integer)) else tuple(int(k) for k in axis))
    axes = tuple(sorted({k % x.ndim for k in axes}))
    rest = [k for k in range(x.ndim) if k not in axes]
    moved = transpose(x, rest + list(axes)) if x.ndim else x
    flat = reshape(moved, tuple(x.shape[k] for k in rest) + (
        math.prod(x.shape[k] for k in axes),))
    out = _vector_norm(flat, ord, -1, False)
    if keepdims:
        out = reshape(out, tuple(1 if k in axes else d for k, d in enumerate(x.shape)))
    return out


@implements(np.linalg.matrix_norm)
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """numpy.linalg.matrix_norm (numpy 2): norm(x, ord, axis=(-2, -1), keepdims)."""
    if _builder(x) is None:
        return np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
    _real("matrix_norm", x)
    if x.ndim < 2:
        raise ShapeError(at_user_site(
            f"numpy.linalg.matrix_norm: x must be (..., m, n); got shape {x.shape}"))
    return _matrix_norm(x, ord, (-2, -1), keepdims)


@implements(np.linalg.svdvals)
def svdvals(x, /):
    """numpy.linalg.svdvals (numpy 2): svd(x, compute_uv=False)."""
    if _builder(x) is None:
        return np.linalg.svdvals(x)
    return svd(x, compute_uv=False)


__all__ = ["solve", "inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "svd", "qr",
           "norm", "vector_norm", "matrix_norm", "svdvals"]

__getattr__ = namesake(__name__, "numpy.linalg")    # eig, matrix_rank, ...: numpy's own
