"""``burnumba.scipy.stats.norm``: the normal distribution, as scipy.stats.norm (loc, scale).

logpdf is arithmetic; cdf / sf go through erfc (burnumba.scipy.special.ndtr), logcdf / logsf
through the log_ndtr row (accurate in both tails), ppf / isf through the ndtri row.
Gradients flow to x, loc and scale; scale <= 0 gives NaN, as scipy.

>>> import burnumba.scipy.stats.norm as norm
>>> bn.grad(lambda mu: norm.logpdf(1.0, mu, 2.0))(0.0)      # (x - mu) / scale^2 = 0.25
"""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_2PI, eager, log_scale, positive, standard, traced, valid


def logpdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("norm", "logpdf", x, loc, scale)
    z = standard(x, loc, scale)
    return valid(-0.5 * (z * z) - log_scale(scale) - 0.5 * LOG_2PI, positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("norm", "pdf", x, loc, scale)
    return ew.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("norm", "cdf", x, loc, scale)
    return valid(special.ndtr(standard(x, loc, scale)), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("norm", "logcdf", x, loc, scale)
    return valid(special.log_ndtr(standard(x, loc, scale)), positive(scale))


def sf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("norm", "sf", x, loc, scale)
    return valid(special.ndtr(-standard(x, loc, scale)), positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("norm", "logsf", x, loc, scale)
    return valid(special.log_ndtr(-standard(x, loc, scale)), positive(scale))


def ppf(q, loc=0.0, scale=1.0):
    if not traced(q, loc, scale):
        return eager("norm", "ppf", q, loc, scale)
    return valid(loc + scale * special.ndtri(q), positive(scale))


def isf(q, loc=0.0, scale=1.0):
    if not traced(q, loc, scale):
        return eager("norm", "isf", q, loc, scale)
    return valid(loc - scale * special.ndtri(q), positive(scale))
