"""``burnumba.scipy.stats.multivariate_t``: the multivariate t distribution, as
scipy.stats.multivariate_t (loc, shape, df): logpdf and pdf, with gradients to x, loc, shape
and df, through the Cholesky factor L of shape (as multivariate_normal's):

    logpdf(x) = gammaln((df + k) / 2) - gammaln(df / 2) - k/2 log(df pi) - sum log diag L
                - (df + k) / 2 log1p(|L^-1 (x - loc)|^2 / df)

x holds one point per row in its last axis, shape may be a scalar, a vector (a diagonal) or a
matrix whose lower triangle is read, as scipy's; df = inf is the multivariate normal, as
scipy. A shape that is not positive definite gives NaN (the cholesky row's convention).
"""
import math

import numpy as np

from ..._errors import UnsupportedOpError, at_user_site
from ...numpy import elementwise as ew
from ...numpy import linalg, reductions as red, shapes
from .. import special
from ..linalg import mirrored
from . import multivariate_normal as mvn
from ._common import eager, positive, traced, valid


def _logpdf_numpy(x, loc, shape, df):
    """The same formula on plain values (scipy's own raises for a shape its eigenvalue test
    finds singular), so that f(x) and value_and_grad(f)(x) agree."""
    import scipy.special
    x = np.asarray(x, dtype=np.float64)
    k = mvn._dim(loc, shape)
    lead = mvn._lead(x.shape, k)
    d = x.reshape(-1, k) - (0.0 if loc is None else np.asarray(loc, dtype=np.float64).ravel())
    c = np.asarray(mvn._cov_matrix(np.asarray(shape, dtype=np.float64), k), dtype=np.float64)
    c = np.tril(c) + np.tril(c, -1).T
    try:
        L = np.linalg.cholesky(c)
    except np.linalg.LinAlgError:
        out = np.full(d.shape[0], np.nan)
    else:
        w = np.linalg.solve(L, d.T)
        maha = np.sum(w * w, axis=0)
        with np.errstate(all="ignore"):
            out = (scipy.special.gammaln(0.5 * (df + k)) - scipy.special.gammaln(0.5 * df)
                   - 0.5 * k * np.log(df * math.pi) - np.sum(np.log(np.diagonal(L)))
                   - 0.5 * (df + k) * np.log1p(maha / df))
        if not df > 0:
            out = np.full_like(out, np.nan)
    return out.reshape(lead) if lead else out.reshape(())[()]


def logpdf(x, loc=None, shape=1, df=1):
    if not traced(df) and np.ndim(df) == 0 and float(df) == np.inf:
        return mvn.logpdf(x, loc, shape)             # df = inf: the normal, as scipy
    if not traced(x, loc, shape, df):
        return _logpdf_numpy(x, loc, shape, df)
    xshape = getattr(x, "shape", np.shape(x))
    k = mvn._dim(loc, shape)
    lead = mvn._lead(xshape, k)
    x = shapes.reshape(x, (-1, k))
    d = x if loc is None else x - shapes.reshape(loc, (k,))
    C = mirrored(mvn._cov_matrix(shape, k), lower=True)
    if traced(C):
        L = linalg.cholesky(C)
    else:
        try:
            L = np.linalg.cholesky(np.asarray(C, dtype=np.float64))
        except np.linalg.LinAlgError:
            L = np.full((k, k), np.nan)
    w = linalg.solve(L, shapes.transpose(shapes.reshape(d, (-1, k))))
    maha = red.sum(w * w, axis=0)
    half = 0.5 * (df + k)
    out = (special.gammaln(half) - special.gammaln(0.5 * df) - 0.5 * k * ew.log(df * math.pi)
           - red.sum(ew.log(shapes.diagonal(L))) - half * ew.log1p(maha / df))
    out = valid(out, positive(df))
    return shapes.reshape(out, lead) if lead else shapes.reshape(out, ())


def pdf(x, loc=None, shape=1, df=1, allow_singular=False):
    if allow_singular:
        if not traced(x, loc, shape, df):
            return eager("multivariate_t", "pdf", x, loc, shape, df, allow_singular=True)
        raise UnsupportedOpError(at_user_site(
            "multivariate_t.pdf(..., allow_singular=True) is not supported on traced values: "
            "pass a positive definite shape (or add a small multiple of the identity)"))
    return ew.exp(logpdf(x, loc, shape, df))
