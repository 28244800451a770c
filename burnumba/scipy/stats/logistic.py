"""``burnumba.scipy.stats.logistic``: the logistic distribution (loc, scale): logpdf, pdf,
cdf, logcdf, sf, logsf, ppf, isf (through expit, log_expit and logit)."""
from ...numpy import elementwise as ew
from .. import special
from ._common import entropy_of, log_scale, method, positive, standard, valid


@method("logistic")
def logpdf(x, loc=0.0, scale=1.0):
    """-|z| - 2 log1p(exp(-|z|)) - log scale"""
    a = ew.absolute(standard(x, loc, scale))
    return valid(-a - 2.0 * ew.log1p(ew.exp(-a)) - log_scale(scale), positive(scale))


@method("logistic")
def pdf(x, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, loc, scale))


@method("logistic")
def cdf(x, loc=0.0, scale=1.0):
    return valid(special.expit(standard(x, loc, scale)), positive(scale))


@method("logistic")
def logcdf(x, loc=0.0, scale=1.0):
    return valid(special.log_expit(standard(x, loc, scale)), positive(scale))


@method("logistic")
def sf(x, loc=0.0, scale=1.0):
    return valid(special.expit(-standard(x, loc, scale)), positive(scale))


@method("logistic")
def logsf(x, loc=0.0, scale=1.0):
    return valid(special.log_expit(-standard(x, loc, scale)), positive(scale))


@method("logistic")
def ppf(q, loc=0.0, scale=1.0):
    return valid(loc + scale * special.logit(q), positive(scale))


@method("logistic")
def isf(q, loc=0.0, scale=1.0):
    return valid(loc - scale * special.logit(q), positive(scale))


@method("logistic")
def entropy(loc=0.0, scale=1.0):
    """2 + log scale."""
    return entropy_of(2.0, loc, scale)
