"""``burnumba.scipy.stats.invgamma``: the inverse gamma distribution, as scipy.stats.invgamma
(a, loc, scale): 1 / Z for Z ~ gamma(a). logpdf and pdf with gradients to x, a, loc and
scale; cdf, logcdf, sf, logsf from the incomplete gamma rows, with gradients to x, a, loc
and scale (d/da the gammainc_da row, as gamma.cdf's; a second derivative in a is
refused)."""
from ...numpy import elementwise as ew
from .. import special
from ._common import above, log_scale, method, positive, valid

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
