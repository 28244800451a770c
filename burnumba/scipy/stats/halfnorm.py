"""``burnumba.scipy.stats.halfnorm``: |N(0, 1)| scaled, as scipy.stats.halfnorm (loc,
scale): logpdf, pdf, cdf, logcdf, sf, logsf, ppf, with gradients to x, loc and scale; 0
density below loc, as scipy."""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG2, LOG_2PI, LOG_PI, above, entropy_of, log_scale, method, positive, valid

INF = float("inf")
SQRT1_2 = 0.7071067811865476


@method("halfnorm")
def logpdf(x, loc=0.0, scale=1.0):
    """log(2) - log(2 pi) / 2 - z^2 / 2 - log(scale) for z >= 0"""
    inside, z = above(x, loc, scale)
    out = LOG2 - 0.5 * LOG_2PI - 0.5 * z * z - log_scale(scale)
    return valid(ew.where(inside, out, -INF), positive(scale))


@method("halfnorm")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("halfnorm")
def cdf(x, loc=0.0, scale=1.0):
    """erf(z / sqrt 2)"""
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, special.erf(z * SQRT1_2), 0.0), positive(scale))


@method("halfnorm")
def logcdf(x, loc=0.0, scale=1.0):
    """log(erf(z / sqrt 2)), as log1p(-erfc(z / sqrt 2)) for z > 1 (the digits near 0)"""
    inside, z = above(x, loc, scale)
    u = z * SQRT1_2
    out = ew.where(ew.greater(z, 1.0), ew.log1p(-special.erfc(u)), ew.log(special.erf(u)))
    return valid(ew.where(inside, out, -INF), positive(scale))


@method("halfnorm")
def sf(x, loc=0.0, scale=1.0):
    """erfc(z / sqrt 2) = 2 ndtr(-z), accurate in the tail"""
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, special.erfc(z * SQRT1_2), 1.0), positive(scale))


@method("halfnorm")
def logsf(x, loc=0.0, scale=1.0):
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, LOG2 + special.log_ndtr(-z), 0.0), positive(scale))


@method("halfnorm")
def ppf(q, loc=0.0, scale=1.0):
    """loc + scale ndtri((1 + q) / 2)"""
    return valid(loc + scale * special.ndtri(0.5 * (1.0 + q)), positive(scale))


@method("halfnorm")
def entropy(loc=0.0, scale=1.0):
    """log(pi / 2) / 2 + 1 / 2 + log scale."""
    return entropy_of(0.5 * (LOG_PI - LOG2) + 0.5, loc, scale)
