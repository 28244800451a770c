"""``burnumba.scipy.stats.laplace``: the Laplace distribution (loc, scale): logpdf, pdf,
cdf, logcdf, sf, logsf, ppf. Its density has a kink at x = loc: the gradient there is 0
(absolute's convention)."""
from ...numpy import elementwise as ew
from ._common import eager, log_scale, positive, standard, traced, valid

LOG2 = 0.6931471805599453


def logpdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("laplace", "logpdf", x, loc, scale)
    z = standard(x, loc, scale)
    return valid(-ew.absolute(z) - LOG2 - log_scale(scale), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("laplace", "pdf", x, loc, scale)
    return ew.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    """exp(z) / 2 below loc, 1 - exp(-z) / 2 above."""
    if not traced(x, loc, scale):
        return eager("laplace", "cdf", x, loc, scale)
    z = standard(x, loc, scale)
    half = 0.5 * ew.exp(-ew.absolute(z))
    return valid(ew.where(ew.less(z, 0.0), half, 1.0 - half), positive(scale))


def sf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("laplace", "sf", x, loc, scale)
    z = standard(x, loc, scale)
    half = 0.5 * ew.exp(-ew.absolute(z))
    return valid(ew.where(ew.greater(z, 0.0), half, 1.0 - half), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("laplace", "logcdf", x, loc, scale)
    z = standard(x, loc, scale)
    a = ew.absolute(z)
    return valid(ew.where(ew.less(z, 0.0), -a - LOG2, ew.log1p(-0.5 * ew.exp(-a))),
                 positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("laplace", "logsf", x, loc, scale)
    z = standard(x, loc, scale)
    a = ew.absolute(z)
    return valid(ew.where(ew.greater(z, 0.0), -a - LOG2, ew.log1p(-0.5 * ew.exp(-a))),
                 positive(scale))


def ppf(q, loc=0.0, scale=1.0):
    """loc - scale sign(q - 1/2) log(1 - 2 |q - 1/2|)."""
    if not traced(q, loc, scale):
        return eager("laplace", "ppf", q, loc, scale)
    d = q - 0.5
    return valid(loc - scale * ew.sign(d) * ew.log1p(-2.0 * ew.absolute(d)), positive(scale))
