"""``burnumba.scipy.stats.betabinom``: the beta-binomial distribution, as
scipy.stats.betabinom (n, a, b, loc): logpmf and pmf, with gradients to a and b (and to n,
through gammaln, as a continuous parameter)."""
from ...numpy import elementwise as ew
from .. import special
from ._common import method, positive, valid

INF = float("inf")


@method("betabinom")
def logpmf(k, n, a, b, loc=0):
    """log C(n, k) + betaln(k + a, n - k + b) - betaln(a, b) for integer 0 <= k <= n"""
    k = k - loc if not isinstance(loc, (int, float)) or loc != 0 else k
    ok = ew.logical_and(ew.logical_and(ew.greater_equal(k, 0.0), ew.less_equal(k, n)),
                        ew.equal(ew.floor(k), k))
    ks = ew.where(ok, k, 0.0)
    comb = special.gammaln(n + 1.0) - special.gammaln(ks + 1.0) - special.gammaln(n - ks + 1.0)
    out = comb + special.betaln(ks + a, n - ks + b) - special.betaln(a, b)
    return valid(ew.where(ok, out, -INF), positive(a), positive(b))


@method("betabinom")
def pmf(k, n, a, b, loc=0):
    return ew.exp(logpmf(k, n, a, b, loc))

