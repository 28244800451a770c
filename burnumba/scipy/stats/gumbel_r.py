"""``burnumba.scipy.stats.gumbel_r``: the right-skewed Gumbel (maximum) distribution, as
scipy.stats.gumbel_r (loc, scale): logpdf, pdf, cdf, logcdf, sf, logsf, ppf, with gradients
to x, loc and scale. cdf = exp(-exp(-z))."""
from ...numpy import elementwise as ew
from ._common import EULER, entropy_of, log1mexp, log_scale, method, positive, standard, valid


@method("gumbel_r")
def logpdf(x, loc=0.0, scale=1.0):
    """-z - exp(-z) - log(scale)"""
    z = standard(x, loc, scale)
    return valid(-z - ew.exp(-z) - log_scale(scale), positive(scale))


@method("gumbel_r")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("gumbel_r")
def cdf(x, loc=0.0, scale=1.0):
    return valid(ew.exp(-ew.exp(-standard(x, loc, scale))), positive(scale))


@method("gumbel_r")
def logcdf(x, loc=0.0, scale=1.0):
    return valid(-ew.exp(-standard(x, loc, scale)), positive(scale))


@method("gumbel_r")
def sf(x, loc=0.0, scale=1.0):
    """-expm1(-exp(-z)), accurate in the upper tail"""
    return valid(-ew.expm1(-ew.exp(-standard(x, loc, scale))), positive(scale))


@method("gumbel_r")
def logsf(x, loc=0.0, scale=1.0):
    return valid(log1mexp(-ew.exp(-standard(x, loc, scale))), positive(scale))


@method("gumbel_r")
def ppf(q, loc=0.0, scale=1.0):
    """loc - scale log(-log q)"""
    return valid(loc - scale * ew.log(-ew.log(q)), positive(scale))


@method("gumbel_r")
def entropy(loc=0.0, scale=1.0):
    """Euler's gamma + 1 + log scale."""
    return entropy_of(EULER + 1.0, loc, scale)
