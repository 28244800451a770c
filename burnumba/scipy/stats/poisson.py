"""``burnumba.scipy.stats.poisson``: the Poisson distribution, as scipy.stats.poisson (mu,
loc): logpmf and pmf, cdf, logcdf, sf and logsf, with the gradient to mu (k is data:
integer counts). cdf(k) = gammaincc(floor(k) + 1, mu), whose derivative in mu is -pmf(floor
k), as autograd's."""
import numpy as np

from ...numpy import elementwise as ew
from .. import special
from ._common import method, traced


@method("poisson")
def logpmf(k, mu, loc=0):
    """xlogy(k, mu) - gammaln(k + 1) - mu for integer k >= 0 (-inf elsewhere)."""
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    ok = ew.logical_and(ew.greater_equal(k, 0.0), ew.equal(ew.floor(k), k))
    ks = ew.where(ok, k, 0.0)
    out = special.xlogy(ks, mu) - special.gammaln(ks + 1.0) - mu
    return ew.where(ok, out, -float("inf"))


@method("poisson")
def pmf(k, mu, loc=0):
    return ew.exp(logpmf(k, mu, loc))


def _counts(k, mu, loc, fn, below):
    """fn(floor(k) + 1, mu) for k >= 0 (k - loc), ``below`` under 0; NaN for mu < 0."""
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    inside = ew.greater_equal(k, 0.0)
    ks = ew.where(inside, ew.floor(k), 0.0)
    out = ew.where(inside, fn(ks + 1.0, mu), below)
    return ew.where(ew.less(mu, 0.0), float("nan"), out)


@method("poisson")
def cdf(k, mu, loc=0):
    """P(K <= k) = gammaincc(floor(k) + 1, mu) for k >= 0, 0 below.

    >>> bn.grad(lambda mu: cdf(2.0, mu))(1.5)    # -pmf(2, 1.5) = -0.25102143016698353
    """
    return _counts(k, mu, loc, special.gammaincc, 0.0)


@method("poisson")
def sf(k, mu, loc=0):
    """P(K > k) = gammainc(floor(k) + 1, mu) for k >= 0, 1 below."""
    return _counts(k, mu, loc, special.gammainc, 1.0)


@method("poisson")
def logcdf(k, mu, loc=0):
    return ew.log(cdf(k, mu, loc))


@method("poisson")
def logsf(k, mu, loc=0):
    return ew.log(sf(k, mu, loc))
