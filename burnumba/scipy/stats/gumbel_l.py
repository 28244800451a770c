"""``burnumba.scipy.stats.gumbel_l``: the left-skewed Gumbel (minimum) distribution, as
scipy.stats.gumbel_l (loc, scale): logpdf, pdf, cdf, logcdf, sf, logsf, ppf, with gradients
to x, loc and scale. sf = exp(-exp(z)), the mirror image of gumbel_r."""
from ...numpy import elementwise as ew
from ._common import EULER, entropy_of, log1mexp, log_scale, method, positive, standard, valid


@method("gumbel_l")
def logpdf(x, loc=0.0, scale=1.0):
    """z - exp(z) - log(scale)"""
    z = standard(x, loc, scale)
    return valid(z - ew.exp(z) - log_scale(scale), positive(scale))


@method("gumbel_l")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("gumbel_l")
def cdf(x, loc=0.0, scale=1.0):
    return valid(-ew.expm1(-ew.exp(standard(x, loc, scale))), positive(scale))


@method("gumbel_l")
def logcdf(x, loc=0.0, scale=1.0):
    return valid(log1mexp(-ew.exp(standard(x, loc, scale))), positive(scale))


@method("gumbel_l")
def sf(x, loc=0.0, scale=1.0):
    return valid(ew.exp(-ew.exp(standard(x, loc, scale))), positive(scale))


@method("gumbel_l")
def logsf(x, loc=0.0, scale=1.0):
    return valid(-ew.exp(standard(x, loc, scale)), positive(scale))


@method("gumbel_l")
def ppf(q, loc=0.0, scale=1.0):
    """loc + scale log(-log1p(-q))"""
    return valid(loc + scale * ew.log(-ew.log1p(-q)), positive(scale))


@method("gumbel_l")
def entropy(loc=0.0, scale=1.0):
    """Euler's gamma + 1 + log scale."""
    return entropy_of(EULER + 1.0, loc, scale)
