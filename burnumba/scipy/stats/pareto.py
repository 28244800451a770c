"""``burnumba.scipy.stats.pareto``: the Pareto distribution, as scipy.stats.pareto (b, loc,
scale): density b / z^(b + 1) for z >= 1. logpdf, pdf, cdf, logcdf, sf, logsf, ppf, with
gradients to x, b, loc and scale."""
from ...numpy import elementwise as ew
from ._common import above, entropy_of, log1mexp, log_scale, method, positive, valid

INF = float("inf")


def _logz(x, loc, scale):
    inside, z = above(x, loc, scale, low=1.0)
    return inside, ew.log(z)


@method("pareto")
def logpdf(x, b, loc=0.0, scale=1.0):
    """log(b) - (b + 1) log(z) - log(scale)"""
    inside, lz = _logz(x, loc, scale)
    out = log_scale(b) - (b + 1.0) * lz - log_scale(scale)
    return valid(ew.where(inside, out, -INF), positive(b), positive(scale))


@method("pareto")
def pdf(x, b, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, b, loc, scale))


@method("pareto")
def cdf(x, b, loc=0.0, scale=1.0):
    """1 - z^-b = -expm1(-b log z)"""
    inside, lz = _logz(x, loc, scale)
    return valid(ew.where(inside, -ew.expm1(-b * lz), 0.0), positive(b), positive(scale))


@method("pareto")
def logcdf(x, b, loc=0.0, scale=1.0):
    inside, lz = _logz(x, loc, scale)
    return valid(ew.where(inside, log1mexp(-b * lz), -INF), positive(b), positive(scale))


@method("pareto")
def sf(x, b, loc=0.0, scale=1.0):
    inside, lz = _logz(x, loc, scale)
    return valid(ew.where(inside, ew.exp(-b * lz), 1.0), positive(b), positive(scale))


@method("pareto")
def logsf(x, b, loc=0.0, scale=1.0):
    inside, lz = _logz(x, loc, scale)
    return valid(ew.where(inside, -b * lz, 0.0), positive(b), positive(scale))


@method("pareto")
def ppf(q, b, loc=0.0, scale=1.0):
    """loc + scale (1 - q)^(-1 / b)"""
    return valid(loc + scale * ew.exp(-ew.log1p(-q) / b), positive(b), positive(scale))


@method("pareto")
def entropy(b, loc=0.0, scale=1.0):
    """1 + 1 / b - log b + log scale."""
    return entropy_of(1.0 + 1.0 / b - log_scale(b), loc, scale, positive(b))
