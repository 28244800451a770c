"""``burnumba.scipy.stats.geom``: the geometric distribution, as scipy.stats.geom (p, loc):
the number of trials up to the first success, k = 1, 2, ... logpmf, pmf, cdf, logcdf, sf,
logsf, with the gradient to p (k is data: integer counts). sf(k) = (1 - p)^floor(k)."""
from ...numpy import elementwise as ew
from .. import special
from ._common import log1mexp, method, valid

INF = float("inf")


def _shift(k, loc):
    return k - loc if not isinstance(loc, (int, float)) or loc != 0 else k


def _p_ok(p):
    return ew.logical_and(ew.greater(p, 0.0), ew.less_equal(p, 1.0))


@method("geom")
def logpmf(k, p, loc=0):
    """xlog1py(k - 1, -p) + log(p) for integer k >= 1 (-inf elsewhere)"""
    k = _shift(k, loc)
    ok = ew.logical_and(ew.greater_equal(k, 1.0), ew.equal(ew.floor(k), k))
    ks = ew.where(ok, k, 1.0)
    out = special.xlog1py(ks - 1.0, -p) + ew.log(p)
    return valid(ew.where(ok, out, -INF), _p_ok(p))


@method("geom")
def pmf(k, p, loc=0):
    return ew.exp(logpmf(k, p, loc))


def _logsf(k, p, loc):
    """(k >= 1, floor(k) log1p(-p)), log sf on the support (floor(k) held at 1 off it)"""
    k = _shift(k, loc)
    inside = ew.greater_equal(k, 1.0)
    ks = ew.where(inside, ew.floor(k), 1.0)
    return inside, ks * ew.log1p(-p)


@method("geom")
def cdf(k, p, loc=0):
    """1 - (1 - p)^floor(k) = -expm1(floor(k) log1p(-p))"""
    inside, ls = _logsf(k, p, loc)
    return valid(ew.where(inside, -ew.expm1(ls), 0.0), _p_ok(p))


@method("geom")
def logcdf(k, p, loc=0):
    inside, ls = _logsf(k, p, loc)
    return valid(ew.where(inside, log1mexp(ls), -INF), _p_ok(p))


@method("geom")
def sf(k, p, loc=0):
    inside, ls = _logsf(k, p, loc)
    return valid(ew.where(inside, ew.exp(ls), 1.0), _p_ok(p))


@method("geom")
def logsf(k, p, loc=0):
    inside, ls = _logsf(k, p, loc)
    return valid(ew.where(inside, ls, 0.0), _p_ok(p))

