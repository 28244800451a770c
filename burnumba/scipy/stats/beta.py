"""``burnumba.scipy.stats.beta``: the beta distribution, as scipy.stats.beta (a, b, loc,
scale): logpdf and pdf, with gradients to x, a, b, loc and scale; -inf outside [0, 1] (in z).
(cdf needs the incomplete beta function, not a row yet.)"""
from ...numpy import elementwise as ew
from .. import special
from ._common import eager, log_scale, positive, standard, traced, valid


def logpdf(x, a, b, loc=0.0, scale=1.0):
    """xlogy(a - 1, z) + xlog1py(b - 1, -z) - betaln(a, b) - log scale for 0 <= z <= 1."""
    if not traced(x, a, b, loc, scale):
        return eager("beta", "logpdf", x, a, b, loc, scale)
    z = standard(x, loc, scale)
    inside = ew.logical_and(ew.greater_equal(z, 0.0), ew.less_equal(z, 1.0))
    zs = ew.where(inside, z, 0.5)
    out = (special.xlogy(a - 1.0, zs) + special.xlog1py(b - 1.0, -zs) - special.betaln(a, b)
           - log_scale(scale))
    return valid(ew.where(inside, out, -float("inf")), positive(scale), positive(a), positive(b))


def pdf(x, a, b, loc=0.0, scale=1.0):
    if not traced(x, a, b, loc, scale):
        return eager("beta", "pdf", x, a, b, loc, scale)
    return ew.exp(logpdf(x, a, b, loc, scale))
