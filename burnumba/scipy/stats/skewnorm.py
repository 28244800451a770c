"""``burnumba.scipy.stats.skewnorm``: the skew-normal distribution (a, loc, scale), as
scipy.stats.skewnorm: logpdf and pdf, with gradients to x, a, loc and scale. (Its cdf needs
Owen's T function, which is not written here: scipy.stats.skewnorm.cdf on a traced value is
refused with an error naming the functions that are.)"""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG2, LOG_2PI, log_scale, method, positive, standard, valid


@method("skewnorm")
def logpdf(x, a, loc=0.0, scale=1.0):
    """log 2 + log phi(z) + log Phi(a z) - log scale: log_ndtr keeps the skewed tail"""
    z = standard(x, loc, scale)
    out = LOG2 - 0.5 * LOG_2PI - 0.5 * z * z + special.log_ndtr(a * z) - log_scale(scale)
    return valid(out, positive(scale))


@method("skewnorm")
def pdf(x, a, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, a, loc, scale))
