"""``burnumba.scipy.stats.invgamma``: the inverse gamma distribution, as scipy.stats.invgamma
(a, loc, scale): 1 / Z for Z ~ gamma(a). logpdf and pdf with gradients to x, a, loc and
scale; cdf, logcdf, sf, logsf from the incomplete gamma rows, with gradients to x, a, loc
and scale (d/da the gammainc_da row, as gamma.cdf's; a second derivative in a is
refused)."""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG2, LOG_PI, above, entropy_of, log_scale, method, positive, valid

INF = float("inf")


@method("invgamma")
def logpdf(x, a, loc=0.0, scale=1.0):
    """-(a + 1) log(z) - gammaln(a) - 1 / z - log(scale) for z > 0"""
    inside, z = above(x, loc, scale, strict=True)
    out = -(a + 1.0) * ew.log(z) - special.gammaln(a) - 1.0 / z - log_scale(scale)
    return valid(ew.where(inside, out, -INF), positive(a), positive(scale))


@method("invgamma")
def pdf(x, a, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, a, loc, scale))


@method("invgamma")
def cdf(x, a, loc=0.0, scale=1.0):
    """gammaincc(a, 1 / z)"""
    inside, z = above(x, loc, scale, strict=True)
    return valid(ew.where(inside, special.gammaincc(a, 1.0 / z), 0.0), positive(a),
                 positive(scale))


def _log_of(p, q):
    """log(p) for p = 1 - q: log1p(-q) where p > 1/2 (its digits are in q)"""
    return ew.where(ew.greater(p, 0.5), ew.log1p(-q), ew.log(p))


@method("invgamma")
def logcdf(x, a, loc=0.0, scale=1.0):
    return _log_of(cdf(x, a, loc, scale), sf(x, a, loc, scale))


@method("invgamma")
def sf(x, a, loc=0.0, scale=1.0):
    """gammainc(a, 1 / z)"""
    inside, z = above(x, loc, scale, strict=True)
    return valid(ew.where(inside, special.gammainc(a, 1.0 / z), 1.0), positive(a),
                 positive(scale))


@method("invgamma")
def logsf(x, a, loc=0.0, scale=1.0):
    return _log_of(sf(x, a, loc, scale), cdf(x, a, loc, scale))


@method("invgamma")
def entropy(a, loc=0.0, scale=1.0):
    """a - (a + 1) digamma(a) + gammaln(a) + log scale; from a = 200 on, scipy's asymptotic
    series."""
    small = ew.less(a, 200.0)
    r = ew.where(small, a, 1.0)
    g = ew.where(small, 200.0, a)
    regular = r - (r + 1.0) * special.digamma(r) + special.gammaln(r)
    series = (0.5 * (1.0 - 3.0 * log_scale(g) + LOG2 + LOG_PI) + (2.0 / 3.0) / g
              + g ** -2.0 / 12.0 - g ** -3.0 / 90.0 - g ** -4.0 / 120.0)
    return entropy_of(ew.where(small, regular, series), loc, scale, positive(a))
