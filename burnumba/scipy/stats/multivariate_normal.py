"""``burnumba.scipy.stats.multivariate_normal``: the multivariate normal, as
scipy.stats.multivariate_normal (mean, cov): logpdf and pdf, with gradients to x, mean and
cov, through the Cholesky factor L of cov (the cholesky and solve rows):

    logpdf(x) = -(k log(2 pi) + 2 sum log diag L + |L^-1 (x - mean)|^2) / 2

x holds one point per row in its last axis (shape (k,) or (n, k)), as scipy's; the result
is squeezed as scipy squeezes it. cov may be a scalar or a vector (a diagonal), as scipy.
Only cov's lower triangle is read, as scipy's (its gradient lands there). A cov that is not
positive definite gives NaN (the cholesky row's convention); scipy's
``allow_singular=True`` (a pseudo-inverse) is not supported on traced values. Plain values
take the same formula (scipy's own logpdf raises for a cov its eigenvalue test finds near
singular, where this one has a Cholesky factor), so f(x) and value_and_grad(f)(x) agree.
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


def _dim(mean, cov):
    """The dimension, as scipy's _process_parameters infers it: mean's size, else cov's
    side (1 for a scalar or vector cov without a mean)."""
    if mean is not None:
        return int(np.prod(getattr(mean, "shape", np.shape(mean)), dtype=np.int64))
    cshape = getattr(cov, "shape", np.shape(cov))
    return 1 if len(cshape) < 2 else cshape[0]


def _lead(xshape, k):
    """The shape of the points' axes, as scipy's _process_quantiles reads x: a 1-D x is one
    point, or n points of dimension 1 when k == 1; a 0-d x is one point."""
    if len(xshape) == 0:
        return ()
    if len(xshape) == 1:
        return (xshape[0],) if k == 1 else ()
    return tuple(xshape[:-1])


def mahalanobis_numpy(x, mean, cov):
    """On plain values: (the squared Mahalanobis distance of each point of x, shape (n,);
    sum log diag L, half the log-determinant; k; the points' lead shape), with L the Cholesky
    factor of cov's lower triangle; both NaN for a cov that is not positive definite (scipy's
    own logpdf refuses a cov its eigenvalue test finds singular, where the factor exists and
    the traced path gives a number: this keeps f(x) and value_and_grad(f)(x) the same)."""
    x = np.asarray(x, dtype=np.float64)
    k = _dim(mean, cov)
    lead = _lead(x.shape, k)
    d = x.reshape(-1, k) - (0.0 if mean is None else np.asarray(mean, dtype=np.float64).ravel())
    c = np.asarray(_cov_matrix(np.asarray(cov, dtype=np.float64), k), dtype=np.float64)
    c = np.tril(c) + np.tril(c, -1).T
    try:
        L = np.linalg.cholesky(c)
    except np.linalg.LinAlgError:
        return np.full(d.shape[0], np.nan), np.nan, k, lead
    w = np.linalg.solve(L, d.T)
    return np.sum(w * w, axis=0), np.sum(np.log(np.diagonal(L))), k, lead


def mahalanobis_traced(x, mean, cov):
    """``mahalanobis_numpy`` on traced values, through the cholesky and solve rows: only cov's
    lower triangle is read, as scipy's eigh of cov reads it (the gradient lands there); a
    constant cov is numpy's factor, NaN if not positive definite."""
    k = _dim(mean, cov)
    lead = _lead(getattr(x, "shape", np.shape(x)), k)
    x = shapes.reshape(x, (-1, k))
    d = x if mean is None else x - shapes.reshape(mean, (k,))
    C = mirrored(_cov_matrix(cov, k), lower=True)
    if traced(C):
        L = linalg.cholesky(C)
    else:
        try:
            L = np.linalg.cholesky(np.asarray(C, dtype=np.float64))
        except np.linalg.LinAlgError:
            L = np.full((k, k), np.nan)
    w = linalg.solve(L, shapes.transpose(shapes.reshape(d, (-1, k))))    # L^-1 d, (k, n)
    return red.sum(w * w, axis=0), red.sum(ew.log(shapes.diagonal(L))), k, lead


def _logpdf_numpy(x, mean, cov):
    maha, half_logdet, k, lead = mahalanobis_numpy(x, mean, cov)
    out = -0.5 * (k * LOG_2PI + 2.0 * half_logdet + maha)
    return out.reshape(lead) if lead else out.reshape(())[()]


def logpdf(x, mean=None, cov=1, allow_singular=False):
    if not traced(x, mean, cov):
        if allow_singular:
            return eager("multivariate_normal", "logpdf", x, mean, cov, allow_singular=True)
        return _logpdf_numpy(x, mean, cov)
    if allow_singular:
        raise UnsupportedOpError(at_user_site(
            "multivariate_normal.logpdf(..., allow_singular=True) is not supported on traced "
            "values: pass a positive definite cov (or add a small multiple of the identity)"))
    maha, half_logdet, k, lead = mahalanobis_traced(x, mean, cov)
    out = -0.5 * (k * LOG_2PI + 2.0 * half_logdet + maha)
    return shapes.reshape(out, lead) if lead else shapes.reshape(out, ())


def pdf(x, mean=None, cov=1, allow_singular=False):
    if not traced(x, mean, cov):
        if allow_singular:
            return eager("multivariate_normal", "pdf", x, mean, cov, allow_singular=True)
        return np.exp(_logpdf_numpy(x, mean, cov))
    return ew.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean=None, cov=1):
    """k (1 + log 2 pi) / 2 + sum log diag L, half the log-determinant of cov through its
    Cholesky factor L (the cholesky row: NaN for a cov that is not positive definite; only
    cov's lower triangle is read, as in logpdf). It does not depend on mean."""
    if not traced(mean, cov):
        return eager("multivariate_normal", "entropy", mean, cov)
    k = _dim(mean, cov)
    C = mirrored(_cov_matrix(cov, k), lower=True)
    if not traced(C):                              # a traced mean only: a constant
        return _entropy_numpy(k, np.asarray(C, dtype=np.float64))
    return 0.5 * k * (1.0 + LOG_2PI) + red.sum(ew.log(shapes.diagonal(linalg.cholesky(C))))


def _entropy_numpy(k, C):
    try:
        L = np.linalg.cholesky(C)
    except np.linalg.LinAlgError:
        return np.nan
    return 0.5 * k * (1.0 + LOG_2PI) + float(np.sum(np.log(np.diagonal(L))))
