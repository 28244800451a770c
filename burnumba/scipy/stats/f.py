"""``burnumba.scipy.stats.f``: Fisher's F distribution, as scipy.stats.f (dfn, dfd, loc,
scale): logpdf and pdf, with gradients to x, dfn, dfd, loc and scale; 0 density below loc.
(Its cdf needs the incomplete beta function, which is not a row yet: f.cdf stays refused.)"""
from ...numpy import elementwise as ew
from .. import special
from ._common import above, log_scale, method, positive, valid

INF = float("inf")


@method("f")
def logpdf(x, dfn, dfd, loc=0.0, scale=1.0):
    """(n log n + m log m) / 2 + (n / 2 - 1) log z - (n + m) / 2 log(m + n z) - betaln(n / 2,
    m / 2) - log(scale), n = dfn, m = dfd, for z >= 0 (scipy's form)"""
    inside, z = above(x, loc, scale)
    n, m = dfn * 1.0, dfd * 1.0
    out = (0.5 * (special.xlogy(n, n) + special.xlogy(m, m)) + special.xlogy(0.5 * n - 1.0, z)
           - 0.5 * (n + m) * ew.log(m + n * z) - special.betaln(0.5 * n, 0.5 * m)
           - log_scale(scale))
    return valid(ew.where(inside, out, -INF), positive(dfn), positive(dfd), positive(scale))


@method("f")
def pdf(x, dfn, dfd, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, dfn, dfd, loc, scale))
