"""scipy.linalg's dense decompositions and solvers on traced values, under scipy's names,
signatures and conventions, built from burnumba.numpy.linalg's rows. Where scipy and numpy
differ, scipy's convention is kept:

- ``cholesky`` returns the upper factor unless ``lower=True`` and reads only that triangle;
- ``solve`` with ``assume_a`` 'sym' / 'pos' reads only the triangle ``lower`` names (as
  LAPACK's sytrf / potrf do), so the gradient lands in that triangle alone;
- ``eigh`` reads the lower triangle by default and solves the generalized problem
  ``a v = w b v`` through b's Cholesky factor L: the eigenvectors are L^-T times those of
  L^-1 a L^-T, normalised v^T b v = I as scipy's;
- ``svd`` defaults to ``full_matrices=True`` as scipy's (a square matrix, or pass False).

On plain values each function is scipy's own call, so a number outside a trace is scipy's.
"""
import numpy as np

from .._errors import InputError, UnsupportedOpError, at_user_site
from ..numpy import linalg as _la
from ..numpy import shapes
from ..numpy._common import _builder
from ..numpy.creation import asarray

__all__ = ["inv", "det", "solve", "cholesky", "eigh", "eigvalsh", "svd", "svdvals", "norm",
           "block_diag"]

_ASSUME = {None: "gen", "gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym",
           "her": "sym", "hermitian": "sym", "pos": "pos", "positive definite": "pos"}


def _scipy(name):
    import scipy.linalg
    return getattr(scipy.linalg, name)


def mirrored(a, lower):
    """The symmetric matrix of a's lower (or upper) triangle: the one LAPACK reads (a
    Cholesky or eigh of scipy's), so that the gradient lands in that triangle alone."""
    if lower:
        return shapes.tril(a) + shapes.swapaxes(shapes.tril(a, -1), -1, -2)
    return shapes.triu(a) + shapes.swapaxes(shapes.triu(a, 1), -1, -2)


