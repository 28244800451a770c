"""``burnumba.scipy.stats.binom``: the binomial distribution, as scipy.stats.binom (n, p,
loc): logpmf and pmf, with the gradient to p (and to n, through gammaln, as a continuous
parameter)."""
import numpy as np

from ...numpy import elementwise as ew
from .. import special
from ._common import eager, traced


def logpmf(k, n, p, loc=0):
    """gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1) + xlogy(k, p) + xlog1py(n - k, -p)
    for integer 0 <= k <= n (-inf elsewhere)."""
    if not traced(k, n, p, loc):
        return eager("binom", "logpmf", k, n, p, loc)
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    ok = ew.logical_and(ew.logical_and(ew.greater_equal(k, 0.0), ew.less_equal(k, n)),
                        ew.equal(ew.floor(k), k))
    ks = ew.where(ok, k, 0.0)
    comb = special.gammaln(n + 1.0) - special.gammaln(ks + 1.0) - special.gammaln(n - ks + 1.0)
    out = comb + special.xlogy(ks, p) + special.xlog1py(n - ks, -p)
    return ew.where(ok, out, -float("inf"))


def pmf(k, n, p, loc=0):
    if not traced(k, n, p, loc):
        return eager("binom", "pmf", k, n, p, loc)
    return ew.exp(logpmf(k, n, p, loc))
