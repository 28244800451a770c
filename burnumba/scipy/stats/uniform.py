"""``burnumba.scipy.stats.uniform``: the uniform distribution on [loc, loc + scale]: logpdf,
pdf, cdf, logcdf, sf, logsf, ppf, with gradients to loc and scale (and to x through cdf)."""
from ...numpy import elementwise as ew
from ._common import entropy_of, log_scale, method, positive, standard, valid

INF = float("inf")


def _inside(z):
    return ew.logical_and(ew.greater_equal(z, 0.0), ew.less_equal(z, 1.0))


@method("uniform")
def logpdf(x, loc=0.0, scale=1.0):
    z = standard(x, loc, scale)
    return valid(ew.where(_inside(z), -log_scale(scale), -INF), positive(scale))


@method("uniform")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("uniform")
def cdf(x, loc=0.0, scale=1.0):
    z = standard(x, loc, scale)
    return valid(ew.minimum(ew.maximum(z, 0.0), 1.0), positive(scale))


@method("uniform")
def logcdf(x, loc=0.0, scale=1.0):
    return ew.log(cdf(x, loc, scale))


@method("uniform")
def sf(x, loc=0.0, scale=1.0):
    return 1.0 - cdf(x, loc, scale)


@method("uniform")
def logsf(x, loc=0.0, scale=1.0):
    return ew.log(sf(x, loc, scale))


@method("uniform")
def ppf(q, loc=0.0, scale=1.0):
    inside = ew.logical_and(ew.greater_equal(q, 0.0), ew.less_equal(q, 1.0))
    return valid(loc + scale * q, positive(scale), inside)


@method("uniform")
def entropy(loc=0.0, scale=1.0):
    """log scale."""
    return entropy_of(0.0, loc, scale)
