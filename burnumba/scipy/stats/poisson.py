"""``burnumba.scipy.stats.poisson``: the Poisson distribution, as scipy.stats.poisson (mu,
loc): logpmf and pmf, with the gradient to mu (k is data: integer counts)."""
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
