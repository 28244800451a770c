"""``burnumba.scipy.stats.cauchy``: the Cauchy distribution (loc, scale): logpdf, pdf, cdf,
sf, logcdf, logsf, ppf, isf."""
from ...numpy import elementwise as ew
from ._common import LOG_PI, eager, log_scale, positive, standard, traced, valid

INV_PI = 0.3183098861837907


def logpdf(x, loc=0.0, scale=1.0):
    """-log(pi) - log(scale) - log1p(z^2)"""
    if not traced(x, loc, scale):
        return eager("cauchy", "logpdf", x, loc, scale)
    z = standard(x, loc, scale)
    return valid(-LOG_PI - log_scale(scale) - ew.log1p(z * z), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("cauchy", "pdf", x, loc, scale)
    return ew.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    """1/2 + arctan(z) / pi"""
    if not traced(x, loc, scale):
        return eager("cauchy", "cdf", x, loc, scale)
    return valid(0.5 + ew.arctan(standard(x, loc, scale)) * INV_PI, positive(scale))


def sf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("cauchy", "sf", x, loc, scale)
    return valid(0.5 - ew.arctan(standard(x, loc, scale)) * INV_PI, positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("cauchy", "logcdf", x, loc, scale)
    return ew.log(cdf(x, loc, scale))


def logsf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("cauchy", "logsf", x, loc, scale)
    return ew.log(sf(x, loc, scale))


def ppf(q, loc=0.0, scale=1.0):
    """loc + scale tan(pi (q - 1/2))"""
    if not traced(q, loc, scale):
        return eager("cauchy", "ppf", q, loc, scale)
    return valid(loc + scale * ew.tan(3.141592653589793 * (q - 0.5)), positive(scale))


def isf(q, loc=0.0, scale=1.0):
    if not traced(q, loc, scale):
        return eager("cauchy", "isf", q, loc, scale)
    return valid(loc - scale * ew.tan(3.141592653589793 * (q - 0.5)), positive(scale))