def inv(a, overwrite_a=False, check_finite=True):
    """scipy.linalg.inv: the inverse of a square matrix (a stack of them)."""
    if _builder(a) is None:
        return _scipy("inv")(a)
    return _la.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """scipy.linalg.det: the determinant (gradient det * a^-T)."""
    if _builder(a) is None:
        return _scipy("det")(a)
    return _la.det(a)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """scipy.linalg.solve: x with a x = b (a^T x = b if ``transposed``). ``assume_a`` 'sym',
    'her' or 'pos' reads only a's upper triangle (the lower one with ``lower=True``); 'pos'
    solves through the Cholesky factor, so a matrix that is not positive definite gives NaN
    (scipy raises LinAlgError). 'gen' (the default) reads all of a."""
    kind = _ASSUME.get(assume_a)
    if kind is None:
        raise InputError(at_user_site(
            f"scipy.linalg.solve: assume_a={assume_a!r} is not one of 'gen', 'sym', 'her', "
            "'pos' (banded, diagonal and triangular forms: use solve_banded's dense matrix "
            "or solve_triangular)"))
    if _builder(a, b) is None:
        return _scipy("solve")(a, b, lower=lower, assume_a=assume_a, transposed=transposed)
    if kind == "gen":
        A = shapes.swapaxes(a, -1, -2) if transposed else a
        return _la.solve(A, b)
    A = mirrored(a, lower)                  # symmetric: a^T = a, transposed changes nothing
    if kind == "sym":
        return _la.solve(A, b)
    L = _la.cholesky(A)
    return _la.solve(shapes.swapaxes(L, -1, -2), _la.solve(L, b))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cholesky: U with U^T U = a (upper, scipy's default; only a's upper
    triangle is read), or L with L L^T = a if ``lower`` (a's lower triangle). Not positive
    definite: NaN (scipy raises LinAlgError)."""
    if _builder(a) is None:
        return _scipy("cholesky")(a, lower=lower)
    L = _la.cholesky(mirrored(a, lower))
    return L if lower else shapes.swapaxes(L, -1, -2)


def _refuse(name, **given):
    for arg, value in given.items():
        if value not in (None, False):
            raise UnsupportedOpError(at_user_site(
                f"scipy.linalg.{name}({arg}={value!r}) on a traced value is not supported: "
                f"leave {arg} at its default (take the slice of the full result instead)"))


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         type=1, check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """scipy.linalg.eigh: eigenvalues ascending (and eigenvectors as columns) of the symmetric
    matrix of a's lower triangle (upper if ``lower=False``); with ``b``, of the generalized
    problem a v = w b v (type 1), eigenvectors normalised v^T b v = I."""
    if _builder(a, b) is None:
        return _scipy("eigh")(a, b, lower=lower, eigvals_only=eigvals_only, type=type,
                              subset_by_index=subset_by_index,
                              subset_by_value=subset_by_value, driver=driver)
    _refuse("eigh", subset_by_index=subset_by_index, subset_by_value=subset_by_value)
    if type != 1:
        raise UnsupportedOpError(at_user_site(
            f"scipy.linalg.eigh(type={type!r}) on a traced value: only type=1 (a v = w b v)"))
    A = mirrored(a, lower)
    if b is None:
        w, v = _la.eigh(A)
        return w if eigvals_only else (w, v)
    L = _la.cholesky(mirrored(b, lower))
    # C = L^-1 A L^-T is symmetric with the same eigenvalues; its eigenvectors y give
    # v = L^-T y, and v^T B v = y^T y = I
    Li_A = _la.solve(L, A)
    C = _la.solve(L, shapes.swapaxes(Li_A, -1, -2))
    C = 0.5 * (C + shapes.swapaxes(C, -1, -2))
    w, y = _la.eigh(C)
    if eigvals_only:
        return w
    return w, _la.solve(shapes.swapaxes(L, -1, -2), y)


def eigvalsh(a, b=None, *, lower=True, overwrite_a=False, overwrite_b=False, type=1,
             check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """scipy.linalg.eigvalsh: eigh's eigenvalues."""
    if _builder(a, b) is None:
        return _scipy("eigvalsh")(a, b, lower=lower, type=type, subset_by_index=subset_by_index,
                                  subset_by_value=subset_by_value, driver=driver)
    return eigh(a, b, lower=lower, eigvals_only=True, type=type,
                subset_by_index=subset_by_index, subset_by_value=subset_by_value)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """scipy.linalg.svd: (U, s, Vh), or s if not ``compute_uv``. As numpy's on a traced value:
    full_matrices=True needs a square matrix (a null-space basis has no gradient)."""
    if _builder(a) is None:
        return _scipy("svd")(a, full_matrices=full_matrices, compute_uv=compute_uv,
                             lapack_driver=lapack_driver)
    out = _la.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def svdvals(a, overwrite_a=False, check_finite=True):
    """scipy.linalg.svdvals: the singular values, descending."""
    if _builder(a) is None:
        return _scipy("svdvals")(a)
    return _la.svdvals(a)


def norm(a, ord=None, axis=None, keepdims=False, check_finite=True):
    """scipy.linalg.norm: numpy.linalg.norm's orders and axes."""
    if _builder(a) is None:
        return _scipy("norm")(a, ord=ord, axis=axis, keepdims=keepdims)
    return _la.norm(a, ord=ord, axis=axis, keepdims=keepdims)


def block_diag(*arrs):
    """scipy.linalg.block_diag: the 2-D arrays (scalars and 1-D rows as scipy takes them) on
    the diagonal of one matrix, zeros elsewhere."""
    if _builder(*arrs) is None:
        return _scipy("block_diag")(*arrs)
    parts = []
    for x in arrs:
        x = asarray(x)
        nd = len(np.shape(x))
        if nd > 2:
            raise InputError(at_user_site(
                f"scipy.linalg.block_diag: arguments must be at most 2-D, got shape {x.shape}"))
        parts.append(shapes.reshape(x, (1, -1)) if nd < 2 else x)
    cols = sum(np.shape(p)[1] for p in parts)
    rows, left = [], 0
    for p in parts:
        r, c = np.shape(p)
        pieces = [np.zeros((r, left)), p, np.zeros((r, cols - left - c))]
        rows.append(shapes.concatenate(pieces, axis=1))
        left += c
    return shapes.concatenate(rows, axis=0)
