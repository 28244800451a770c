"""``burnumba.scipy.stats.gennorm``: the generalized normal distribution, as
scipy.stats.gennorm (beta, loc, scale): density beta / (2 gamma(1 / beta)) exp(-|z|^beta).
logpdf and pdf, with gradients to x, beta, loc and scale. For beta <= 1 the density has a kink
at z = 0, where the gradient in x is 0 (absolute's convention). (cdf needs gammainc's
derivative in its first argument, which is not defined: gennorm.cdf stays refused.)"""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG2, log_scale, method, positive, standard, valid


@method("gennorm")
def logpdf(x, beta, loc=0.0, scale=1.0):
    """log(beta) - log(2) - gammaln(1 / beta) - |z|^beta - log(scale)"""
    z = standard(x, loc, scale)
    out = (log_scale(beta) - LOG2 - special.gammaln(1.0 / beta) - ew.absolute(z) ** beta
           - log_scale(scale))
    return valid(out, positive(beta), positive(scale))


@method("gennorm")
def pdf(x, beta, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, beta, loc, scale))
