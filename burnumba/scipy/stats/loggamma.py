"""``burnumba.scipy.stats.loggamma``: the log of a gamma variable (c, loc, scale), as
scipy.stats.loggamma: logpdf, pdf, cdf, sf, logcdf, logsf, with gradients to x, c, loc and
scale. The tails are the regularized incomplete gamma functions of e^z, whose derivative in c
is the gammainc_da row (as gamma.cdf's; a second derivative in c is refused)."""
from ...numpy import elementwise as ew
from .. import special
from ._common import log_scale, method, positive, standard, valid


@method("loggamma")
def logpdf(x, c, loc=0.0, scale=1.0):
    """c z - e^z - gammaln(c) - log scale"""
    z = standard(x, loc, scale)
    return valid(c * z - ew.exp(z) - special.gammaln(c) - log_scale(scale),
                 positive(c), positive(scale))


@method("loggamma")
def pdf(x, c, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, c, loc, scale))


@method("loggamma")
def cdf(x, c, loc=0.0, scale=1.0):
    """P(c, e^z), the regularized lower incomplete gamma function"""
    return valid(special.gammainc(c, ew.exp(standard(x, loc, scale))), positive(c),
                 positive(scale))


@method("loggamma")
def sf(x, c, loc=0.0, scale=1.0):
    """Q(c, e^z) = 1 - P(c, e^z), accurate in the upper tail"""
    return valid(special.gammaincc(c, ew.exp(standard(x, loc, scale))), positive(c),
                 positive(scale))


@method("loggamma")
def logcdf(x, c, loc=0.0, scale=1.0):
    return ew.log(cdf(x, c, loc, scale))


@method("loggamma")
def logsf(x, c, loc=0.0, scale=1.0):
    return ew.log(sf(x, c, loc, scale))
