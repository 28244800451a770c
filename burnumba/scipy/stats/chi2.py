"""``burnumba.scipy.stats.chi2``: the chi-squared distribution (df, loc, scale), the gamma
distribution with a = df / 2 and scale 2 scale: logpdf and pdf; cdf, logcdf, sf and logsf
through gamma's (no derivative in df: an error naming the gamma shape ``a``, as
gammainc's)."""
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


def cdf(x, df, loc=0.0, scale=1.0):
    """gamma.cdf(x, df / 2, loc, 2 scale)."""
    if not traced(x, df, loc, scale):
        return eager("chi2", "cdf", x, df, loc, scale)
    return gamma.cdf(x, df * 0.5, loc, scale * 2.0)


def logcdf(x, df, loc=0.0, scale=1.0):
    """gamma.logcdf(x, df / 2, loc, 2 scale)."""
    if not traced(x, df, loc, scale):
        return eager("chi2", "logcdf", x, df, loc, scale)
    return gamma.logcdf(x, df * 0.5, loc, scale * 2.0)


def sf(x, df, loc=0.0, scale=1.0):
    """gamma.sf(x, df / 2, loc, 2 scale)."""
    if not traced(x, df, loc, scale):
        return eager("chi2", "sf", x, df, loc, scale)
    return gamma.sf(x, df * 0.5, loc, scale * 2.0)


def logsf(x, df, loc=0.0, scale=1.0):
    """gamma.logsf(x, df / 2, loc, 2 scale)."""
    if not traced(x, df, loc, scale):
        return eager("chi2", "logsf", x, df, loc, scale)
    return gamma.logsf(x, df * 0.5, loc, scale * 2.0)
