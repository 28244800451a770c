"""``burnumba.scipy.stats.logistic``: the logistic distribution (loc, scale): logpdf, pdf,
cdf, logcdf, sf, logsf, ppf, isf (through expit, log_expit and logit)."""
from ...numpy import elementwise as ew
from .. import special
from ._common import eager, log_scale, positive, standard, traced, valid


def logpdf(x, loc=0.0, scale=1.0):
    """-|z| - 2 log1p(exp(-|z|)) - log scale"""
    if not traced(x, loc, scale):
        return eager("logistic", "logpdf", x, loc, scale)
    a = ew.absolute(standard(x, loc, scale))
    return valid(-a - 2.0 * ew.log1p(ew.exp(-a)) - log_scale(scale), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("logistic", "pdf", x, loc, scale)
    return ew.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("logistic", "cdf", x, loc, scale)
    return valid(special.expit(standard(x, loc, scale)), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("logistic", "logcdf", x, loc, scale)
    return valid(special.log_expit(standard(x, loc, scale)), positive(scale))


def sf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("logistic", "sf", x, loc, scale)
    return valid(special.expit(-standard(x, loc, scale)), positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    if not traced(x, loc, scale):
        return eager("logistic", "logsf", x, loc, scale)
    return valid(special.log_expit(-standard(x, loc, scale)), positive(scale))


def ppf(q, loc=0.0, scale=1.0):
    if not traced(q, loc, scale):
        return eager("logistic", "ppf", q, loc, scale)
    return valid(loc + scale * special.logit(q), positive(scale))


def isf(q, loc=0.0, scale=1.0):
    if not traced(q, loc, scale):
        return eager("logistic", "isf", q, loc, scale)
    return valid(loc - scale * special.logit(q), positive(scale))
