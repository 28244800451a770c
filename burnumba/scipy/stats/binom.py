"""``burnumba.scipy.stats.binom``: the binomial distribution, as scipy.stats.binom (n, p,
loc): logpmf and pmf, with the gradient to p (and to n, through gammaln, as a continuous
parameter); cdf, sf, logcdf and logsf from the incomplete beta rows, with the gradient to p
(k is data, read through floor). Their derivative in n stays refused, although betainc's in
a and b is defined (#31): scipy's binom takes an integer n (its tails are NaN at any other
n, as here), so they are a step function of n with no derivative, and differentiating n is
an error that names it (hold it with bn.stop_gradient)."""
import numpy as np

from ..._errors import UnsupportedOpError, at_user_site
from ...numpy import elementwise as ew
from ...numpy._common import _builder
from .. import special
from ._common import method, traced


@method("binom")
def logpmf(k, n, p, loc=0):
    """gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1) + xlogy(k, p) + xlog1py(n - k, -p)
    for integer 0 <= k <= n (-inf elsewhere)."""
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    ok = ew.logical_and(ew.logical_and(ew.greater_equal(k, 0.0), ew.less_equal(k, n)),
                        ew.equal(ew.floor(k), k))
    ks = ew.where(ok, k, 0.0)
    comb = special.gammaln(n + 1.0) - special.gammaln(ks + 1.0) - special.gammaln(n - ks + 1.0)
    out = comb + special.xlogy(ks, p) + special.xlog1py(n - ks, -p)
    return ew.where(ok, out, -float("inf"))


@method("binom")
def pmf(k, n, p, loc=0):
    return ew.exp(logpmf(k, n, p, loc))


def _integer_n(n):
    """The tails' n, an integer in scipy (NaN at any other): differentiating it is an error
    that names it, not the gradient of the continuous betainc (see the module docstring)."""
    b = _builder(n)
    if b is not None and b.need[b.lift(n).node]:
        raise UnsupportedOpError(at_user_site(
            "binom.cdf / sf / logcdf / logsf: the derivative with respect to `n` is not "
            "defined: scipy.stats.binom takes an integer n (NaN at any other), so the tails "
            "are a step function of n. Hold `n` constant: pass it as data (outside argnums), "
            "or as bn.stop_gradient(n)"))


def _counts(k, n, p, loc, fn, below, above):
    """fn(floor(k) + 1, n - floor(k), p) for 0 <= floor(k) < n (k - loc), ``below`` under 0,
    ``above`` from n on; NaN for p outside [0, 1] or n not an integer >= 0 (scipy's)."""
    _integer_n(n)
    k = k - loc if traced(loc) or np.any(np.asarray(loc) != 0) else k
    kf = ew.floor(k)
    inside = ew.logical_and(ew.greater_equal(kf, 0.0), ew.less(kf, n))
    ks = ew.where(inside, kf, 0.0)
    nb = ew.where(inside, n - ks, 1.0)
    ps = ew.where(ew.logical_and(ew.greater_equal(p, 0.0), ew.less_equal(p, 1.0)), p, 0.5)
    out = ew.where(inside, fn(ks + 1.0, nb, ps),
                   ew.where(ew.less(kf, 0.0), below, above))
    ok = ew.logical_and(ew.logical_and(ew.greater_equal(p, 0.0), ew.less_equal(p, 1.0)),
                        ew.logical_and(ew.greater_equal(n, 0.0), ew.equal(ew.floor(n), n)))
    return ew.where(ok, out, float("nan"))


@method("binom")
def cdf(k, n, p, loc=0):
    """P(K <= k) = betaincc(floor(k) + 1, n - floor(k), p) for 0 <= k < n, 0 below, 1 from n
    on (scipy's bdtr).

    >>> bn.grad(lambda p: cdf(2.0, 5.0, p))(0.3)   # -n pmf(2; n - 1, p) = -1.323
    """
    return _counts(k, n, p, loc, special.betaincc, 0.0, 1.0)


@method("binom")
def sf(k, n, p, loc=0):
    """P(K > k) = betainc(floor(k) + 1, n - floor(k), p) (accurate in the upper tail)."""
    return _counts(k, n, p, loc, special.betainc, 1.0, 0.0)


@method("binom")
def logcdf(k, n, p, loc=0):
    return ew.log(cdf(k, n, p, loc))


@method("binom")
def logsf(k, n, p, loc=0):
    return ew.log(sf(k, n, p, loc))
