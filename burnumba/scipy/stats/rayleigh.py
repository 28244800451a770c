"""``burnumba.scipy.stats.rayleigh``: the Rayleigh distribution, as scipy.stats.rayleigh (loc,
scale): logpdf, pdf, cdf, logcdf, sf, logsf, ppf, with gradients to x, loc and scale; 0
density below loc. sf = exp(-z^2 / 2)."""
from ...numpy import elementwise as ew
from ._common import EULER, LOG2, above, entropy_of, log1mexp, log_scale, method, positive, valid

INF = float("inf")


@method("rayleigh")
def logpdf(x, loc=0.0, scale=1.0):
    """log(z) - z^2 / 2 - log(scale)"""
    inside, z = above(x, loc, scale, finite=True)
    return valid(ew.where(inside, ew.log(z) - 0.5 * z * z - log_scale(scale), -INF),
                 positive(scale))


@method("rayleigh")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("rayleigh")
def cdf(x, loc=0.0, scale=1.0):
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, -ew.expm1(-0.5 * z * z), 0.0), positive(scale))


@method("rayleigh")
def logcdf(x, loc=0.0, scale=1.0):
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, log1mexp(-0.5 * z * z), -INF), positive(scale))


@method("rayleigh")
def sf(x, loc=0.0, scale=1.0):
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, ew.exp(-0.5 * z * z), 1.0), positive(scale))


@method("rayleigh")
def logsf(x, loc=0.0, scale=1.0):
    inside, z = above(x, loc, scale)
    return valid(ew.where(inside, -0.5 * z * z, 0.0), positive(scale))


@method("rayleigh")
def ppf(q, loc=0.0, scale=1.0):
    """loc + scale sqrt(-2 log1p(-q))"""
    return valid(loc + scale * ew.sqrt(-2.0 * ew.log1p(-q)), positive(scale))


@method("rayleigh")
def entropy(loc=0.0, scale=1.0):
    """gamma / 2 + 1 - log(2) / 2 + log scale (gamma: Euler's)."""
    return entropy_of(EULER / 2.0 + 1.0 - 0.5 * LOG2, loc, scale)
