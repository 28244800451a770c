"""``burnumba.scipy.stats.uniform``: the uniform distribution on [loc, loc + scale]: logpdf,
pdf, cdf, logcdf, sf, logsf, ppf, with gradients to loc and scale (and to x through cdf)."""
from ...numpy import elementwise as ew
from ._common import eager, log_scale, positive, standard, traced, valid

INF = float("inf")


def _inside(z):
    return ew.logical_and(ew.greater_equal(z, 0.0), ew.less_equal(z, 1.0))


def logpdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("uniform", "logpdf", x, loc, scale)
    z = standard(x, loc, scale)
    return valid(ew.where(_inside(z), -log_scale(scale), -INF), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("uniform", "pdf", x, loc, scale)
    return ew.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("uniform", "cdf", x, loc, scale)
    z = standard(x, loc, scale)
    return valid(ew.minimum(ew.maximum(z, 0.0), 1.0), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("uniform", "logcdf", x, loc, scale)
    return ew.log(cdf(x, loc, scale))


def sf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("uniform", "sf", x, loc, scale)
    return 1.0 - cdf(x, loc, scale)


def logsf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("uniform", "logsf", x, loc, scale)
    return ew.log(sf(x, loc, scale))


def ppf(q, loc=0.0, scale=1.0):
    if not traced(q, loc, scale):
        return eager("uniform", "ppf", q, loc, scale)
    inside = ew.logical_and(ew.greater_equal(q, 0.0), ew.less_equal(q, 1.0))
    return valid(loc + scale * q, positive(scale), inside)
