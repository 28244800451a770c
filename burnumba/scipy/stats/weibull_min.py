"""``burnumba.scipy.stats.weibull_min``: the Weibull distribution, as scipy.stats.weibull_min
(c, loc, scale): sf = exp(-z^c) for z >= 0. logpdf, pdf, cdf, logcdf, sf, logsf, ppf, with
gradients to x, c, loc and scale; 0 density below loc."""
from ...numpy import elementwise as ew
from .. import special
from ._common import EULER, above, entropy_of, log1mexp, log_scale, method, positive, valid

INF = float("inf")


@method("weibull_min")
def logpdf(x, c, loc=0.0, scale=1.0):
    """log(c) + (c - 1) log(z) - z^c - log(scale)"""
    inside, z = above(x, loc, scale, finite=True)
    out = log_scale(c) + special.xlogy(c - 1.0, z) - z ** c - log_scale(scale)
    return valid(ew.where(inside, out, -INF), positive(c), positive(scale))


@method("weibull_min")
def pdf(x, c, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, c, loc, scale))


@method("weibull_min")
def cdf(x, c, loc=0.0, scale=1.0):
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, -ew.expm1(-z ** c), 0.0), positive(c), positive(scale))


@method("weibull_min")
def logcdf(x, c, loc=0.0, scale=1.0):
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, log1mexp(-z ** c), -INF), positive(c), positive(scale))


@method("weibull_min")
def sf(x, c, loc=0.0, scale=1.0):
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, ew.exp(-z ** c), 1.0), positive(c), positive(scale))


@method("weibull_min")
def logsf(x, c, loc=0.0, scale=1.0):
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, -z ** c, 0.0), positive(c), positive(scale))


@method("weibull_min")
def ppf(q, c, loc=0.0, scale=1.0):
    """loc + scale (-log1p(-q))^(1 / c)"""
    return valid(loc + scale * (-ew.log1p(-q)) ** (1.0 / c), positive(c), positive(scale))


@method("weibull_min")
def entropy(c, loc=0.0, scale=1.0):
    """gamma (1 - 1 / c) - log c + 1 + log scale (gamma: Euler's)."""
    return entropy_of(EULER * (1.0 - 1.0 / c) - log_scale(c) + 1.0, loc, scale, positive(c))
