"""``burnumba.scipy.stats.norm``: the normal distribution, as scipy.stats.norm (loc, scale).

logpdf is arithmetic; cdf / sf go through erfc (burnumba.scipy.special.ndtr), logcdf / logsf
through the log_ndtr row (accurate in both tails), ppf / isf through the ndtri row.
Gradients flow to x, loc and scale; scale <= 0 gives NaN, as scipy.

>>> import burnumba.scipy.stats.norm as norm
>>> bn.grad(lambda mu: norm.logpdf(1.0, mu, 2.0))(0.0)      # (x - mu) / scale^2 = 0.25
"""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_2PI, entropy_of, log_scale, method, positive, standard, valid


@method("norm")
def logpdf(x, loc=0.0, scale=1.0):
    z = standard(x, loc, scale)
    return valid(-0.5 * (z * z) - log_scale(scale) - 0.5 * LOG_2PI, positive(scale))


@method("norm")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("norm")
def cdf(x, loc=0.0, scale=1.0):
    return valid(special.ndtr(standard(x, loc, scale)), positive(scale))


@method("norm")
def logcdf(x, loc=0.0, scale=1.0):
    return valid(special.log_ndtr(standard(x, loc, scale)), positive(scale))


@method("norm")
def sf(x, loc=0.0, scale=1.0):
    return valid(special.ndtr(-standard(x, loc, scale)), positive(scale))


@method("norm")
def logsf(x, loc=0.0, scale=1.0):
    return valid(special.log_ndtr(-standard(x, loc, scale)), positive(scale))


@method("norm")
def ppf(q, loc=0.0, scale=1.0):
    return valid(loc + scale * special.ndtri(q), positive(scale))


@method("norm")
def isf(q, loc=0.0, scale=1.0):
    return valid(loc - scale * special.ndtri(q), positive(scale))


@method("norm")
def entropy(loc=0.0, scale=1.0):
    """0.5 (1 + log 2 pi) + log scale."""
    return entropy_of(0.5 * (1.0 + LOG_2PI), loc, scale)
