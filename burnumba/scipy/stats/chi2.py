"""``burnumba.scipy.stats.chi2``: the chi-squared distribution (df, loc, scale), the gamma
distribution with a = df / 2 and scale 2 scale: logpdf and pdf."""
from ...numpy import elementwise as ew
from . import gamma
from ._common import eager, traced


def logpdf(x, df, loc=0.0, scale=1.0):
    if not traced(x, df, loc, scale):
        return eager("chi2", "logpdf", x, df, loc, scale)
    return gamma.logpdf(x, df * 0.5, loc, scale * 2.0)


def pdf(x, df, loc=0.0, scale=1.0):
    if not traced(x, df, loc, scale):
        return eager("chi2", "pdf", x, df, loc, scale)
    return ew.exp(logpdf(x, df, loc, scale))
