"""``burnumba.scipy.stats.laplace``: the Laplace distribution (loc, scale): logpdf, pdf,
cdf, logcdf, sf, logsf, ppf. Its density has a kink at x = loc: the gradient there is 0
(absolute's convention)."""
from ...numpy import elementwise as ew
from ._common import LOG2, entropy_of, log_scale, method, positive, standard, valid


@method("laplace")
def logpdf(x, loc=0.0, scale=1.0):
    z = standard(x, loc, scale)
    return valid(-ew.absolute(z) - LOG2 - log_scale(scale), positive(scale))


@method("laplace")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("laplace")
def cdf(x, loc=0.0, scale=1.0):
    """exp(z) / 2 below loc, 1 - exp(-z) / 2 above."""
    z = standard(x, loc, scale)
    half = 0.5 * ew.exp(-ew.absolute(z))
    return valid(ew.where(ew.less(z, 0.0), half, 1.0 - half), positive(scale))


@method("laplace")
def sf(x, loc=0.0, scale=1.0):
    z = standard(x, loc, scale)
    half = 0.5 * ew.exp(-ew.absolute(z))
    return valid(ew.where(ew.greater(z, 0.0), half, 1.0 - half), positive(scale))


@method("laplace")
def logcdf(x, loc=0.0, scale=1.0):
    z = standard(x, loc, scale)
    a = ew.absolute(z)
    return valid(ew.where(ew.less(z, 0.0), -a - LOG2, ew.log1p(-0.5 * ew.exp(-a))),
                 positive(scale))


@method("laplace")
def logsf(x, loc=0.0, scale=1.0):
    z = standard(x, loc, scale)
    a = ew.absolute(z)
    return valid(ew.where(ew.greater(z, 0.0), -a - LOG2, ew.log1p(-0.5 * ew.exp(-a))),
                 positive(scale))


@method("laplace")
def ppf(q, loc=0.0, scale=1.0):
    """loc - scale sign(q - 1/2) log(1 - 2 |q - 1/2|)."""
    d = q - 0.5
    return valid(loc - scale * ew.sign(d) * ew.log1p(-2.0 * ew.absolute(d)), positive(scale))


@method("laplace")
def entropy(loc=0.0, scale=1.0):
    """1 + log 2 + log scale."""
    return entropy_of(LOG2 + 1.0, loc, scale)
