"""``burnumba.scipy.stats.nbinom``: the negative binomial distribution, as scipy.stats.nbinom
(n, p, loc): the number of failures before the n-th success. logpmf and pmf, with gradients
to p and to n (through gammaln, n a continuous parameter, as scipy allows). cdf, sf, logcdf
and logsf from the incomplete beta rows, with gradients to p and to n (k is data, read
through floor; n enters betainc's a, the row betainc_da: scipy's nbinom takes a real n > 0,
so the tails are smooth in it); a second derivative in n is an error that names betainc_da's
`a`."""
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



def _tails(k, n, p, loc, upper):
    """P(K <= k) = betainc(n, floor(k) + 1, p) (scipy's nbdtr), or its complement betaincc
    (nbdtrc), for 0 <= floor(k) < inf; 0 / 1 below 0 and at +inf; NaN for NaN k, n <= 0 or p
    outside (0, 1]."""
    k = k - loc if not isinstance(loc, (int, float)) or loc != 0 else k
    kf = ew.floor(k)
    inside = ew.logical_and(ew.greater_equal(kf, 0.0), ew.less(kf, INF))
    ks = ew.where(inside, kf, 0.0)
    pok = ew.logical_and(ew.greater(p, 0.0), ew.less_equal(p, 1.0))
    ps = ew.where(pok, p, 0.5)
    value = (special.betaincc if upper else special.betainc)(n, ks + 1.0, ps)
    low, high = (1.0, 0.0) if upper else (0.0, 1.0)
    out = ew.where(inside, value, ew.where(ew.less(kf, 0.0), low, high))
    return valid(out, ew.equal(kf, kf), ew.greater(n, 0.0), pok)


@method("nbinom")
def cdf(k, n, p, loc=0):
    """betainc(n, floor(k) + 1, p) for k >= 0, 0 below.

    >>> bn.grad(lambda p: cdf(3.0, 2.0, p))(0.4)
    """
    return _tails(k, n, p, loc, upper=False)


@method("nbinom")
def sf(k, n, p, loc=0):
    return _tails(k, n, p, loc, upper=True)


@method("nbinom")
def logcdf(k, n, p, loc=0):
    return ew.log(cdf(k, n, p, loc))


@method("nbinom")
def logsf(k, n, p, loc=0):
    return ew.log(sf(k, n, p, loc))
