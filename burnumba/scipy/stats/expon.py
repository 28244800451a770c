"""``burnumba.scipy.stats.expon``: the exponential distribution (loc, scale): logpdf, pdf,
cdf, logcdf, sf, logsf, ppf, isf. Below loc the density is 0 (logpdf -inf)."""
from ...numpy import elementwise as ew
from ._common import eager, log_scale, positive, standard, traced, valid

INF = float("inf")


def _z(x, loc, scale):
    z = standard(x, loc, scale)
    inside = ew.greater_equal(z, 0.0)
    return inside, ew.where(inside, z, 0.0)


def logpdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("expon", "logpdf", x, loc, scale)
    inside, z = _z(x, loc, scale)
    return valid(ew.where(inside, -z - log_scale(scale), -INF), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("expon", "pdf", x, loc, scale)
    return ew.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    """-expm1(-z) from 0 on"""
    if not traced(x, loc, scale):
        return eager("expon", "cdf", x, loc, scale)
    inside, z = _z(x, loc, scale)
    return valid(ew.where(inside, -ew.expm1(-z), 0.0), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("expon", "logcdf", x, loc, scale)
    return ew.log(cdf(x, loc, scale))


def sf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("expon", "sf", x, loc, scale)
    inside, z = _z(x, loc, scale)
    return valid(ew.where(inside, ew.exp(-z), 1.0), positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("expon", "logsf", x, loc, scale)
    inside, z = _z(x, loc, scale)
    return valid(ew.where(inside, -z, 0.0), positive(scale))


def ppf(q, loc=0.0, scale=1.0):
    """loc - scale log1p(-q)"""
    if not traced(q, loc, scale):
        return eager("expon", "ppf", q, loc, scale)
    return valid(loc - scale * ew.log1p(-q), positive(scale))


def isf(q, loc=0.0, scale=1.0):
    if not traced(q, loc, scale):
        return eager("expon", "isf", q, loc, scale)
    return valid(loc - scale * ew.log(q), positive(scale))
