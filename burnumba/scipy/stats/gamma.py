"""``burnumba.scipy.stats.gamma``: the gamma distribution, as scipy.stats.gamma (a, loc,
scale): logpdf and pdf, with gradients to x, a, loc and scale. -inf below loc, as scipy.
(cdf needs the incomplete gamma function, not a row yet.)"""
from ...numpy import elementwise as ew
from .. import special
from ._common import eager, log_scale, positive, standard, traced, valid


def logpdf(x, a, loc=0.0, scale=1.0):
    """xlogy(a - 1, z) - z - gammaln(a) - log scale for z = (x - loc) / scale >= 0."""
    if not traced(x, a, loc, scale):
        return eager("gamma", "logpdf", x, a, loc, scale)
    z = standard(x, loc, scale)
    inside = ew.greater_equal(z, 0.0)
    zs = ew.where(inside, z, 1.0)
    out = special.xlogy(a - 1.0, zs) - zs - special.gammaln(a) - log_scale(scale)
    return valid(ew.where(inside, out, -float("inf")), positive(scale), positive(a))


def pdf(x, a, loc=0.0, scale=1.0):
    if not traced(x, a, loc, scale):
        return eager("gamma", "pdf", x, a, loc, scale)
    return ew.exp(logpdf(x, a, loc, scale))
