"""``burnumba.scipy.stats.multivariate_normal``: the multivariate normal, as
scipy.stats.multivariate_normal (mean, cov): logpdf and pdf, with gradients to x, mean and
cov, through the Cholesky factor L of cov (the cholesky and solve rows):

    logpdf(x) = -(k log(2 pi) + 2 sum log diag L + |L^-1 (x - mean)|^2) / 2

x holds one point per row in its last axis (shape (k,) or (n, k)), as scipy's; the result
is squeezed as scipy squeezes it. cov may be a scalar or a vector (a diagonal), as scipy.
Only cov's lower triangle is read, as scipy's (its gradient lands there). A cov that is not
positive definite gives NaN (the cholesky row's convention); scipy's
``allow_singular=True`` (a pseudo-inverse) is not supported on traced values.
"""
import numpy as np

from ..._errors import UnsupportedOpError, at_user_site
from ...numpy import elementwise as ew
from ...numpy import linalg, reductions as red, shapes
from ..linalg import mirrored
from ._common import LOG_2PI, eager, traced


def _cov_matrix(cov, k):
    nd = len(getattr(cov, "shape", np.shape(cov)))
    if nd == 0:
        return cov * np.eye(k)
    if nd == 1:
        return shapes.diag(cov)
    return cov


def logpdf(x, mean=None, cov=1, allow_singular=False):
    if not traced(x, mean, cov):
        return eager("multivariate_normal", "logpdf", x, mean, cov,
                     allow_singular=allow_singular)
    if allow_singular:
        raise UnsupportedOpError(at_user_site(
            "multivariate_normal.logpdf(..., allow_singular=True) is not supported on traced "
            "values: pass a positive definite cov (or add a small multiple of the identity)"))
    xshape = getattr(x, "shape", np.shape(x))
    k = xshape[-1] if len(xshape) else 1
    if len(xshape) == 0:
        x = shapes.reshape(x, (1,))
    d = x if mean is None else x - mean
    # the lower triangle, as scipy's eigh of cov reads it (the gradient lands there)
    L = linalg.cholesky(mirrored(_cov_matrix(cov, k), lower=True))
    flat = shapes.reshape(d, (-1, k))                    # (n, k)
    w = linalg.solve(L, shapes.transpose(flat))          # L^-1 d, (k, n)
    maha = red.sum(w * w, axis=0)                        # (n,)
    logdet = 2.0 * red.sum(ew.log(shapes.diagonal(L)))
    out = -0.5 * (k * LOG_2PI + logdet + maha)
    lead = tuple(xshape[:-1])
    return shapes.reshape(out, lead) if lead else shapes.reshape(out, ())


def pdf(x, mean=None, cov=1, allow_singular=False):
    if not traced(x, mean, cov):
        return eager("multivariate_normal", "pdf", x, mean, cov, allow_singular=allow_singular)
    return ew.exp(logpdf(x, mean, cov, allow_singular))
