"""``burnumba.scipy.stats.bernoulli``: the Bernoulli distribution, as scipy.stats.bernoulli
(p, loc): logpmf, pmf, cdf, sf, logcdf and logsf, with the gradient to p."""
import numpy as np

from ...numpy import elementwise as ew
from .. import special
from ._common import in_loc_shape, method, traced, valid


def _p_ok(p):
    return ew.logical_and(ew.greater_equal(p, 0.0), ew.less_equal(p, 1.0)) if traced(p) else True


@method("bernoulli")
def logpmf(k, p, loc=0):
    """xlogy(k, p) + xlog1py(1 - k, -p) for k in {0, 1} (-inf elsewhere)."""
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    ok = ew.logical_or(ew.equal(k, 0.0), ew.equal(k, 1.0))
    ks = ew.where(ok, k, 0.0)
    out = special.xlogy(ks, p) + special.xlog1py(1.0 - ks, -p)
    return valid(ew.where(ok, out, -float("inf")), _p_ok(p))


@method("bernoulli")
def pmf(k, p, loc=0):
    return ew.exp(logpmf(k, p, loc))


@method("bernoulli")
def cdf(k, p, loc=0):
    """0 below 0, 1 - p on [0, 1), 1 from 1 on."""
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    out = ew.where(ew.less(k, 0.0), 0.0, ew.where(ew.less(k, 1.0), 1.0 - p, 1.0))
    return valid(out, _p_ok(p))


@method("bernoulli")
def sf(k, p, loc=0):
    return 1.0 - cdf(k, p, loc)


@method("bernoulli")
def logcdf(k, p, loc=0):
    """-inf below 0, log(1 - p) on [0, 1), 0 from 1 on."""
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    out = ew.where(ew.less(k, 0.0), -float("inf"), ew.where(ew.less(k, 1.0), ew.log1p(-p), 0.0))
    return valid(out, _p_ok(p))


@method("bernoulli")
def logsf(k, p, loc=0):
    """0 below 0, log(p) on [0, 1), -inf from 1 on."""
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    out = ew.where(ew.less(k, 0.0), 0.0, ew.where(ew.less(k, 1.0), ew.log(p), -float("inf")))
    return valid(out, _p_ok(p))


@method("bernoulli")
def entropy(p, loc=0):
    """entr(p) + entr(1 - p) (in nats), NaN for p outside [0, 1]."""
    return in_loc_shape(valid(special.entr(p) + special.entr(1.0 - p), _p_ok(p)), loc)
