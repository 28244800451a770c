"""``burnumba.scipy.stats.f``: Fisher's F distribution, as scipy.stats.f (dfn, dfd, loc,
scale): logpdf and pdf, with gradients to x, dfn, dfd, loc and scale; 0 density below loc.
cdf, sf, logcdf and logsf from the incomplete beta rows, with gradients to x, dfn, dfd, loc and
scale (dfn and dfd enter betainc's a and b, the rows betainc_da / betainc_db, and its x); a
second derivative in dfn or dfd is an error that names betainc_da's or betainc_db's
argument."""
from ...numpy import elementwise as ew
from .. import special
from ._common import above, log_scale, method, positive, standard, valid

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


def _tails(x, dfn, dfd, loc, scale, upper):
    """With w = n z / (n z + m): I_w(n/2, m/2) (the cdf), or for the upper tail
    I_{1-w}(m/2, n/2) with 1 - w = m / (m + n z) computed as written (scipy's fdtr / fdtrc:
    no 1 - p cancellation); 0 / 1 below z = 0 and at z = +inf, NaN for NaN x."""
    zr = standard(x, loc, scale)
    inside, z = above(x, loc, scale, finite=True)
    n, m = dfn * 1.0, dfd * 1.0
    if upper:
        value = special.betainc(0.5 * m, 0.5 * n, m / (m + n * z))
    else:
        value = special.betainc(0.5 * n, 0.5 * m, n * z / (n * z + m))
    low, high = (1.0, 0.0) if upper else (0.0, 1.0)
    out = ew.where(inside, value, ew.where(ew.less(zr, 0.0), low, high))
    return valid(out, ew.equal(zr, zr), positive(dfn), positive(dfd), positive(scale))


@method("f")
def cdf(x, dfn, dfd, loc=0.0, scale=1.0):
    """betainc(dfn / 2, dfd / 2, dfn z / (dfn z + dfd)) for z = (x - loc) / scale >= 0.

    >>> bn.grad(lambda x: cdf(x, 3.0, 5.0))(1.5)     # the pdf at 1.5
    """
    return _tails(x, dfn, dfd, loc, scale, upper=False)


@method("f")
def sf(x, dfn, dfd, loc=0.0, scale=1.0):
    return _tails(x, dfn, dfd, loc, scale, upper=True)


@method("f")
def logcdf(x, dfn, dfd, loc=0.0, scale=1.0):
    return ew.log(cdf(x, dfn, dfd, loc, scale))


@method("f")
def logsf(x, dfn, dfd, loc=0.0, scale=1.0):
    return ew.log(sf(x, dfn, dfd, loc, scale))
