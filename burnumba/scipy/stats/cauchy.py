"""``burnumba.scipy.stats.cauchy``: the Cauchy distribution (loc, scale): logpdf, pdf, cdf,
sf, logcdf, logsf, ppf, isf."""
from ...numpy import elementwise as ew
from ._common import LOG2, LOG_PI, entropy_of, log_scale, method, positive, standard, valid

INV_PI = 0.3183098861837907


@method("cauchy")
def logpdf(x, loc=0.0, scale=1.0):
    """-log(pi) - log(scale) - log1p(z^2)"""
    z = standard(x, loc, scale)
    return valid(-LOG_PI - log_scale(scale) - ew.log1p(z * z), positive(scale))


@method("cauchy")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("cauchy")
def cdf(x, loc=0.0, scale=1.0):
    """1/2 + arctan(z) / pi"""
    return valid(0.5 + ew.arctan(standard(x, loc, scale)) * INV_PI, positive(scale))


@method("cauchy")
def sf(x, loc=0.0, scale=1.0):
    return valid(0.5 - ew.arctan(standard(x, loc, scale)) * INV_PI, positive(scale))


@method("cauchy")
def logcdf(x, loc=0.0, scale=1.0):
    return ew.log(cdf(x, loc, scale))


@method("cauchy")
def logsf(x, loc=0.0, scale=1.0):
    return ew.log(sf(x, loc, scale))


@method("cauchy")
def ppf(q, loc=0.0, scale=1.0):
    """loc + scale tan(pi (q - 1/2))"""
    return valid(loc + scale * ew.tan(3.141592653589793 * (q - 0.5)), positive(scale))


@method("cauchy")
def isf(q, loc=0.0, scale=1.0):
    return valid(loc - scale * ew.tan(3.141592653589793 * (q - 0.5)), positive(scale))


@method("cauchy")
def entropy(loc=0.0, scale=1.0):
    """log 4 pi + log scale."""
    return entropy_of(LOG_PI + 2.0 * LOG2, loc, scale)
