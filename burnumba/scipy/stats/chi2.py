"""``burnumba.scipy.stats.chi2``: the chi-squared distribution (df, loc, scale), the gamma
distribution with a = df / 2 and scale 2 scale: logpdf and pdf; cdf, logcdf, sf and logsf
through gamma's, with gradients to x, df, loc and scale (d/d df = gammainc's d/da / 2; a
second derivative in df is refused, an error that names the gamma shape ``a``)."""
from ...numpy import elementwise as ew
from . import gamma
from ._common import method


@method("chi2")
def logpdf(x, df, loc=0.0, scale=1.0):
    return gamma.logpdf(x, df * 0.5, loc, scale * 2.0)


@method("chi2")
def pdf(x, df, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, df, loc, scale))


@method("chi2")
def cdf(x, df, loc=0.0, scale=1.0):
    """gamma.cdf(x, df / 2, loc, 2 scale)."""
    return gamma.cdf(x, df * 0.5, loc, scale * 2.0)


@method("chi2")
def logcdf(x, df, loc=0.0, scale=1.0):
    """gamma.logcdf(x, df / 2, loc, 2 scale)."""
    return gamma.logcdf(x, df * 0.5, loc, scale * 2.0)


@method("chi2")
def sf(x, df, loc=0.0, scale=1.0):
    """gamma.sf(x, df / 2, loc, 2 scale)."""
    return gamma.sf(x, df * 0.5, loc, scale * 2.0)


@method("chi2")
def logsf(x, df, loc=0.0, scale=1.0):
    """gamma.logsf(x, df / 2, loc, 2 scale)."""
    return gamma.logsf(x, df * 0.5, loc, scale * 2.0)


@method("chi2")
def entropy(df, loc=0.0, scale=1.0):
    """gamma's with a = df / 2 and scale 2 scale (scipy's own formula, term by term)."""
    return gamma.entropy(df * 0.5, loc, scale * 2.0)
