"""``burnumba.scipy.stats.poisson``: the Poisson distribution, as scipy.stats.poisson (mu,
loc): logpmf and pmf, cdf, logcdf, sf and logsf, with the gradient to mu (k is data:
integer counts). cdf(k) = gammaincc(floor(k) + 1, mu), whose derivative in mu is -pmf(floor
k), as autograd's."""
import numpy as np

from ...numpy import elementwise as ew
from .. import special
from ._common import eager, traced


def logpmf(k, mu, loc=0):
    """xlogy(k, mu) - gammaln(k + 1) - mu for integer k >= 0 (-inf elsewhere)."""
    if not traced(k, mu, loc):
        return eager("poisson", "logpmf", k, mu, loc)
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    ok = ew.logical_and(ew.greater_equal(k, 0.0), ew.equal(ew.floor(k), k))
    ks = ew.where(ok, k, 0.0)
    out = special.xlogy(ks, mu) - special.gammaln(ks + 1.0) - mu
    return ew.where(ok, out, -float("inf"))


def pmf(k, mu, loc=0):
    if not traced(k, mu, loc):
        return eager("poisson", "pmf", k, mu, loc)
    return ew.exp(logpmf(k, mu, loc))


def _counts(k, mu, loc, fn, below):
    """fn(floor(k) + 1, mu) for k >= 0 (k - loc), ``below`` under 0; NaN for mu < 0."""
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    inside = ew.greater_equal(k, 0.0)
    ks = ew.where(inside, ew.floor(k), 0.0)
    out = ew.where(inside, fn(ks + 1.0, mu), below)
    return ew.where(ew.less(mu, 0.0), float("nan"), out)


def cdf(k, mu, loc=0):
    """P(K <= k) = gammaincc(floor(k) + 1, mu) for k >= 0, 0 below.

    >>> bn.grad(lambda mu: cdf(2.0, mu))(1.5)    # -pmf(2, 1.5) = -0.25102143016698353
    """
    if not traced(k, mu, loc):
        return eager("poisson", "cdf", k, mu, loc)
    return _counts(k, mu, loc, special.gammaincc, 0.0)


def sf(k, mu, loc=0):
    """P(K > k) = gammainc(floor(k) + 1, mu) for k >= 0, 1 below."""
    if not traced(k, mu, loc):
        return eager("poisson", "sf", k, mu, loc)
    return _counts(k, mu, loc, special.gammainc, 1.0)


def logcdf(k, mu, loc=0):
    if not traced(k, mu, loc):
        return eager("poisson", "logcdf", k, mu, loc)
    return ew.log(cdf(k, mu, loc))


def logsf(k, mu, loc=0):
    if not traced(k, mu, loc):
        return eager("poisson", "logsf", k, mu, loc)
    return ew.log(sf(k, mu, loc))
