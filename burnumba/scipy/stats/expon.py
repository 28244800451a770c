"""``burnumba.scipy.stats.expon``: the exponential distribution (loc, scale): logpdf, pdf,
cdf, logcdf, sf, logsf, ppf, isf. Below loc the density is 0 (logpdf -inf)."""
from ...numpy import elementwise as ew
from ._common import entropy_of, log_scale, method, positive, standard, valid

INF = float("inf")


def _z(x, loc, scale):
    z = standard(x, loc, scale)
    inside = ew.greater_equal(z, 0.0)
    return inside, ew.where(inside, z, 0.0)


@method("expon")
def logpdf(x, loc=0.0, scale=1.0):
    inside, z = _z(x, loc, scale)
    return valid(ew.where(inside, -z - log_scale(scale), -INF), positive(scale))


@method("expon")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("expon")
def cdf(x, loc=0.0, scale=1.0):
    """-expm1(-z) from 0 on"""
    inside, z = _z(x, loc, scale)
    return valid(ew.where(inside, -ew.expm1(-z), 0.0), positive(scale))


@method("expon")
def logcdf(x, loc=0.0, scale=1.0):
    return ew.log(cdf(x, loc, scale))


@method("expon")
def sf(x, loc=0.0, scale=1.0):
    inside, z = _z(x, loc, scale)
    return valid(ew.where(inside, ew.exp(-z), 1.0), positive(scale))


@method("expon")
def logsf(x, loc=0.0, scale=1.0):
    inside, z = _z(x, loc, scale)
    return valid(ew.where(inside, -z, 0.0), positive(scale))


@method("expon")
def ppf(q, loc=0.0, scale=1.0):
    """loc - scale log1p(-q)"""
    return valid(loc - scale * ew.log1p(-q), positive(scale))


@method("expon")
def isf(q, loc=0.0, scale=1.0):
    return valid(loc - scale * ew.log(q), positive(scale))


@method("expon")
def entropy(loc=0.0, scale=1.0):
    """1 + log scale."""
    return entropy_of(1.0, loc, scale)
