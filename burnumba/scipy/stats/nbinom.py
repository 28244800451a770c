"""``burnumba.scipy.stats.nbinom``: the negative binomial distribution, as scipy.stats.nbinom
(n, p, loc): the number of failures before the n-th success. logpmf and pmf, with gradients
to p and to n (through gammaln, n a continuous parameter, as scipy allows). (Its cdf needs
the incomplete beta function, which is not a row yet: nbinom.cdf stays refused.)"""
from ...numpy import elementwise as ew
from .. import special
from ._common import method, valid

INF = float("inf")


@method("nbinom")
def logpmf(k, n, p, loc=0):
    """gammaln(n + k) - gammaln(k + 1) - gammaln(n) + n log(p) + xlog1py(k, -p) for integer
    k >= 0 (-inf elsewhere); NaN for n <= 0 or p outside (0, 1]"""
    k = k - loc if not isinstance(loc, (int, float)) or loc != 0 else k
    ok = ew.logical_and(ew.greater_equal(k, 0.0), ew.equal(ew.floor(k), k))
    ks = ew.where(ok, k, 0.0)
    out = (special.gammaln(n + ks) - special.gammaln(ks + 1.0) - special.gammaln(n)
           + n * ew.log(p) + special.xlog1py(ks, -p))
    return valid(ew.where(ok, out, -INF), ew.greater(n, 0.0),
                 ew.logical_and(ew.greater(p, 0.0), ew.less_equal(p, 1.0)))


@method("nbinom")
def pmf(k, n, p, loc=0):
    return ew.exp(logpmf(k, n, p, loc))

