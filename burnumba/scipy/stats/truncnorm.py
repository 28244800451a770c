"""``burnumba.scipy.stats.truncnorm``: the normal distribution truncated to [a, b] (in
standard units, as scipy.stats.truncnorm (a, b, loc, scale)): logpdf, pdf, cdf, sf, logcdf,
logsf, with gradients to x, a, b, loc and scale. The mass between a and b is taken on the
side of 0 where it keeps its digits: ndtr(b) - ndtr(a) below 0, ndtr(-a) - ndtr(-b) above."""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_2PI, log_scale, method, positive, standard, support, valid

INF = float("inf")


def _log_mass(a, b):
    """log(ndtr(b) - ndtr(a)) for a < b"""
    upper = ew.greater(a, 0.0)
    lo = ew.where(upper, -b, a)
    hi = ew.where(upper, -a, b)
    return ew.log(special.ndtr(hi) - special.ndtr(lo))


def _z(x, a, b, loc, scale, closed=True):
    """(a <= z <= b, or a < z < b if not ``closed``; z there and the middle elsewhere)"""
    z = standard(x, loc, scale)
    lo, hi = (ew.greater_equal, ew.less_equal) if closed else (ew.greater, ew.less)
    return support(ew.logical_and(lo(z, a), hi(z, b)), z, 0.5 * (a + b))


@method("truncnorm")
def logpdf(x, a, b, loc=0.0, scale=1.0):
    """-z^2 / 2 - log(2 pi) / 2 - log(ndtr(b) - ndtr(a)) - log(scale) for a <= z <= b"""
    inside, z = _z(x, a, b, loc, scale)
    out = -0.5 * z * z - 0.5 * LOG_2PI - _log_mass(a, b) - log_scale(scale)
    return valid(ew.where(inside, out, -INF), ew.less(a, b), positive(scale))


@method("truncnorm")
def pdf(x, a, b, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, a, b, loc, scale))


@method("truncnorm")
def cdf(x, a, b, loc=0.0, scale=1.0):
    """(ndtr(z) - ndtr(a)) / (ndtr(b) - ndtr(a)) inside (a, b); exactly 0 from a down and 1
    from b up"""
    inside, z = _z(x, a, b, loc, scale, closed=False)
    out = (special.ndtr(z) - special.ndtr(a)) / ew.exp(_log_mass(a, b))
    out = ew.where(inside, out, ew.where(ew.greater_equal(standard(x, loc, scale), b), 1.0, 0.0))
    return valid(out, ew.less(a, b), positive(scale))


@method("truncnorm")
def sf(x, a, b, loc=0.0, scale=1.0):
    """(ndtr(-z) - ndtr(-b)) / mass inside (a, b) (accurate in the upper tail), exactly 1
    from a down and 0 from b up"""
    inside, z = _z(x, a, b, loc, scale, closed=False)
    out = (special.ndtr(-z) - special.ndtr(-b)) / ew.exp(_log_mass(a, b))
    out = ew.where(inside, out, ew.where(ew.less_equal(standard(x, loc, scale), a), 1.0, 0.0))
    return valid(out, ew.less(a, b), positive(scale))


@method("truncnorm")
def logcdf(x, a, b, loc=0.0, scale=1.0):
    """log mass(a, z) - log mass(a, b) inside (a, b), each mass on its accurate side of 0;
    -inf from a down and 0 from b up"""
    inside, z = _z(x, a, b, loc, scale, closed=False)
    out = ew.where(inside, _log_mass(a, z) - _log_mass(a, b),
                   ew.where(ew.greater_equal(standard(x, loc, scale), b), 0.0, -INF))
    return valid(out, ew.less(a, b), positive(scale))


@method("truncnorm")
def logsf(x, a, b, loc=0.0, scale=1.0):
    """log mass(z, b) - log mass(a, b) inside (a, b); 0 from a down and -inf from b up"""
    inside, z = _z(x, a, b, loc, scale, closed=False)
    out = ew.where(inside, _log_mass(z, b) - _log_mass(a, b),
                   ew.where(ew.less_equal(standard(x, loc, scale), a), 0.0, -INF))
    return valid(out, ew.less(a, b), positive(scale))
