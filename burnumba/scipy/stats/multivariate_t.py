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
from ...numpy import shapes
from .. import special
from . import multivariate_normal as mvn
from ._common import eager, positive, traced, valid


def _logpdf_numpy(x, loc, shape, df):
    """The same formula on plain values, so that f(x) and value_and_grad(f)(x) agree."""
    import scipy.special
    maha, half_logdet, k, lead = mvn.mahalanobis_numpy(x, loc, shape)
    with np.errstate(all="ignore"):
        out = (scipy.special.gammaln(0.5 * (df + k)) - scipy.special.gammaln(0.5 * df)
               - 0.5 * k * np.log(df * math.pi) - half_logdet
               - 0.5 * (df + k) * np.log1p(maha / df))
    if not df > 0:
        out = np.full_like(out, np.nan)
    return out.reshape(lead) if lead else out.reshape(())[()]


def logpdf(x, loc=None, shape=1, df=1):
    if not traced(df) and np.ndim(df) == 0 and float(df) == np.inf:
        return mvn.logpdf(x, loc, shape)             # df = inf: the normal, as scipy
    if not traced(x, loc, shape, df):
        return _logpdf_numpy(x, loc, shape, df)
    maha, half_logdet, k, lead = mvn.mahalanobis_traced(x, loc, shape)
    half = 0.5 * (df + k)
    out = (special.gammaln(half) - special.gammaln(0.5 * df) - 0.5 * k * ew.log(df * math.pi)
           - half_logdet - half * ew.log1p(maha / df))
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
