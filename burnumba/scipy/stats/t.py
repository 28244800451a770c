"""``burnumba.scipy.stats.t``: Student's t distribution, as scipy.stats.t (df, loc, scale):
logpdf and pdf, with gradients to x, df (through digamma), loc and scale. (cdf needs the
incomplete beta function, which is not a row yet: scipy.stats.t.cdf stays refused.)"""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_PI, eager, log_scale, positive, standard, traced, valid


def logpdf(x, df, loc=0.0, scale=1.0):
    """gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2 - log scale - (df+1)/2 log1p(z^2/df)"""
    if not traced(x, df, loc, scale):
        return eager("t", "logpdf", x, df, loc, scale)
    z = standard(x, loc, scale)
    half = (df + 1.0) * 0.5
    out = (special.gammaln(half) - special.gammaln(df * 0.5)
           - 0.5 * log_scale(df) - 0.5 * LOG_PI
           - log_scale(scale) - half * ew.log1p(z * z / df))
    return valid(out, positive(scale), positive(df))


def pdf(x, df, loc=0.0, scale=1.0):
    if not traced(x, df, loc, scale):
        return eager("t", "pdf", x, df, loc, scale)
    return ew.exp(logpdf(x, df, loc, scale))
